package trace

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jetgraph/jetgraph/engine"
)

// Kinds of ingested run payloads given to Apply.
const (
	KindPost  = "post"
	KindPatch = "patch"
)

// payload is a validated post or patch: nil or false means the field is absent or null.
type payload struct {
	id                                       string
	traceID, dotted, parent, name, runType   *string
	sessionID, sessionName, refExample, errs *string
	start, end                               *time.Time
	inputs, outputs, extra                   map[string]any
	events                                   []map[string]any
	hasEvents                                bool
	tags                                     []string
	hasTags                                  bool
	attachments                              map[string]Attachment
	segments                                 []Segment
}

// Apply merges one ingested post or patch into r, upsert-style. raw is the JSON object as received
// (unknown fields are ignored); start and end times may be ISO strings, with or without a zone, or
// epoch milliseconds. Post and patch of one run may come in either order, or merged in one post: a
// patch's non-null fields win over a post's whatever the order (extra is merged key by key, the
// patch's keys winning; tags are united), and null never erases a field. A later post overrides an
// earlier post's fields.
//
// It checks the payload before changing anything: id must be a UUID (and r's id, if r has one);
// trace_id, parent_run_id, session_id and reference_example_id UUIDs; dotted_order well-formed
// (segments YYYYMMDDTHHMMSSffffffZ<uuid> joined by "."), its last segment naming id, its first the
// trace_id and its second-to-last the parent_run_id when they are given; run_type one of RunTypes;
// inputs, outputs and extra objects; events a list of objects; tags a list of strings. A post, once
// merged, must have a name and a run_type, and with requireIDs (multipart ingestion) a trace_id and
// a dotted_order. Every problem is listed in the *engine.Error (Invalid) it returns, at
// ["body", field].
//
// A post fills what it implies: trace_id and parent_run_id from the dotted_order, a root's trace_id
// (its own id) and a root's dotted_order (from its start time) when the client sent none.
func Apply(r *Run, kind string, raw map[string]any, requireIDs bool) error {
	if kind != KindPost && kind != KindPatch {
		return engine.E(engine.Op("trace.apply"), engine.Invalid, fmt.Sprintf("kind %q is neither post nor patch", kind))
	}
	p, v := check(r, kind, raw, requireIDs)
	if err := v.Err("trace." + kind); err != nil {
		return err
	}
	merge(r, kind, p)
	return nil
}

func check(r *Run, kind string, raw map[string]any, requireIDs bool) (payload, engine.Violations) {
	var p payload
	var v engine.Violations
	bad := func(field, typ, msg string) { v.Add(typ, msg, "body", field) }
	str := func(field string) *string {
		switch x := raw[field].(type) {
		case nil:
			return nil
		case string:
			return &x
		default:
			bad(field, "string_type", fmt.Sprintf("must be a string, not %s", jsonType(x)))
			return nil
		}
	}
	uuid := func(field string) *string {
		s := str(field)
		if s == nil {
			return nil
		}
		if !IsUUID(*s) {
			bad(field, "uuid_parsing", fmt.Sprintf("%q is not a UUID", *s))
			return nil
		}
		lower := strings.ToLower(*s)
		if lower == *s {
			return s // (already lowercase, as jetgraph's own span ids are: no copy)
		}
		l := lower
		return &l
	}
	obj := func(field string) map[string]any {
		switch x := raw[field].(type) {
		case nil:
			return nil
		case map[string]any:
			return x
		default:
			bad(field, "dict_type", fmt.Sprintf("must be an object, not %s", jsonType(x)))
			return nil
		}
	}
	tm := func(field string) *time.Time {
		if raw[field] == nil {
			return nil
		}
		t, err := ParseTime(raw[field])
		if err != nil {
			bad(field, "datetime_parsing", err.Error())
			return nil
		}
		return &t
	}

	switch id := raw["id"].(type) {
	case nil:
		bad("id", "missing", "field required")
	case string:
		if !IsUUID(id) {
			bad("id", "uuid_parsing", fmt.Sprintf("%q is not a UUID", id))
		} else {
			p.id = strings.ToLower(id)
			if r.ID != "" && r.ID != p.id {
				bad("id", "value_error", fmt.Sprintf("%s is not the id of the run it is merged into (%s)", p.id, r.ID))
			}
		}
	default:
		bad("id", "string_type", fmt.Sprintf("must be a string, not %s", jsonType(id)))
	}
	p.traceID, p.parent = uuid("trace_id"), uuid("parent_run_id")
	p.sessionID, p.refExample = uuid("session_id"), uuid("reference_example_id")
	p.name, p.sessionName = str("name"), str("session_name")
	if p.sessionName != nil {
		if e := engine.ProjectNameViolation(*p.sessionName); e != nil {
			bad("session_name", e.Type, e.Msg)
			p.sessionName = nil
		}
	}
	if p.runType = str("run_type"); p.runType != nil && !slices.Contains(RunTypes, *p.runType) {
		bad("run_type", "enum", fmt.Sprintf("%q is not one of %s", *p.runType, strings.Join(RunTypes, ", ")))
		p.runType = nil
	}
	p.start, p.end = tm("start_time"), tm("end_time")
	p.inputs, p.outputs, p.extra = obj("inputs"), obj("outputs"), obj("extra")
	switch e := raw["error"].(type) {
	case nil:
	case string:
		p.errs = &e
	default: // an error object some clients send: keep it, as JSON text
		b, _ := json.Marshal(e)
		s := string(b)
		p.errs = &s
	}
	if ev, ok := raw["events"]; ok && ev != nil {
		list, isList := ev.([]any)
		if !isList {
			bad("events", "list_type", fmt.Sprintf("must be a list, not %s", jsonType(ev)))
		}
		p.hasEvents = isList
		for i, e := range list {
			m, ok := e.(map[string]any)
			if !ok {
				v.Add("dict_type", fmt.Sprintf("must be an object, not %s", jsonType(e)), "body", "events", i)
				continue
			}
			p.events = append(p.events, m)
		}
	}
	if tg, ok := raw["tags"]; ok && tg != nil {
		list, isList := tg.([]any)
		if !isList {
			bad("tags", "list_type", fmt.Sprintf("must be a list, not %s", jsonType(tg)))
		}
		p.hasTags = isList
		for i, t := range list {
			s, ok := t.(string)
			if !ok {
				v.Add("string_type", fmt.Sprintf("must be a string, not %s", jsonType(t)), "body", "tags", i)
				continue
			}
			p.tags = append(p.tags, s)
		}
	}
	if at := obj("attachments"); at != nil {
		p.attachments = map[string]Attachment{}
		for name, a := range at {
			m, ok := a.(map[string]any)
			if !ok {
				v.Add("dict_type", fmt.Sprintf("must be an object, not %s", jsonType(a)), "body", "attachments", name)
				continue
			}
			mime, _ := m["mime_type"].(string)
			digest, _ := m["digest"].(string)
			size, _ := number(m["size"])
			p.attachments[name] = Attachment{MimeType: mime, Size: int64(size), Digest: digest}
		}
	}
	if p.dotted = str("dotted_order"); p.dotted != nil {
		checkDotted(&p, bad)
	}

	if kind == KindPost {
		if p.name == nil && r.Name == "" && raw["name"] == nil {
			bad("name", "missing", "field required")
		}
		if p.runType == nil && r.RunType == "" && raw["run_type"] == nil {
			bad("run_type", "missing", "field required")
		}
		if requireIDs && p.traceID == nil && r.TraceID == "" && raw["trace_id"] == nil {
			bad("trace_id", "missing", "field required")
		}
		if requireIDs && p.dotted == nil && r.DottedOrder == "" && raw["dotted_order"] == nil {
			bad("dotted_order", "missing", "field required")
		}
	}
	return p, v
}

// checkDotted parses p.dotted and checks it against the ids of the same payload.
func checkDotted(p *payload, bad func(field, typ, msg string)) {
	segs, err := ParseDottedOrder(*p.dotted)
	if err != nil {
		bad("dotted_order", "value_error", err.Error())
		p.dotted = nil
		return
	}
	p.segments = segs
	if p.id != "" && segs[len(segs)-1].ID != p.id {
		bad("dotted_order", "value_error", fmt.Sprintf("the last segment names %s, not the run's id %s", segs[len(segs)-1].ID, p.id))
	}
	if p.traceID != nil && segs[0].ID != *p.traceID {
		bad("dotted_order", "value_error", fmt.Sprintf("the first segment names %s, not the trace_id %s", segs[0].ID, *p.traceID))
	}
	if p.parent != nil {
		switch {
		case len(segs) == 1:
			bad("dotted_order", "value_error", fmt.Sprintf("a root's dotted_order, but parent_run_id is %s", *p.parent))
		case segs[len(segs)-2].ID != *p.parent:
			bad("dotted_order", "value_error", fmt.Sprintf("the parent segment names %s, not the parent_run_id %s", segs[len(segs)-2].ID, *p.parent))
		}
	}
}

// merge writes a checked payload into r.
func merge(r *Run, kind string, p payload) {
	patched := map[string]bool{}
	for _, f := range r.Patched {
		patched[f] = true
	}
	// wins reports whether the payload's value of field replaces r's, and records a patch's.
	wins := func(field string) bool {
		if kind == KindPatch {
			patched[field] = true
			return true
		}
		return !patched[field]
	}
	setStr := func(field string, src *string, dst *string) {
		if src != nil && wins(field) {
			*dst = *src
		}
	}
	setPtr := func(field string, src *string, dst **string) {
		if src != nil && wins(field) {
			s := *src
			*dst = &s
		}
	}
	r.ID = p.id
	setStr("trace_id", p.traceID, &r.TraceID)
	setStr("dotted_order", p.dotted, &r.DottedOrder)
	setPtr("parent_run_id", p.parent, &r.ParentRunID)
	setStr("name", p.name, &r.Name)
	setStr("run_type", p.runType, &r.RunType)
	setStr("session_id", p.sessionID, &r.SessionID)
	setStr("session_name", p.sessionName, &r.SessionName)
	setPtr("reference_example_id", p.refExample, &r.ReferenceExampleID)
	setPtr("error", p.errs, &r.Error)
	if p.start != nil && wins("start_time") {
		r.StartTime = p.start.UTC()
	}
	if p.end != nil && wins("end_time") {
		t := p.end.UTC()
		r.EndTime = &t
	}
	if p.inputs != nil && wins("inputs") {
		r.Inputs = p.inputs
	}
	if p.outputs != nil && wins("outputs") {
		r.Outputs = p.outputs
	}
	if p.hasEvents && wins("events") {
		r.Events = p.events
		if r.Events == nil {
			r.Events = []map[string]any{}
		}
	}
	if p.extra != nil {
		if wins("extra") {
			r.Extra = deepMerge(r.Extra, p.extra)
		} else {
			r.Extra = deepMerge(p.extra, r.Extra)
		}
	}
	if p.hasTags {
		for _, t := range p.tags {
			if !slices.Contains(r.Tags, t) {
				r.Tags = append(r.Tags, t)
			}
		}
		if r.Tags == nil {
			r.Tags = []string{}
		}
	}
	for name, a := range p.attachments {
		if r.Attachments == nil {
			r.Attachments = map[string]Attachment{}
		}
		r.Attachments[name] = a
	}
	r.Patched = r.Patched[:0]
	for f := range patched {
		r.Patched = append(r.Patched, f)
	}
	slices.Sort(r.Patched)
	if len(r.Patched) == 0 {
		r.Patched = nil
	}
	if kind == KindPost {
		var segs []Segment
		if p.dotted != nil && *p.dotted == r.DottedOrder {
			segs = p.segments // (parsed by check already)
		} else {
			segs, _ = ParseDottedOrder(r.DottedOrder)
		}
		fillIn(r, segs)
	}
}

// fillIn completes the ids a post implies; segs are the segments of r's dotted order.
func fillIn(r *Run, segs []Segment) {
	if r.TraceID == "" {
		switch {
		case len(segs) > 0:
			r.TraceID = segs[0].ID
		case r.ParentRunID == nil:
			r.TraceID = r.ID
		}
	}
	if r.ParentRunID == nil && len(segs) > 1 {
		parent := segs[len(segs)-2].ID
		r.ParentRunID = &parent
	}
	if r.DottedOrder == "" && r.ParentRunID == nil && !r.StartTime.IsZero() {
		r.DottedOrder = FormatSegment(r.StartTime, r.ID)
	}
}

// deepMerge returns base with over's keys written over it, objects merged key by key. Null values
// of over do not erase base's. Neither argument is modified.
func deepMerge(base, over map[string]any) map[string]any {
	out := make(map[string]any, len(base)+len(over))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		if v == nil {
			if _, ok := out[k]; !ok {
				out[k] = nil
			}
			continue
		}
		bm, ok1 := out[k].(map[string]any)
		om, ok2 := v.(map[string]any)
		if ok1 && ok2 {
			out[k] = deepMerge(bm, om)
			continue
		}
		out[k] = v
	}
	return out
}

// jsonType names the JSON type of a decoded value, for error messages.
func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case float64, float32, int, int64, json.Number:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}
