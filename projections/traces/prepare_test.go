package traces_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/jetgraph/jetgraph/engine/tracing/trace"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
	"github.com/jetgraph/jetgraph/projections"
	"github.com/jetgraph/jetgraph/projections/traces"
)

// plain hides a projection's Prepare: the projector folds its events with Apply alone.
type plain struct{ projections.Projection }

// prepareScript is a history that puts the prepared fold (a post of a run that has no record
// yet) beside every case where what was prepared does not hold: a run posted twice, a patch
// before and after its post in one message, a project whose name another id holds, a child
// before its parent, a payload Apply refuses. Data is written as text, key order and spacing
// as a client sent them.
func prepareScript() [][]eventlog.Event {
	t0 := time.Date(2026, 11, 22, 11, 0, 0, 0, time.UTC)
	uid := func(n int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", n) }
	i := 0
	ev := func(kind, id, typ, data string) eventlog.Event {
		i++
		return eventlog.Event{ID: fmt.Sprintf("01JU%022d", i), Type: typ, Version: 1, Data: []byte(data),
			Aggregate: eventlog.Aggregate{Kind: kind, Tenant: "default", ID: id}, Time: t0.Add(time.Duration(i) * time.Second)}
	}
	dotted := func(ids ...int) string {
		s := ""
		for k, id := range ids {
			if k > 0 {
				s += "."
			}
			s += trace.FormatSegment(t0.Add(time.Duration(k)*time.Millisecond), uid(id))
		}
		return s
	}
	post := func(root int, ids []int, fields string) eventlog.Event {
		id := uid(ids[len(ids)-1])
		parent := ""
		if len(ids) > 1 {
			parent = fmt.Sprintf(`"parent_run_id":%q,`, uid(ids[len(ids)-2]))
		}
		return ev("trace", uid(root), traces.RunPosted, fmt.Sprintf(`{"run":{"id":%q,"trace_id":%q,%s"dotted_order":%q,%s}}`,
			id, uid(root), parent, dotted(ids...), fields))
	}
	patch := func(root, id int, fields string) eventlog.Event {
		return ev("trace", uid(root), traces.RunPatched, fmt.Sprintf(`{"run":{"id":%q,"trace_id":%q,%s}}`, uid(id), uid(root), fields))
	}
	llm := `"name":"model","run_type":"llm","start_time":"2026-11-22T11:00:00.001Z","session_name":"gamma",` +
		`"extra":{"metadata":{"ls_provider":"openai","ls_model_name":"gpt-4o-mini"}},` +
		`"inputs": {"z": 1, "messages": [{"role": "user", "content": "hi"}]},` +
		`"outputs": {"role":"assistant","content":"hello","usage_metadata":{"input_tokens":7,"output_tokens":2,"total_tokens":9}}`
	return [][]eventlog.Event{
		{
			// gamma is held by an id that is not the one derived from its name.
			ev("trace_project", uid(90), traces.ProjectCreated, `{"name":"gamma"}`),
		},
		{
			post(10, []int{10}, `"name":"agent","run_type":"chain","start_time":"2026-11-22T11:00:00Z","session_name":"gamma","inputs":{"q":"hi"}`),
			post(10, []int{10, 11}, llm),
			post(10, []int{10, 11}, llm+`,"tags":["again"]`), // posted twice
			patch(10, 11, `"end_time":"2026-11-22T11:00:01Z","outputs":{"content":"bye","usage_metadata":{"input_tokens":1,"output_tokens":1,"total_tokens":2}}`),
			patch(10, 10, `"end_time":"2026-11-22T11:00:02Z"`),
		},
		{
			// A patch before its post, in one message; the child before its parent.
			patch(20, 21, `"end_time":"2026-11-22T11:00:01Z","extra":{"metadata":{"patched":true}}`),
			post(20, []int{20, 21}, `"name":"step","run_type":"tool","start_time":"2026-11-22T11:00:00.001Z","session_id":"`+uid(91)+`","end_time":null`),
			post(20, []int{20}, `"name":"root","run_type":"chain","start_time":"2026-11-22T11:00:00Z","session_id":"`+uid(91)+`"`),
		},
		{
			post(30, []int{30}, `"name":"alone","run_type":"prompt","start_time":"2026-11-22T11:00:00Z","outputs":{}`),
		},
	}
}

// TestTracesPreparedEqualsPlain folds the same history with Prepare and without it, live
// (a message a transaction) and replayed (many messages a transaction): every record is equal.
func TestTracesPreparedEqualsPlain(t *testing.T) {
	l := eventlogtest.Open(t)
	ctx := context.Background()
	dir := t.TempDir()
	liveDB := openDB(t, filepath.Join(dir, "live.db"))
	live := traces.NewTraces(liveDB, nil, nil)
	p := projections.NewProjector(liveDB, l, eventlog.TraceStream, live)
	run(t, p)
	var last uint64
	for _, msg := range append(prepareScript(), traceScriptMessages()...) {
		batch := make([]eventlog.Pending, len(msg))
		for i, e := range msg {
			batch[i] = eventlog.Pending{Event: e}
		}
		var err error
		if last, err = l.AppendBatch(ctx, batch); err != nil {
			t.Fatal(err)
		}
		waitFor(t, p, last)
	}
	if err := p.Halted(); err != nil {
		t.Fatal(err)
	}
	want := dump(t, liveDB, live)
	for _, c := range []struct {
		name string
		proj func(db *projections.DB) (projections.Projection, *traces.Traces)
	}{
		{"prepared", func(db *projections.DB) (projections.Projection, *traces.Traces) {
			tr := traces.NewTraces(db, nil, nil)
			return tr, tr
		}},
		{"plain", func(db *projections.DB) (projections.Projection, *traces.Traces) {
			tr := traces.NewTraces(db, nil, nil)
			return plain{tr}, tr
		}},
	} {
		db := openDB(t, filepath.Join(dir, c.name+".db"))
		pr, tr := c.proj(db)
		p2 := projections.NewProjector(db, l, eventlog.TraceStream, pr)
		run(t, p2)
		waitFor(t, p2, last)
		if got := dump(t, db, tr); got != want {
			t.Errorf("%s replay differs from the live projection:\n%s\nlive:\n%s", c.name, got, want)
		}
	}
	// The run keeps the client's text of its inputs, and reads decode it.
	_ = liveDB.View(func(tx *bbolt.Tx) error {
		rec := tx.Bucket([]byte("trace_runs")).Get([]byte("default\x0000000000-0000-4000-8000-000000000011"))
		text, _, err := traces.TraceRecordText("trace_runs", rec)
		if err != nil || !strings.Contains(text, `inputs: {"z": 1, "messages": [{"role": "user", "content": "hi"}]}`) {
			t.Errorf("run 11 record: %v\n%s", err, text)
		}
		return nil
	})
	_ = live.View(func(v *traces.TraceView) error {
		r, ok, err := v.Run("default", "00000000-0000-4000-8000-000000000011")
		if err != nil || !ok {
			t.Fatalf("run 11: %v %v", ok, err)
		}
		if r.TotalTokens != 2 || r.Outputs["content"] != "bye" || len(r.InputMessages) != 1 || r.SessionID != "00000000-0000-4000-8000-000000000090" {
			t.Errorf("run 11: tokens %d, outputs %v, input messages %v, project %s", r.TotalTokens, r.Outputs, r.InputMessages, r.SessionID)
		}
		// The refused post is skipped alone, not the message it came in.
		if r, ok, _ := v.Run("default", "00000000-0000-4000-8000-000000000030"); !ok || r.Name != "alone" {
			t.Errorf("run 30 after a refused post in its message: %v %+v", ok, r)
		}
		return nil
	})
}

// traceScriptMessages is traceScript, one event a message.
func traceScriptMessages() [][]eventlog.Event {
	var out [][]eventlog.Event
	for _, e := range traceScript() {
		out = append(out, []eventlog.Event{e})
	}
	return out
}
