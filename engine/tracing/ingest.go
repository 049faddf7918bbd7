package tracing

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/tracing/trace"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/projections/traces"
)

// rawFields are the run fields kept as the client's JSON text from parsing to the log: the big
// ones, which only the projection decodes. The others are decoded at once and checked by
// trace.Apply.
var rawFields = []string{"inputs", "outputs", "serialized"}

// Op is one post or patch of a run, as a request carried it.
type Op struct {
	// Kind is trace.KindPost or trace.KindPatch.
	Kind string
	// Where names the op in the request, for error reports: ["post.<id>"] (a multipart part),
	// ["post", 3] (a batch body's list), or nothing (a body holding one run).
	Where []any
	// Run holds the run's fields but rawFields, decoded.
	Run map[string]any
	// Raw holds rawFields, as sent.
	Raw map[string]json.RawMessage
	// Problems found while parsing the op; it is refused with them. Locations are relative to
	// the request body.
	Problems []engine.FieldError

	// text is the JSON object Run's fields were decoded from (textFields), when SetObject was
	// given one: the run's JSON on the log reuses it rather than encoding Run again.
	text       []byte
	textFields map[string]any
}

// NewOp builds the op of a run object whose fields are given undecoded.
func NewOp(kind string, where []any, fields map[string]json.RawMessage) *Op {
	op := &Op{Kind: kind, Where: where, Run: map[string]any{}, Raw: map[string]json.RawMessage{}}
	for name, raw := range fields {
		op.SetField(name, raw, append(append([]any{"body"}, where...), name))
	}
	return op
}

// SetFields sets the run's fields from a decoded JSON object (a run's main part), found at
// where. rawFields among them (a client that sent them in the main part) are kept as JSON.
func (op *Op) SetFields(fields map[string]any, where []any) {
	for name, v := range fields {
		if slices.Contains(rawFields, name) {
			raw, err := trace.EncodeValue(v)
			if err != nil {
				raw = []byte("invalid")
			}
			op.SetField(name, raw, append(append([]any{"body"}, where...), name))
			continue
		}
		op.Run[name] = v
	}
}

// SetObject sets the run's fields from a run's main part: its JSON text, an object, and the
// fields decoded from it (see SetFields). The text is kept, so that the run's JSON on the log is
// that text with the fields set since appended, unless one it has was changed.
func (op *Op) SetObject(text []byte, fields map[string]any, where []any) {
	op.SetFields(fields, where)
	op.text, op.textFields = nil, nil
	for _, name := range rawFields {
		if _, ok := fields[name]; ok {
			return // (moved to Raw: the text would hold them twice)
		}
	}
	if len(op.Run) == len(fields) { // (no field set before, by another part)
		op.text, op.textFields = bytes.TrimSpace(text), fields
	}
}

// SetField sets one field of the run from its JSON text, recording a problem at loc (the
// field's place in the request body) when it is not valid JSON of the right shape.
func (op *Op) SetField(name string, raw json.RawMessage, loc []any) {
	raw = bytes.TrimSpace(raw)
	if slices.Contains(rawFields, name) {
		if !trace.ValidJSON(raw) {
			op.Problems = append(op.Problems, engine.FieldError{Loc: loc, Msg: "not valid JSON", Type: "json_invalid"})
			return
		}
		if string(raw) == "null" {
			delete(op.Raw, name)
			return
		}
		if raw[0] != '{' {
			op.Problems = append(op.Problems, engine.FieldError{Loc: loc, Msg: "must be an object", Type: "dict_type"})
			return
		}
		op.Raw[name] = raw
		return
	}
	var v any
	if err := trace.DecodeValue(raw, &v); err != nil {
		op.Problems = append(op.Problems, engine.FieldError{Loc: loc, Msg: "not valid JSON", Type: "json_invalid"})
		return
	}
	op.Run[name] = v
}

// ID returns the op's run id as sent, "" when it has none.
func (op *Op) ID() string { s, _ := op.Run["id"].(string); return strings.ToLower(s) }

// attach adds an attachment's description to the run.
func (op *Op) attach(name string, a trace.Attachment) {
	op.text, op.textFields = nil, nil // (the map below may be the text's, changed in place)
	m, _ := op.Run["attachments"].(map[string]any)
	if m == nil {
		m = map[string]any{}
		op.Run["attachments"] = m
	}
	m[name] = map[string]any{"mime_type": a.MimeType, "size": a.Size, "digest": a.Digest}
}

// Feedback is one feedback object (a multipart part feedback.<id>).
type Feedback struct {
	Where []any
	ID    string // from the part name; the object's own "id" wins
	Raw   json.RawMessage
}

// Attachment is a file for a run (a multipart part attachment.<run_id>.<name>).
type Attachment struct {
	Where       []any
	RunID, Name string
	MimeType    string
	Data        []byte
}

// Batch is what one ingestion request carries.
type Batch struct {
	Ops         []*Op
	Feedback    []*Feedback
	Attachments []*Attachment
	// RequireIDs makes posts without trace_id or dotted_order invalid (multipart ingestion).
	RequireIDs bool
}

// Result says what became of a batch: how many items were appended, and every problem of the
// items that were refused (locations start with "body" and the item's place in the request).
type Result struct {
	Accepted int                 `json:"accepted"`
	Errors   []engine.FieldError `json:"errors,omitempty"`
}

// ingest is one Ingest call.
type ingest struct {
	s        *Service
	ctx      context.Context
	tenant   string
	now      time.Time
	caughtUp bool
	events   map[string][]eventlog.Event // by trace id, in request order
	order    []string
	res      Result
}

// Ingest validates a batch and appends every valid item to the trace stream, one event per run
// post or patch, grouped by trace into as few messages as fit. It answers once they are on the
// log, without waiting for the projection. Invalid items are reported in the Result (and
// logged) and the rest appended. When nothing could be accepted it returns an Invalid error
// listing every problem; when the log or object store fails, an Unavailable error (nothing of a
// failed trace is stored, and a retry is harmless: posts and patches are upserts).
func (s *Service) Ingest(ctx context.Context, b *Batch) (Result, error) {
	const op = "tracing.ingest"
	in := &ingest{s: s, ctx: ctx, tenant: engine.TenantFrom(ctx), now: s.clock().UTC(), events: map[string][]eventlog.Event{}}
	if err := in.attachments(b); err != nil {
		return Result{}, engine.E(engine.Op(op), engine.Unavailable, "The trace object store is unavailable.", err)
	}
	for _, o := range b.Ops {
		if err := in.run(o, b.RequireIDs); err != nil {
			return Result{}, err
		}
	}
	for _, f := range b.Feedback {
		if err := in.feedback(f); err != nil {
			return Result{}, err
		}
	}
	n, err := in.append()
	if err != nil {
		return Result{}, engine.E(engine.Op(op), engine.Unavailable, "The event log is unavailable.", err)
	}
	in.res.Accepted = n
	if len(in.res.Errors) > 0 {
		s.logger.Warn("tracing: items refused", "tenant", in.tenant, "accepted", n,
			"refused", len(in.res.Errors), "problems", in.res.Errors)
		if n == 0 {
			return in.res, engine.E(engine.Op(op), engine.Invalid, in.res.Errors)
		}
	}
	return in.res, nil
}

// EncodedRun is a run's post (or patch) as its JSON object, encoded by a producer in this
// process that builds it as Ingest's checks accept it (engine/tracing/selftrace, whose tests
// hold what it encodes to trace.Apply): an id, trace_id and dotted_order that agree, a name and
// a run type of trace.RunTypes, times as the API writes them, objects where objects belong.
type EncodedRun struct {
	TraceID string
	Patch   bool
	JSON    []byte
}

// IngestEncoded appends runs this process encoded itself, as Ingest appends the ops of a batch
// (one event each, grouped by trace into as few messages as fit, an oversized one by way of the
// object store) without decoding them to check them again: the same events Ingest appends for
// them, at a fraction of the cost (jetgraph traces every run it executes). It returns how many
// were appended; when the log or the object store fails, an Unavailable error.
func (s *Service) IngestEncoded(ctx context.Context, runs []EncodedRun) (int, error) {
	const op = "tracing.ingest"
	in := &ingest{s: s, ctx: ctx, tenant: engine.TenantFrom(ctx), now: s.clock().UTC(), events: map[string][]eventlog.Event{}}
	for _, r := range runs {
		kind := trace.KindPost
		if r.Patch {
			kind = trace.KindPatch
		}
		if err := in.queueJSON(r.JSON, kind, r.TraceID); err != nil {
			return 0, err
		}
	}
	n, err := in.append()
	if err != nil {
		return n, engine.E(engine.Op(op), engine.Unavailable, "The event log is unavailable.", err)
	}
	return n, nil
}

// refuse records problems of an item at where.
func (in *ingest) refuse(where []any, problems ...engine.FieldError) {
	for _, p := range problems {
		loc := append([]any{"body"}, where...)
		if len(p.Loc) > 0 && p.Loc[0] == "body" {
			loc = append(loc, p.Loc[1:]...)
		} else {
			loc = append(loc, p.Loc...)
		}
		in.res.Errors = append(in.res.Errors, engine.FieldError{Loc: loc, Msg: p.Msg, Type: p.Type})
	}
}

func problemsOf(err error) []engine.FieldError {
	var ee *engine.Error
	if errors.As(err, &ee) && len(ee.Fields) > 0 {
		return ee.Fields
	}
	return []engine.FieldError{{Msg: err.Error(), Type: "value_error"}}
}

// attachments stores each attachment and describes it on its run's op: the post of the run in
// this batch, else its patch, else a new patch.
func (in *ingest) attachments(b *Batch) error {
	for _, a := range b.Attachments {
		id := strings.ToLower(a.RunID)
		if !trace.IsUUID(id) {
			in.refuse(a.Where, engine.FieldError{Msg: fmt.Sprintf("%q is not a run id", a.RunID), Type: "uuid_parsing"})
			continue
		}
		digest, err := in.s.objects.Put(in.ctx, in.tenant, a.Data)
		if err != nil {
			return err
		}
		var target *Op
		for _, kind := range []string{trace.KindPost, trace.KindPatch} {
			for _, o := range b.Ops {
				if target == nil && o.Kind == kind && o.ID() == id {
					target = o
				}
			}
		}
		if target == nil {
			target = &Op{Kind: trace.KindPatch, Where: a.Where, Run: map[string]any{"id": id}, Raw: map[string]json.RawMessage{}}
			b.Ops = append(b.Ops, target)
		}
		target.attach(a.Name, trace.Attachment{MimeType: a.MimeType, Size: int64(len(a.Data)), Digest: digest})
	}
	return nil
}

// run checks one op, finds its trace, and queues its event. Only a failure of the projection
// to catch up is returned; the op's own problems are recorded.
func (in *ingest) run(o *Op, requireIDs bool) error {
	if len(o.Problems) > 0 {
		in.refuse(nil, o.Problems...)
		return nil
	}
	var scratch trace.Run
	if err := trace.Apply(&scratch, o.Kind, o.Run, requireIDs && o.Kind == trace.KindPost); err != nil {
		in.refuse(o.Where, problemsOf(err)...)
		return nil
	}
	traceID := scratch.TraceID
	if traceID == "" && scratch.DottedOrder != "" {
		if segs, err := trace.ParseDottedOrder(scratch.DottedOrder); err == nil {
			traceID = segs[0].ID
		}
	}
	if traceID == "" {
		var err error
		if traceID, err = in.findTrace(o, &scratch); err != nil {
			return err
		}
		if traceID == "" {
			return nil
		}
	}
	o.Run["id"], o.Run["trace_id"] = scratch.ID, traceID
	return in.queue(o, traceID)
}

// findTrace finds the trace of an op that names none: a patch's run, or a post's parent, must be
// in the projection. "" when it is not (the op is refused).
func (in *ingest) findTrace(o *Op, r *trace.Run) (string, error) {
	lookup := r.ID
	if o.Kind == trace.KindPost {
		lookup = *r.ParentRunID // a post without trace and dotted order has a parent (else it is a root)
	}
	var parent *trace.Run
	find := func() error {
		return in.s.read("tracing.ingest", func(v *traces.TraceView) error {
			run, ok, err := v.Run(in.tenant, lookup)
			if ok {
				parent = run
			}
			return err
		})
	}
	if err := find(); err != nil {
		return "", err
	}
	if parent == nil && !in.caughtUp {
		// The run may have been appended a moment ago: wait for the projection, once a batch.
		in.caughtUp = true
		ctx, cancel := context.WithTimeout(in.ctx, 10*time.Second)
		defer cancel()
		if err := in.s.proj.CatchUp(ctx); err != nil {
			return "", engine.E(engine.Op("tracing.ingest"), engine.Unavailable, "The trace projection is behind; retry.", err)
		}
		if err := find(); err != nil {
			return "", err
		}
	}
	if parent == nil {
		msg := fmt.Sprintf("run %s is unknown: a patch must carry trace_id (or dotted_order), or come after its post", lookup)
		if o.Kind == trace.KindPost {
			msg = fmt.Sprintf("parent run %s is unknown: send trace_id and dotted_order", lookup)
		}
		in.refuse(o.Where, engine.FieldError{Loc: []any{"trace_id"}, Msg: msg, Type: "missing"})
		return "", nil
	}
	if o.Kind == trace.KindPost {
		// The child's dotted order follows its parent's.
		if _, ok := o.Run["dotted_order"]; !ok && parent.DottedOrder != "" && !r.StartTime.IsZero() {
			o.Run["dotted_order"] = parent.DottedOrder + "." + trace.FormatSegment(r.StartTime, r.ID)
		}
	}
	return parent.TraceID, nil
}

// runJSON writes the op's run as one JSON object: its decoded fields, then the raw ones.
func runJSON(o *Op) ([]byte, error) {
	main, empty, err := o.mainJSON()
	if err != nil {
		return nil, err
	}
	if len(o.Raw) == 0 {
		return main, nil
	}
	buf := bytes.NewBuffer(make([]byte, 0, len(main)+rawSize(o)+64))
	buf.Write(main[:len(main)-1])
	first := empty
	for _, name := range rawFields {
		raw, ok := o.Raw[name]
		if !ok {
			continue
		}
		if !first {
			buf.WriteByte(',')
		}
		first = false
		fmt.Fprintf(buf, "%q:", name)
		buf.Write(raw)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// mainJSON encodes the op's decoded fields as a JSON object, and says whether it is empty: the
// text they were decoded from with the fields set since appended when there is one and no field
// of it changed, else Run encoded.
func (o *Op) mainJSON() ([]byte, bool, error) {
	if text := o.text; len(text) >= 2 && text[len(text)-1] == '}' {
		var added []string
		for k, v := range o.Run {
			tv, ok := o.textFields[k]
			if !ok {
				added = append(added, k)
			} else if !sameValue(v, tv) {
				added = nil
				text = nil
				break
			}
		}
		if text != nil && len(o.Run)-len(added) == len(o.textFields) {
			if len(added) == 0 {
				return text, len(o.Run) == 0, nil
			}
			slices.Sort(added)
			out := append(make([]byte, 0, len(text)+64*len(added)), text[:len(text)-1]...)
			for i, k := range added {
				if i > 0 || len(o.textFields) > 0 {
					out = append(out, ',')
				}
				name, err := trace.EncodeValue(k)
				if err != nil {
					return nil, false, err
				}
				v, err := trace.EncodeValue(o.Run[k])
				if err != nil {
					return nil, false, err
				}
				out = append(append(append(out, name...), ':'), v...)
			}
			return append(out, '}'), false, nil
		}
	}
	main, err := trace.EncodeValue(o.Run)
	return main, len(o.Run) == 0, err
}

// sameValue reports whether a field's value is still the one decoded from the op's text: the
// same string, number or boolean, or the very same map or list.
func sameValue(a, b any) bool {
	switch x := a.(type) {
	case string:
		y, ok := b.(string)
		return ok && x == y
	case map[string]any, []any:
		return reflect.ValueOf(a).Type() == reflect.ValueOf(b).Type() && reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
	case nil, float64, bool:
		return a == b
	}
	return false
}

func rawSize(o *Op) int {
	n := 0
	for _, r := range o.Raw {
		n += len(r) + 16
	}
	return n
}

// queue builds the op's event, moving an oversized payload to the object store.
func (in *ingest) queue(o *Op, traceID string) error {
	run, err := runJSON(o)
	if err != nil {
		in.refuse(o.Where, engine.FieldError{Msg: err.Error(), Type: "value_error"})
		return nil
	}
	return in.queueJSON(run, o.Kind, traceID)
}

// queueJSON builds the event of a run's JSON object posted or patched (kind), moving an
// oversized payload to the object store.
func (in *ingest) queueJSON(run []byte, kind, traceID string) error {
	var data []byte
	if len(run) > in.s.maxEvent {
		digest, err := in.s.objects.Put(in.ctx, in.tenant, run)
		if err != nil {
			return engine.E(engine.Op("tracing.ingest"), engine.Unavailable, "The trace object store is unavailable.", err)
		}
		data, _ = json.Marshal(traces.RunData{Blob: &traces.Blob{Name: objectName(in.tenant, digest), Size: int64(len(run))}})
	} else {
		data = make([]byte, 0, len(run)+8)
		data = append(append(append(data, `{"run":`...), run...), '}')
	}
	typ := traces.RunPosted
	if kind == trace.KindPatch {
		typ = traces.RunPatched
	}
	in.add(traceID, typ, data)
	return nil
}

func (in *ingest) add(traceID, typ string, data []byte) {
	if _, ok := in.events[traceID]; !ok {
		in.order = append(in.order, traceID)
	}
	in.events[traceID] = append(in.events[traceID], eventlog.Event{
		ID: eventlog.NewID(in.now), Type: typ, Aggregate: traceAggregate(in.tenant, traceID),
		Time: in.now, Version: eventlog.SchemaVersion, Data: data,
	})
}

// feedback checks a feedback object and queues it on its trace (see feedbackEvent).
func (in *ingest) feedback(f *Feedback) error {
	var obj map[string]any
	if err := json.Unmarshal(f.Raw, &obj); err != nil || obj == nil {
		in.refuse(f.Where, engine.FieldError{Msg: "must be a JSON object", Type: "dict_type"})
		return nil
	}
	e, _, problems := in.s.feedbackEvent(in.tenant, obj, f.ID, in.now)
	if len(problems) > 0 {
		in.refuse(f.Where, problems...)
		return nil
	}
	in.add(e.Aggregate.ID, e.Type, e.Data)
	return nil
}

// maxPerMessage is the largest number of events eventlog packs in one append.
const maxPerMessage = 1000

// append appends the queued events in messages of at most maxMessage bytes and maxPerMessage
// events, the traces one after the other, each trace's events in order: the events of several
// traces share a message (eventlog.PackAcross), so that a batch of many small traces (a client's
// /runs/batch, the self-trace of the runs that ended together) costs a few messages rather than
// one a trace. It returns how many events were appended; it stops at the first append that
// fails.
func (in *ingest) append() (int, error) {
	if len(in.order) == 0 {
		return 0, nil
	}
	events := in.events[in.order[0]]
	if len(in.order) > 1 {
		events = nil
		for _, traceID := range in.order {
			events = append(events, in.events[traceID]...)
		}
	}
	n := 0
	for len(events) > 0 {
		chunk := in.chunk(events)
		batch := make([]eventlog.Pending, len(chunk))
		for i, e := range chunk {
			batch[i] = eventlog.Pending{Event: e, Expect: eventlog.Any}
		}
		if _, err := in.s.log.AppendBatch(in.ctx, batch); err != nil {
			return n, err
		}
		n += len(chunk)
		events = events[len(chunk):]
	}
	return n, nil
}

// chunk returns the first events that fit in one message.
func (in *ingest) chunk(events []eventlog.Event) []eventlog.Event {
	size := 0
	for i, e := range events {
		size += len(e.Data) + 256 // the envelope
		if i > 0 && (size > in.s.maxMessage || i == maxPerMessage) {
			return events[:i]
		}
	}
	return events
}
