package trace

import "time"

// fieldKind is the type of a filterable field, which decides the comparisons it takes.
type fieldKind int

const (
	fString fieldKind = iota
	fNumber
	fTime
	fBool
	fTags
	fError
	fPair
)

// fieldSpec describes a filterable field: its kind and how to read it (ok false is null).
type fieldSpec struct {
	kind     fieldKind
	str      func(*Run) (string, bool)
	num      func(*Run) (float64, bool)
	tm       func(*Run) (time.Time, bool)
	boolean  func(*Run) bool
	enum     []string
	duration bool
	family   string
	onKey    bool
}

func strField(f func(*Run) string) fieldSpec {
	return fieldSpec{kind: fString, str: func(r *Run) (string, bool) { s := f(r); return s, s != "" }}
}

func ptrStrField(f func(*Run) *string) fieldSpec {
	return fieldSpec{kind: fString, str: func(r *Run) (string, bool) {
		s := f(r)
		if s == nil {
			return "", false
		}
		return *s, true
	}}
}

func intField(f func(*Run) int) fieldSpec {
	return fieldSpec{kind: fNumber, num: func(r *Run) (float64, bool) { return float64(f(r)), true }}
}

func floatField(f func(*Run) *float64) fieldSpec {
	return fieldSpec{kind: fNumber, num: func(r *Run) (float64, bool) {
		if v := f(r); v != nil {
			return *v, true
		}
		return 0, false
	}}
}

func timeField(f func(*Run) *time.Time) fieldSpec {
	return fieldSpec{kind: fTime, tm: func(r *Run) (time.Time, bool) {
		if t := f(r); t != nil && !t.IsZero() {
			return *t, true
		}
		return time.Time{}, false
	}}
}

// fields are the filterable fields by name.
var fields = map[string]fieldSpec{}

func init() {
	fields = map[string]fieldSpec{
		"id":                   strField(func(r *Run) string { return r.ID }),
		"trace_id":             strField(func(r *Run) string { return r.TraceID }),
		"session_id":           strField(func(r *Run) string { return r.SessionID }),
		"dotted_order":         strField(func(r *Run) string { return r.DottedOrder }),
		"name":                 strField(func(r *Run) string { return r.Name }),
		"thread_id":            strField((*Run).ThreadID),
		"parent_run_id":        ptrStrField(func(r *Run) *string { return r.ParentRunID }),
		"reference_example_id": ptrStrField(func(r *Run) *string { return r.ReferenceExampleID }),
		"total_tokens":         intField(func(r *Run) int { return r.TotalTokens }),
		"prompt_tokens":        intField(func(r *Run) int { return r.PromptTokens }),
		"completion_tokens":    intField(func(r *Run) int { return r.CompletionTokens }),
		"total_cost":           floatField(func(r *Run) *float64 { return r.TotalCost }),
		"prompt_cost":          floatField(func(r *Run) *float64 { return r.PromptCost }),
		"completion_cost":      floatField(func(r *Run) *float64 { return r.CompletionCost }),
		"start_time":           timeField(func(r *Run) *time.Time { return &r.StartTime }),
		"end_time":             timeField(func(r *Run) *time.Time { return r.EndTime }),
		"first_token_time":     timeField(func(r *Run) *time.Time { return r.FirstTokenTime }),
		"is_root":              {kind: fBool, boolean: (*Run).IsRoot},
		"error":                {kind: fError},
		"tags":                 {kind: fTags},
		"metadata_key":         {kind: fPair, family: "metadata", onKey: true},
		"metadata_value":       {kind: fPair, family: "metadata"},
		"input_key":            {kind: fPair, family: "input", onKey: true},
		"input_value":          {kind: fPair, family: "input"},
		"output_key":           {kind: fPair, family: "output", onKey: true},
		"output_value":         {kind: fPair, family: "output"},
	}
	rt := strField(func(r *Run) string { return r.RunType })
	rt.enum = RunTypes
	fields["run_type"] = rt
	st := strField(func(r *Run) string { return r.Status })
	st.enum = []string{StatusSuccess, StatusError, StatusPending}
	fields["status"] = st
	lat := floatField(func(r *Run) *float64 { return r.Latency })
	lat.duration = true
	fields["latency"] = lat
}
