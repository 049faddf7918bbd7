package trace

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/jetgraph/jetgraph/engine"
)

// Feedback is a feedback object as stored and read back: the Feedback schema of the langsmith
// clients. Times are the server's: CreatedAt is when it was first recorded, ModifiedAt when it
// last changed.
type Feedback struct {
	ID                      string         `json:"id"`
	CreatedAt               engine.Time    `json:"created_at"`
	ModifiedAt              engine.Time    `json:"modified_at"`
	RunID                   *string        `json:"run_id"`
	TraceID                 *string        `json:"trace_id"`
	Key                     string         `json:"key"`
	Score                   any            `json:"score"` // a number, a bool or nil
	Value                   any            `json:"value"`
	Comment                 *string        `json:"comment"`
	Correction              any            `json:"correction"`
	FeedbackSource          map[string]any `json:"feedback_source"`
	SessionID               *string        `json:"session_id"`
	StartTime               *engine.Time   `json:"start_time"`
	ComparativeExperimentID *string        `json:"comparative_experiment_id"`
	FeedbackGroupID         *string        `json:"feedback_group_id"`
	Extra                   map[string]any `json:"extra"`
	FeedbackConfig          map[string]any `json:"feedback_config,omitempty"`
	Error                   *bool          `json:"error,omitempty"`
}

// Limits of a feedback object.
const (
	// MaxFeedbackKey is the longest feedback key, in bytes.
	MaxFeedbackKey = 256
	// MaxFeedbackComment is the longest comment, in bytes.
	MaxFeedbackComment = 64 << 10
)

// FeedbackUpdateFields are the fields a feedback update may change.
var FeedbackUpdateFields = []string{"score", "value", "correction", "comment", "feedback_config"}

// ParseFeedback reads a decoded feedback object as the clients send it (POST /feedback, a
// multipart part feedback.<id>). It returns the feedback with every valid field set and the
// problems of the others, located by field name: a command refuses the object when there are
// any, a fold (of events written before fields were checked) keeps what is valid. Fields the
// server sets (created_at, modified_at) and fields it does not know are ignored. The id is left
// empty when none is sent.
func ParseFeedback(obj map[string]any) (Feedback, []engine.FieldError) {
	var f Feedback
	var problems []engine.FieldError
	bad := func(field, typ, msg string) {
		problems = append(problems, engine.FieldError{Loc: []any{field}, Msg: msg, Type: typ})
	}
	uuidField := func(name string) *string {
		v, ok := obj[name]
		if !ok || v == nil {
			return nil
		}
		s, _ := v.(string)
		if !IsUUID(s) {
			bad(name, "uuid_parsing", "Input should be a valid UUID")
			return nil
		}
		s = strings.ToLower(s)
		return &s
	}
	if id := uuidField("id"); id != nil {
		f.ID = *id
	}
	f.RunID, f.TraceID, f.SessionID = uuidField("run_id"), uuidField("trace_id"), uuidField("session_id")
	f.ComparativeExperimentID, f.FeedbackGroupID = uuidField("comparative_experiment_id"), uuidField("feedback_group_id")
	if f.RunID == nil && f.TraceID != nil {
		f.RunID = f.TraceID // (the clients' rule: feedback on a trace is feedback on its root)
	}
	switch k, ok := obj["key"].(string); {
	case !ok || strings.TrimSpace(k) == "":
		bad("key", "missing", "Field required: a non-empty string")
	case len(k) > MaxFeedbackKey:
		bad("key", "string_too_long", fmt.Sprintf("String should have at most %d bytes", MaxFeedbackKey))
	default:
		f.Key = k
	}
	if f.RunID == nil && f.SessionID == nil && len(problems) == 0 {
		bad("run_id", "missing", "One of run_id, trace_id or session_id is required")
	}
	for _, name := range []string{"score", "value", "correction", "comment"} {
		if v, ok := obj[name]; ok {
			if p := f.set(name, v); p != "" {
				bad(name, "value_error", p)
			}
		}
	}
	if v, ok := obj["feedback_source"]; ok && v != nil {
		src, isObj := v.(map[string]any)
		typ := src["type"]
		if _, isStr := typ.(string); !isObj || typ != nil && !isStr {
			bad("feedback_source", "model_type", "Input should be an object with a string type")
		} else {
			f.FeedbackSource = src
			if typ == nil { // (the clients' Feedback schema wants one)
				f.FeedbackSource = map[string]any{"type": "api"}
				for k, v := range src {
					if v != nil || k != "type" {
						f.FeedbackSource[k] = v
					}
				}
			}
		}
	}
	for name, dst := range map[string]*map[string]any{"extra": &f.Extra, "feedback_config": &f.FeedbackConfig} {
		if v, ok := obj[name]; ok && v != nil {
			if m, isObj := v.(map[string]any); isObj {
				*dst = m
			} else {
				bad(name, "dict_type", "Input should be a valid dictionary")
			}
		}
	}
	if v, ok := obj["start_time"]; ok && v != nil {
		if t, err := ParseTime(v); err != nil {
			bad("start_time", "datetime_parsing", err.Error())
		} else {
			st := engine.At(t)
			f.StartTime = &st
		}
	}
	if v, ok := obj["error"]; ok && v != nil {
		if b, isBool := v.(bool); isBool {
			f.Error = &b
		} else {
			bad("error", "bool_type", "Input should be a valid boolean")
		}
	}
	sort.SliceStable(problems, func(i, j int) bool { return fmt.Sprint(problems[i].Loc) < fmt.Sprint(problems[j].Loc) })
	return f, problems
}

// set sets one of FeedbackUpdateFields from a decoded JSON value, and returns what is wrong with
// it ("" when nothing).
func (f *Feedback) set(name string, v any) string {
	switch name {
	case "score":
		switch s := v.(type) {
		case nil, bool:
			f.Score = s
		case float64:
			if math.IsInf(s, 0) || math.IsNaN(s) {
				return "Input should be a finite number"
			}
			f.Score = s
		default:
			return "Input should be a number, a boolean or null"
		}
	case "value":
		f.Value = v
	case "correction":
		f.Correction = v
	case "comment":
		switch s := v.(type) {
		case nil:
			f.Comment = nil
		case string:
			if len(s) > MaxFeedbackComment {
				return fmt.Sprintf("String should have at most %d bytes", MaxFeedbackComment)
			}
			f.Comment = &s
		default:
			return "Input should be a valid string"
		}
	case "feedback_config":
		m, ok := v.(map[string]any)
		if !ok && v != nil {
			return "Input should be a valid dictionary"
		}
		f.FeedbackConfig = m
	}
	return ""
}

// ApplyFeedbackUpdate sets the fields of an update (a subset of FeedbackUpdateFields; others are
// ignored) on f, and returns the problems of the invalid ones, located by field name; f is left
// unchanged then.
func ApplyFeedbackUpdate(f *Feedback, update map[string]any, at time.Time) []engine.FieldError {
	next := *f
	var problems []engine.FieldError
	for _, name := range FeedbackUpdateFields {
		if v, ok := update[name]; ok {
			if p := next.set(name, v); p != "" {
				problems = append(problems, engine.FieldError{Loc: []any{name}, Msg: p, Type: "value_error"})
			}
		}
	}
	if len(problems) > 0 {
		return problems
	}
	next.ModifiedAt = engine.At(at)
	*f = next
	return nil
}

// Source is the feedback's source type ("api", "model", ...), "" when it has none.
func (f *Feedback) Source() string {
	s, _ := f.FeedbackSource["type"].(string)
	return s
}

// numericScore is the score as a number: booleans count as 1 and 0.
func (f *Feedback) numericScore() (float64, bool) {
	switch s := f.Score.(type) {
	case float64:
		return s, true
	case bool:
		if s {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

// FeedbackStat summarises the feedback of one key: the clients' SessionFeedbackStat.
type FeedbackStat struct {
	N                      int            `json:"n"`
	Avg                    *float64       `json:"avg"`
	Stdev                  *float64       `json:"stdev"`
	Min                    *float64       `json:"min"`
	Max                    *float64       `json:"max"`
	Median                 *float64       `json:"median"`
	Errors                 int            `json:"errors"`
	Values                 map[string]int `json:"values"`
	Type                   string         `json:"type"`
	ContainsThreadFeedback bool           `json:"contains_thread_feedback"`
}

// FeedbackStats summarises feedback by key: how many, the mean, standard deviation (of the
// population), extremes and median of the numeric scores, how many were errors, and how often
// each string value was given. nil when there is no feedback.
func FeedbackStats(fs []Feedback) map[string]FeedbackStat {
	if len(fs) == 0 {
		return nil
	}
	scores := map[string][]float64{}
	out := map[string]FeedbackStat{}
	for i := range fs {
		f := &fs[i]
		st, ok := out[f.Key]
		if !ok {
			st = FeedbackStat{Values: map[string]int{}, Type: "PRIMARY"}
		}
		st.N++
		if f.Error != nil && *f.Error {
			st.Errors++
		}
		if s, ok := f.numericScore(); ok {
			scores[f.Key] = append(scores[f.Key], s)
		}
		if v, ok := f.Value.(string); ok {
			st.Values[v]++
		}
		out[f.Key] = st
	}
	for key, ss := range scores {
		st := out[key]
		slices.Sort(ss)
		sum := 0.0
		for _, s := range ss {
			sum += s
		}
		avg := sum / float64(len(ss))
		variance := 0.0
		for _, s := range ss {
			variance += (s - avg) * (s - avg)
		}
		stdev := math.Sqrt(variance / float64(len(ss)))
		median := ss[len(ss)/2]
		if len(ss)%2 == 0 {
			median = (ss[len(ss)/2-1] + ss[len(ss)/2]) / 2
		}
		st.Avg, st.Stdev, st.Min, st.Max, st.Median = &avg, &stdev, &ss[0], &ss[len(ss)-1], &median
		out[key] = st
	}
	return out
}
