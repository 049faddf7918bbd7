package traces

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"time"

	"go.etcd.io/bbolt"

	"github.com/jetgraph/jetgraph/engine/tracing/trace"
	"github.com/jetgraph/jetgraph/eventlog"
)

// preparedRun is what the trace projection makes of a run post or patch before its turn: the
// payload decoded, and for a post, the fold's result should the run have no record yet.
type preparedRun struct {
	err  error          // the payload could not be read: the fold fails with it
	id   string         // the run's id as sent
	raw  map[string]any // the payload, decoded
	text map[string][]byte
	// fresh is the run as the fold leaves it when it has no record yet; nil until prepared.
	fresh *freshRun
}

// freshRun is the fold of a payload into an empty run.
type freshRun struct {
	err error // trace.Apply refused the payload
	// run is the run after Apply, with its trace id, and for a post DeriveStored and the
	// project it gets when its project is not yet known by another id (see speculateProject).
	run trace.Run
	// session is the run's session id as Apply left it, before the project is resolved.
	session string
	record  []byte // run's stored record
}

// Prepare implements Preparer: it decodes a run's payload, and for a post builds the run and
// its record as they are when the run is new. Other events are left to the fold.
func (t *Traces) Prepare(e eventlog.Event) any {
	if e.Aggregate.Kind != TraceKind || (e.Type != RunPosted && e.Type != RunPatched) {
		return nil
	}
	p := t.readRun(e)
	if p.err == nil && e.Type == RunPosted {
		// A patch normally follows its post: its run is rarely new, so it is not prepared.
		p.prepareFresh(e, trace.KindPost, t.prices)
	}
	return p
}

// ApplyPrepared implements Preparer.
func (t *Traces) ApplyPrepared(tx *bbolt.Tx, e eventlog.Event, prepared any) error {
	if p, ok := prepared.(*preparedRun); ok {
		return t.applyRun(tx, e, p)
	}
	return t.Apply(tx, e)
}

// readRun decodes the payload of a run event, fetching it from the object store when it was
// offloaded there.
func (t *Traces) readRun(e eventlog.Event) *preparedRun {
	p := &preparedRun{}
	var blob *Blob
	if p.raw, p.text, blob, p.err = decodeRunData(e.Data); p.err != nil {
		return p
	}
	if blob != nil {
		d := RunData{Blob: blob}
		if t.blobs == nil {
			p.err = fmt.Errorf("run payload in blob %s, and no blob reader", d.Blob.Name)
			return p
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		raw, err := t.blobs(ctx, d.Blob.Name)
		if err != nil {
			p.err = fmt.Errorf("run payload blob %s: %w", d.Blob.Name, err)
			return p
		}
		p.raw, p.text = nil, nil
		if p.err = json.Unmarshal(raw, &p.raw); p.err != nil {
			return p
		}
	}
	if p.id, _ = p.raw["id"].(string); p.id == "" {
		p.err = errors.New("run without an id")
	}
	return p
}

// prepareFresh folds the payload into an empty run, as applyRun does when the run has no
// record: Apply and the trace id, then for a post the project and DeriveStored.
func (p *preparedRun) prepareFresh(e eventlog.Event, kind string, prices *trace.Prices) {
	f := &freshRun{}
	p.fresh = f
	if f.err = trace.Apply(&f.run, kind, p.raw, false); f.err != nil {
		return
	}
	if f.run.TraceID == "" {
		f.run.TraceID = e.Aggregate.ID
	}
	f.session = f.run.SessionID
	if kind == trace.KindPost {
		speculateProject(e.Aggregate.Tenant, &f.run)
		trace.DeriveStored(&f.run, prices)
	}
	f.record, f.err = encodeRunRecord(&f.run, textOf(f.run.Inputs, "inputs", p.source()), textOf(f.run.Outputs, "outputs", p.source()))
}

// speculateProject sets the project id resolveProject gives a run when no project holds its
// name under another id: its session id, else the id derived from its session name.
func speculateProject(tenant string, r *trace.Run) {
	if r.SessionID != "" {
		return
	}
	name := r.SessionName
	if name == "" {
		name = DefaultProject
	}
	r.SessionID = ProjectID(tenant, name)
}

// textSource is the JSON text of some fields of a run (a payload's, or a stored record's)
// beside the values decoded from it.
type textSource struct {
	values map[string]any
	text   map[string][]byte
}

func (p *preparedRun) source() textSource { return textSource{p.raw, p.text} }

// textOf returns the text of field from the first source m was decoded from, so that a run
// keeps the text it was given; nil when m comes from none (it is encoded then).
func textOf(m map[string]any, field string, sources ...textSource) []byte {
	if m == nil {
		return nil
	}
	for _, s := range sources {
		t, ok := s.text[field]
		if v, _ := s.values[field].(map[string]any); ok && v != nil && reflect.ValueOf(v).UnsafePointer() == reflect.ValueOf(m).UnsafePointer() {
			return t
		}
	}
	return nil
}
