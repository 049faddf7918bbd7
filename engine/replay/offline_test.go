package replay_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/engine/graphs"
	"github.com/jetgraph/jetgraph/engine/platform"
	"github.com/jetgraph/jetgraph/engine/platform/platformtest"
	"github.com/jetgraph/jetgraph/engine/replay"
)

// chatCompletions is an OpenAI-compatible server for recording: it calls the calculator on the
// first turn and answers with the result after it.
func chatCompletions(calls *atomic.Int32) *httptest.Server {
	chunk := func(delta, finish string) string {
		return `data: {"id":"chatcmpl-r","object":"chat.completion.chunk","created":1,"model":"m-1","choices":[{"index":0,"delta":` +
			delta + `,"finish_reason":` + finish + `}],"usage":null}` + "\n\n"
	}
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		body, _ := io.ReadAll(r.Body)
		stream := chunk(`{"role":"assistant","tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"calculator","arguments":"{\"expression\":\"2+3\"}"}}]}`, `"tool_calls"`)
		if strings.Contains(string(body), `"role":"tool"`) {
			stream = chunk(`{"role":"assistant","content":"It is 5."}`, `"stop"`)
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, stream+"data: [DONE]\n\n")
	}))
}

// reactOn is a react agent with the calculator on the OpenAI-compatible model at baseURL.
func reactOn(t *testing.T, baseURL, extra string) *graphs.Registry {
	t.Helper()
	reg, err := graphs.ParseConfig("graph.json", []byte(`{"graphs": {"react": {"template": "react", "tools": ["calculator"`+extra+
		`, "model": {"base_url": "`+baseURL+`", "model": "m-1"}}}}`), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// TestOfflineReplayAnswersFromTheRecording: a react run recorded against a live model replays
// with its model at an address where nothing listens (the recorded answers and tool results
// are fed back, no call leaves the process); a changed system prompt, another tool list or an
// extra model call is a divergence at the model call.
func TestOfflineReplayAnswersFromTheRecording(t *testing.T) {
	var calls atomic.Int32
	srv := chatCompletions(&calls)
	p := platformtest.Start(t, platform.Config{Graphs: reactOn(t, srv.URL+"/v1", `]`)}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	threadID := recordRun(ctx, t, p, "react", "2+3?")
	if calls.Load() != 2 {
		t.Fatalf("recording: %d model calls", calls.Load())
	}
	srv.Close()
	recorded := readBack(ctx, t, p, threadID)
	const nowhere = "http://127.0.0.1:9/v1"
	tests := []struct {
		name  string
		graph *graphs.Registry
		want  string // the divergence, "" for none
		alike int    // steps alike before it
	}{
		{"the same agent, model offline", reactOn(t, nowhere, `]`), "", 5},
		{"a changed system prompt", reactOn(t, nowhere, `], "system_prompt": "Be terse."`), "step 1 node agent: model_input differ", 2},
		{"another tool list", reactOn(t, nowhere, `, "echo"]`), "step 1 node agent: model_input differ", 2},
		{"more model calls than recorded", reactOn(t, nowhere, `], "max_iterations": 1`), "step 3 node agent: writes differ", 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := replay.Rerun(ctx, recorded, tc.graph.Runnable, "")
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.want == "" && rep.Divergence != nil:
				t.Fatalf("divergence: %s", rep.Divergence)
			case tc.want != "" && (rep.Divergence == nil || !strings.Contains(rep.Divergence.String(), tc.want)):
				t.Fatalf("divergence = %v, want %q", rep.Divergence, tc.want)
			case rep.Steps != tc.alike:
				t.Fatalf("%d steps alike, want %d", rep.Steps, tc.alike)
			}
		})
	}
}

// TestOfflineReplayOfAFailedToolCall: a tool call that failed is fed back as the same failure
// (the tool message with status "error"), so the run replays alike.
func TestOfflineReplayOfAFailedToolCall(t *testing.T) {
	p := platformtest.Start(t, platform.Config{Graphs: graphs.Default()}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	recorded := readBack(ctx, t, p, recordRun(ctx, t, p, "react", "calculator: 2+3*"))
	failed := 0
	for _, s := range recorded.Runs[0].Steps {
		for _, c := range s.ToolCalls {
			if c.Status == "error" {
				failed++
			}
		}
	}
	if failed != 1 {
		t.Fatalf("%d failed tool calls recorded", failed)
	}
	rep, err := replay.Rerun(ctx, recorded, graphs.Default().Runnable, "")
	if err != nil || rep.Divergence != nil || rep.Steps != 5 {
		t.Fatalf("%+v %v", rep, err)
	}
}
