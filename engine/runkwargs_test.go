package engine_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/jetgraph/jetgraph/engine"
)

// readLines reads a JSON-lines file of testdata.
func readLines(t *testing.T, name string) [][]byte {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out [][]byte
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) > 0 {
			out = append(out, bytes.Clone(sc.Bytes()))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// recordedEvents are the run_created payloads in testdata/run_created_v1.jsonl, events that the
// build which kept kwargs as a map wrote (jetgraph events thread <id>), keyed by run id.
func recordedEvents(t *testing.T) (ids []string, payloads map[string][]byte) {
	t.Helper()
	payloads = map[string][]byte{}
	for _, line := range readLines(t, "run_created_v1.jsonl") {
		var e struct {
			Type string          `json:"type"`
			Data json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(line, &e); err != nil || e.Type != engine.RunCreatedEvent {
			t.Fatalf("event %s: %v", line, err)
		}
		var d struct {
			Run struct {
				RunID string `json:"run_id"`
			} `json:"run"`
		}
		if err := json.Unmarshal(e.Data, &d); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, d.Run.RunID)
		payloads[d.Run.RunID] = e.Data
	}
	return ids, payloads
}

// TestRecordedRunCreatedEventsDecode: run_created events written when kwargs were a map decode
// into the typed kwargs, with either JSON engine the project reads them with, and encode again
// to the very bytes they were written as.
func TestRecordedRunCreatedEventsDecode(t *testing.T) {
	ids, payloads := recordedEvents(t)
	want := []engine.RunKwargs{{
		Input:  map[string]any{"messages": []any{map[string]any{"role": "human", "content": "hi <b>&</b>"}}},
		Config: nil, Context: map[string]any{"user": "u"}, Durability: engine.DurabilityExit,
		FeedbackKeys: []string{"score"}, InterruptBefore: []string{"nope"}, InterruptAfter: []string{"nope2"},
		StreamMode: []engine.StreamMode{engine.StreamValues, engine.StreamMessagesTuple},
		Webhook:    "https://example.com/hook?token=abc",
	}, {
		Input:           map[string]any{"messages": []any{map[string]any{"role": "human", "content": "stop"}}},
		Context:         map[string]any{},
		Durability:      engine.DurabilitySync,
		InterruptBefore: []string{"*"},
		StreamMode:      []engine.StreamMode{engine.StreamUpdates},
	}, {
		Command:      map[string]any{"resume": "go", "goto": nil},
		Context:      map[string]any{},
		CheckpointID: "01a211d1-cbeb-7a26-8024-2924613ed357",
		StreamMode:   []engine.StreamMode{engine.StreamDebug, engine.StreamEvents},
	}}
	graphs := []string{"agent", "agent", "agent", "echo"}
	if len(ids) != len(graphs) {
		t.Fatalf("%d recorded events, want %d", len(ids), len(graphs))
	}
	for i, id := range ids {
		raw := payloads[id]
		var std, v2 engine.RunCreatedData
		if err := json.Unmarshal(raw, &std); err != nil {
			t.Fatalf("%s: encoding/json: %v", id, err)
		}
		opts := jsonv2.JoinOptions(jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true))
		if err := jsonv2.Unmarshal(raw, &v2, opts); err != nil {
			t.Fatalf("%s: json v2: %v", id, err)
		}
		if !reflect.DeepEqual(std, v2) {
			t.Errorf("%s: the JSON engines read\n%+v\n%+v", id, std.Run.Kwargs, v2.Run.Kwargs)
		}
		k := std.Run.Kwargs
		if got := k.GraphID(); got != graphs[i] {
			t.Errorf("%s: graph %q, want %q", id, got, graphs[i])
		}
		if k.Config["configurable"].(map[string]any)["run_id"] != id {
			t.Errorf("%s: config %v", id, k.Config)
		}
		if i < len(want) {
			w := want[i]
			w.Config = k.Config // checked above
			if !reflect.DeepEqual(k, w) {
				t.Errorf("%s: kwargs\n%#v\nwant\n%#v", id, k, w)
			}
		}
		again, err := json.Marshal(std)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again, raw) {
			t.Errorf("%s: encodes as\n%s\nwritten as\n%s", id, again, raw)
		}
	}
}

// TestRunAnswersKeepTheirKwargs: the kwargs of GET run answers recorded with the build that kept
// them as a map (testdata/run_answers_v1.jsonl) are what the typed kwargs of the recorded
// events answer now, byte for byte, secrets masked alike.
func TestRunAnswersKeepTheirKwargs(t *testing.T) {
	_, payloads := recordedEvents(t)
	answers := readLines(t, "run_answers_v1.jsonl")
	if len(answers) != len(payloads) {
		t.Fatalf("%d answers for %d events", len(answers), len(payloads))
	}
	for _, answer := range answers {
		var a struct {
			RunID  string          `json:"run_id"`
			Kwargs json.RawMessage `json:"kwargs"`
		}
		if err := json.Unmarshal(answer, &a); err != nil {
			t.Fatal(err)
		}
		var d engine.RunCreatedData
		if err := json.Unmarshal(payloads[a.RunID], &d); err != nil {
			t.Fatalf("%s: %v", a.RunID, err)
		}
		got, err := json.Marshal(d.Run.Run.Masked().Kwargs)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, a.Kwargs) {
			t.Errorf("%s: kwargs answered as\n%s\nwere\n%s", a.RunID, got, a.Kwargs)
		}
	}
}

// TestRunKwargsStreams: Streams reports any of the modes asked for.
func TestRunKwargsStreams(t *testing.T) {
	k := engine.RunKwargs{StreamMode: []engine.StreamMode{engine.StreamValues, engine.StreamDebug}}
	for _, tt := range []struct {
		modes []engine.StreamMode
		want  bool
	}{
		{[]engine.StreamMode{engine.StreamDebug}, true},
		{[]engine.StreamMode{engine.StreamCheckpoints, engine.StreamValues}, true},
		{[]engine.StreamMode{engine.StreamCheckpoints}, false},
		{nil, false},
	} {
		if got := k.Streams(tt.modes...); got != tt.want {
			t.Errorf("Streams(%v) = %v, want %v", tt.modes, got, tt.want)
		}
	}
}

// BenchmarkRunRecordDecode decodes the recorded run_created payloads as the projection reads
// run records (json v2): what a worker, a streamer and a run answer pay for kwargs.
func BenchmarkRunRecordDecode(b *testing.B) {
	var payloads [][]byte
	for _, line := range readLines(&testing.T{}, "run_created_v1.jsonl") {
		var e struct {
			Data json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(line, &e); err != nil {
			b.Fatal(err)
		}
		payloads = append(payloads, e.Data)
	}
	opts := jsonv2.JoinOptions(jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		var d engine.RunCreatedData
		if err := jsonv2.Unmarshal(payloads[i%len(payloads)], &d, opts); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzRunKwargsRoundTrip: whatever kwargs decode, encode to JSON that decodes to the same
// kwargs and encodes to the same bytes again (a record folded twice stays what it was).
func FuzzRunKwargsRoundTrip(f *testing.F) {
	_, payloads := recordedEvents(&testing.T{})
	for _, p := range payloads {
		var d struct {
			Run struct {
				Kwargs json.RawMessage `json:"kwargs"`
			} `json:"run"`
		}
		if json.Unmarshal(p, &d) == nil {
			f.Add([]byte(d.Run.Kwargs))
		}
	}
	f.Add([]byte(`{"webhook":"","durability":null,"stream_mode":[],"command":{}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		var k engine.RunKwargs
		if json.Unmarshal(raw, &k) != nil {
			return
		}
		once, err := json.Marshal(k)
		if err != nil {
			t.Fatalf("marshal %+v: %v", k, err)
		}
		var again engine.RunKwargs
		if err := json.Unmarshal(once, &again); err != nil {
			t.Fatalf("%s does not decode: %v", once, err)
		}
		twice, err := json.Marshal(again)
		if err != nil || !bytes.Equal(once, twice) {
			t.Fatalf("encodes as %s, then as %s (%v)", once, twice, err)
		}
	})
}
