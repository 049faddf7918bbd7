package runs_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/engine/graphs"
	"github.com/jetgraph/jetgraph/engine/model"
	"github.com/jetgraph/jetgraph/engine/platform/platformtest"
	"github.com/jetgraph/jetgraph/engine/runs"
	"github.com/jetgraph/jetgraph/engine/threads"
)

// logLines keeps what a JSON slog handler writes, one record a line.
type logLines struct {
	mu    sync.Mutex
	lines [][]byte
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, append([]byte(nil), p...))
	return len(p), nil
}

// records returns the logged records whose message is msg and whose attributes include want.
func (l *logLines) records(t *testing.T, msg string, want map[string]any) []map[string]any {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
next:
	for _, line := range l.lines {
		var r map[string]any
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if r["msg"] != msg {
			continue
		}
		for k, v := range want {
			if r[k] != v {
				continue next
			}
		}
		out = append(out, r)
	}
	return out
}

// leakyGraph fails with an engine error whose cause quotes the API key of the run's config and
// a URL with a credential: what the client sees is the error's detail, what the log sees is
// the whole chain, masked.
func leakyGraph() *graph.Graph {
	b := graph.NewBuilder("leaky").Channel("messages", graph.Messages())
	b.Node("fetch", func(ctx context.Context, in any, rt *graph.Runtime) (any, error) {
		cause := fmt.Errorf("GET https://weather.example/now?api_key=url-secret-77: refused the key %s", rt.Config.String("api_key"))
		return nil, engine.E(engine.Op("tools.weather"), "the weather service failed", cause)
	})
	b.Edge(graph.Start, "fetch")
	return b.MustCompile(graph.CompileOptions{})
}

func TestFailedRunLogsItsCause(t *testing.T) {
	reg := graphs.Examples()
	reg.MustRegister(graphs.Entry{ID: "leaky", Build: graphs.Static(leakyGraph())})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	modelURL := "http://" + ln.Addr().String() + "/v1"
	_ = ln.Close() // nothing listens there now
	noRetries := 0
	m, err := model.NewOpenAI(model.Config{BaseURL: "http://someone:hunter2-pw@" + ln.Addr().String() + "/v1", Model: "m", MaxRetries: &noRetries})
	if err != nil {
		t.Fatal(err)
	}
	unreachable, err := graphs.NewReact(graphs.ReactSettings{Name: "unreachable", Model: m})
	if err != nil {
		t.Fatal(err)
	}
	reg.MustRegister(graphs.Entry{ID: "unreachable", Build: graphs.Static(unreachable)})
	logs := &logLines{}
	cfg := quickTakeover()
	cfg.Graphs = reg
	cfg.Logger = slog.New(slog.NewJSONHandler(logs, nil))
	p := platformtest.Start(t, cfg, nil)
	ctx := waitCtx(t)

	const apiKey = "sk-config-secret-0042"
	tests := []struct {
		graph          string
		class, message string
		node           string
		chain          []string // in the log's err
		secrets        []string // never in the log
	}{
		{graph: "error", class: "CustomError", message: "Boo!", node: "error_node", chain: []string{"node error_node: CustomError: Boo!"}},
		{graph: "leaky", class: "Exception", message: "the weather service failed", node: "fetch",
			chain:   []string{"tools.weather: the weather service failed: GET https://weather.example/now?api_key=" + engine.MaskedValue + ": refused the key " + engine.MaskedValue},
			secrets: []string{apiKey, "url-secret-77"}},
		{graph: "unreachable", class: "Exception", message: "the model server at " + modelURL + " could not be reached or sent a broken stream",
			node: "agent", chain: []string{"model.openai: the model server at " + modelURL + " could not be reached", "connection refused"},
			secrets: []string{"hunter2-pw"}},
	}
	for _, tt := range tests {
		t.Run(tt.graph, func(t *testing.T) {
			th, err := p.Threads.Create(ctx, threads.Create{})
			if err != nil {
				t.Fatal(err)
			}
			run, err := p.Runs.Create(ctx, runs.Create{ThreadID: th.ThreadID, AssistantID: tt.graph, Input: map[string]any{"messages": "x"},
				Config: map[string]any{"configurable": map[string]any{"api_key": apiKey}}})
			if err != nil {
				t.Fatal(err)
			}
			rec, err := p.Runs.Wait(ctx, th.ThreadID, run.RunID)
			if err != nil {
				t.Fatal(err)
			}
			// The client's answer is the sanitised one.
			if rec.Status != engine.RunFailed || rec.Error == nil || rec.Error.Class != tt.class || rec.Error.Message != tt.message {
				t.Fatalf("the client sees %s %+v, want error %s: %s", rec.Status, rec.Error, tt.class, tt.message)
			}
			// The server's log has the cause.
			got := logs.records(t, "runs: run failed", map[string]any{"run_id": run.RunID})
			if len(got) != 1 {
				t.Fatalf("%d WARN lines for the run, want 1", len(got))
			}
			r := got[0]
			want := map[string]any{"level": "WARN", "thread_id": th.ThreadID, "assistant_id": rec.AssistantID, "graph_id": tt.graph,
				"node": tt.node, "attempt": 1.0}
			for k, v := range want {
				if r[k] != v {
					t.Errorf("log %s = %v, want %v (%v)", k, r[k], v, r)
				}
			}
			text, _ := r["err"].(string)
			for _, c := range tt.chain {
				if !strings.Contains(text, c) {
					t.Errorf("log err %q lacks %q", text, c)
				}
			}
			for _, s := range tt.secrets {
				if strings.Contains(text, s) {
					t.Errorf("log err %q shows the secret %q", text, s)
				}
			}
		})
	}
}
