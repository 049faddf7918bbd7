package tracing

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/engine/tracing/trace"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/projections/traces"
)

func TestRunJSONSplicesRawFields(t *testing.T) {
	for _, c := range []struct {
		run  map[string]any
		raw  map[string]string
		want string
	}{
		{map[string]any{"id": "a"}, nil, `{"id":"a"}`},
		{map[string]any{"id": "a"}, map[string]string{"outputs": `{"o":1}`, "inputs": `{"i":[1,2]}`}, `{"id":"a","inputs":{"i":[1,2]},"outputs":{"o":1}}`},
		{map[string]any{}, map[string]string{"inputs": `{}`}, `{"inputs":{}}`},
	} {
		o := NewOp(trace.KindPost, nil, nil)
		o.Run = c.run
		for k, v := range c.raw {
			o.SetField(k, json.RawMessage(v), nil)
		}
		got, err := runJSON(o)
		if err != nil || string(got) != c.want || !json.Valid(got) {
			t.Errorf("runJSON = %s, %v; want %s", got, err, c.want)
		}
	}
}

// TestRunJSONReusesMainText checks that a run's JSON reuses the text of its main part when its
// fields are unchanged, appends the fields set since, and encodes the run when one changed.
func TestRunJSONReusesMainText(t *testing.T) {
	const main = ` {"id": "a", "name":"n", "extra": {"k": [1, 2]}} `
	for _, c := range []struct {
		name   string
		change func(o *Op)
		want   string
	}{
		{"unchanged", func(o *Op) {}, `{"id": "a", "name":"n", "extra": {"k": [1, 2]}}`},
		{"same value set again", func(o *Op) { o.Run["id"] = "a" }, `{"id": "a", "name":"n", "extra": {"k": [1, 2]}}`},
		{"fields added", func(o *Op) { o.Run["trace_id"], o.Run["dotted_order"] = "t", "d<" },
			`{"id": "a", "name":"n", "extra": {"k": [1, 2]},"dotted_order":"d<","trace_id":"t"}`},
		{"raw fields", func(o *Op) { o.SetField("inputs", json.RawMessage(`{"i":1}`), nil) },
			`{"id": "a", "name":"n", "extra": {"k": [1, 2]},"inputs":{"i":1}}`},
		{"changed", func(o *Op) { o.Run["id"] = "b" }, `{"extra":{"k":[1,2]},"id":"b","name":"n"}`},
		{"field part", func(o *Op) { o.SetField("extra", json.RawMessage(`{"k":3}`), nil) }, `{"extra":{"k":3},"id":"a","name":"n"}`},
		{"attachment", func(o *Op) { o.attach("f", trace.Attachment{MimeType: "text/plain", Size: 1, Digest: "d"}) },
			`{"attachments":{"f":{"digest":"d","mime_type":"text/plain","size":1}},"extra":{"k":[1,2]},"id":"a","name":"n"}`},
	} {
		o := NewOp(trace.KindPost, nil, nil)
		o.Run["id"] = "a"
		var fields map[string]any
		if err := trace.DecodeObject([]byte(main), &fields); err != nil {
			t.Fatal(err)
		}
		o.SetObject([]byte(main), fields, nil)
		c.change(o)
		got, err := runJSON(o)
		if err != nil || string(got) != c.want || !json.Valid(got) {
			t.Errorf("%s: runJSON = %s, %v; want %s", c.name, got, err, c.want)
		}
	}
	// Inputs in the main part are moved to the raw fields: its text is not reused.
	o := NewOp(trace.KindPost, nil, nil)
	o.SetObject([]byte(`{"id":"a","inputs":{"x":1}}`), map[string]any{"id": "a", "inputs": map[string]any{"x": 1.0}}, nil)
	if got, _ := runJSON(o); string(got) != `{"id":"a","inputs":{"x":1}}` || o.text != nil {
		t.Errorf("main part with inputs: %s", got)
	}
}

func TestSetFieldProblems(t *testing.T) {
	o := NewOp(trace.KindPost, []any{"post.x"}, map[string]json.RawMessage{
		"inputs": json.RawMessage(`[1]`), "outputs": json.RawMessage(`{"a":`), "events": json.RawMessage(`nope`),
		"extra": json.RawMessage(`{"metadata":{}}`), "serialized": json.RawMessage(`null`),
	})
	got := map[string]string{}
	for _, p := range o.Problems {
		got[fmt.Sprint(p.Loc)] = p.Type
	}
	want := map[string]string{"[body post.x inputs]": "dict_type", "[body post.x outputs]": "json_invalid", "[body post.x events]": "json_invalid"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("problems %v, want %v", got, want)
	}
	if _, ok := o.Run["extra"].(map[string]any); !ok || len(o.Raw) != 0 {
		t.Errorf("run %v raw %v", o.Run, o.Raw)
	}
}

func TestCursorRoundTrip(t *testing.T) {
	p := traces.Position{Start: time.Now().UnixNano(), ID: "0195f0c2-aaaa-7bbb-8ccc-0123456789ab"}
	got, err := decodeCursor(encodeCursor(p))
	if err != nil || *got != p {
		t.Errorf("cursor round trip = %v, %v", got, err)
	}
	for _, bad := range []string{"!!", "bm9jb2xvbg"} {
		if _, err := decodeCursor(bad); err == nil {
			t.Errorf("cursor %q accepted", bad)
		}
	}
}

// The project roll-ups compute percentiles as trace.ComputeStats does.
func TestPercentileMatchesComputeStats(t *testing.T) {
	for n := 1; n < 40; n += 7 {
		var runs []*trace.Run
		var sorted []float64
		t0 := time.Unix(0, 0)
		for i := range n {
			lat := float64(i*i%17) / 7
			end := t0.Add(time.Duration(lat * float64(time.Second)))
			runs = append(runs, &trace.Run{StartTime: t0, EndTime: &end, Latency: &lat})
			sorted = append(sorted, lat)
		}
		st := trace.ComputeStats(runs)
		slices.Sort(sorted)
		for _, c := range []struct {
			p    float64
			want *float64
		}{{0.5, st.LatencyP50}, {0.99, st.LatencyP99}} {
			if got := percentile(sorted, c.p); *got != *c.want {
				t.Errorf("n=%d p%v: %v, ComputeStats %v", n, c.p, *got, *c.want)
			}
		}
	}
}

func TestChunkKeepsMessagesUnderTheLimit(t *testing.T) {
	s := &Service{maxMessage: 10 << 10}
	in := &ingest{s: s}
	var events []eventlog.Event
	for range 25 {
		events = append(events, eventlog.Event{Data: make([]byte, 1000)})
	}
	total := 0
	for len(events) > 0 {
		c := in.chunk(events)
		size := 0
		for _, e := range c {
			size += len(e.Data) + 256
		}
		if len(c) > 1 && size > s.maxMessage {
			t.Errorf("chunk of %d bytes", size)
		}
		total += len(c)
		events = events[len(c):]
	}
	if total != 25 {
		t.Errorf("chunks hold %d events, want 25", total)
	}
}

// TestTraceEventsShareASubject: a trace's posts and patches are stored under one subject.
func TestTraceEventsShareASubject(t *testing.T) {
	for _, typ := range []string{traces.RunPosted, traces.RunPatched} {
		e := eventlog.Event{Aggregate: traceAggregate(eventlog.DefaultTenant, "t1"), Type: typ}
		if got, want := e.Subject(), traces.TraceKind+".default.t1."+eventlog.SharedToken; got != want {
			t.Errorf("%s: subject %s, want %s", typ, got, want)
		}
	}
}
