package replay_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/goldentest"
	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/engine/graphs"
	"github.com/jetgraph/jetgraph/engine/platform"
	"github.com/jetgraph/jetgraph/engine/platform/platformtest"
	"github.com/jetgraph/jetgraph/engine/replay"
	"github.com/jetgraph/jetgraph/engine/runs"
	"github.com/jetgraph/jetgraph/engine/threads"
	"github.com/jetgraph/jetgraph/eventlog"
)

// scrub replaces what differs from one run of a test to the next (ids, times, durations, the
// process's name) with placeholders, so that a replay is compared as a golden file.
func scrub(b []byte) []byte {
	for _, r := range []struct {
		re   *regexp.Regexp
		with string
	}{
		{regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`), "<uuid>"},
		{regexp.MustCompile(`(fake|call)[-_][0-9a-f-]{12,36}(_\d+)?`), "<$1 id>"},
		{regexp.MustCompile(`\d\d:\d\d:\d\d\.\d{3}`), "<time>"},
		{regexp.MustCompile(`\+[0-9.]+ms`), "+<ms>"},
		{regexp.MustCompile(`(success|error|interrupted)  [0-9.]+(µs|ms|s)`), "$1  <duration>"},
		{regexp.MustCompile(`on [a-zA-Z0-9_.-]+-[0-9a-f]{8}\b`), "on <process>"},
	} {
		b = r.re.ReplaceAll(b, []byte(r.with))
	}
	return b
}

// TestGoldenReplays: runs of the example graphs read back from the log as replays: every node,
// write, diff, model and tool call, interrupt and resume, error and subgraph step is in the
// golden file of its graph (testdata/<name>.txt).
func TestGoldenReplays(t *testing.T) {
	p := platformtest.Start(t, platform.Config{Graphs: graphs.Default()}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	msg := func(s string) map[string]any {
		return map[string]any{"messages": []any{map[string]any{"role": "user", "content": s}}}
	}
	tests := []struct {
		name  string
		runs  []runs.Create
		final string // the last run's status
	}{
		{"react", []runs.Create{{AssistantID: "react", Input: msg("calculator: 2+3*4")}}, engine.RunSuccess},
		{"agent", []runs.Create{{AssistantID: "agent", Input: msg("foo")}}, engine.RunSuccess},
		{"weather", []runs.Create{{AssistantID: "weather", Input: msg("what is the weather in sf")},
			{AssistantID: "weather"}}, engine.RunSuccess},
		{"nested", []runs.Create{{AssistantID: "nested", Input: msg("hi")}}, engine.RunSuccess},
		{"error", []runs.Create{{AssistantID: "error", Input: msg("x")}}, engine.RunFailed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			th, err := p.Threads.Create(ctx, threads.Create{})
			if err != nil {
				t.Fatal(err)
			}
			var rec engine.RunRecord
			for _, c := range tc.runs {
				c.ThreadID = th.ThreadID
				run, err := p.Runs.Create(ctx, c)
				if err != nil {
					t.Fatal(err)
				}
				if rec, err = p.Runs.Wait(ctx, th.ThreadID, run.RunID); err != nil {
					t.Fatal(err)
				}
			}
			if string(rec.Status) != tc.final {
				t.Fatalf("last run: %s %+v", rec.Status, rec.Error)
			}
			rt := readBack(ctx, t, p, th.ThreadID)
			var out bytes.Buffer
			if err := replay.Text(&out, rt); err != nil {
				t.Fatal(err)
			}
			goldentest.Check(t, "testdata/"+tc.name+".txt", scrub(out.Bytes()))
			// The same graphs re-executed offline from the record do what they did.
			rep, err := replay.Rerun(ctx, rt, graphs.Default().Runnable, "")
			if err != nil || rep.Divergence != nil || rep.Runs != len(tc.runs) || rep.Steps == 0 {
				t.Fatalf("rerun: %+v %v", rep, err)
			}
		})
	}
}

// TestRerunCatchesAChangedNode: a recorded echo run re-executed with an echo node that answers
// otherwise diverges at that node's step, naming both writes; another graph diverges on the
// model call it makes that the recording does not have.
func TestRerunCatchesAChangedNode(t *testing.T) {
	p := platformtest.Start(t, platform.Config{Graphs: graphs.Default()}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rt := readBack(ctx, t, p, recordRun(ctx, t, p, "echo", "hi"))
	changed := func(string, graph.Config) (graphs.Runnable, error) {
		b := graph.NewBuilder("echo").Channel("messages", graph.Messages())
		b.Node("echo", func(ctx context.Context, in any, _ *graph.Runtime) (any, error) {
			return map[string]any{"messages": []any{map[string]any{"role": "assistant", "content": "ECHO"}}}, nil
		})
		return b.Edge(graph.Start, "echo").Edge("echo", graph.End).Compile(graph.CompileOptions{})
	}
	tests := []struct {
		name  string
		build replay.Build
		graph string
		want  string // the divergence, "" for none
	}{
		{"the same graph", graphs.Default().Runnable, "", ""},
		{"a changed node", changed, "", "step 1 node echo: writes differ"},
		{"another graph", graphs.Default().Runnable, "agent", "step 1 node agent: model_call differ"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := replay.Rerun(ctx, rt, tc.build, tc.graph)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.want == "" && rep.Divergence != nil:
				t.Fatalf("divergence: %s", rep.Divergence)
			case tc.want != "" && (rep.Divergence == nil || !strings.Contains(rep.Divergence.String(), tc.want)):
				t.Fatalf("divergence = %v, want %q", rep.Divergence, tc.want)
			}
		})
	}
}

// recordRun runs assistant on a new thread with one human message and returns the thread's id
// once the run succeeded.
func recordRun(ctx context.Context, t *testing.T, p *platform.Platform, assistant, text string) string {
	t.Helper()
	th, err := p.Threads.Create(ctx, threads.Create{})
	if err != nil {
		t.Fatal(err)
	}
	run, err := p.Runs.Create(ctx, runs.Create{ThreadID: th.ThreadID, AssistantID: assistant,
		Input: map[string]any{"messages": []any{map[string]any{"role": "user", "content": text}}}})
	if err != nil {
		t.Fatal(err)
	}
	if rec, err := p.Runs.Wait(ctx, th.ThreadID, run.RunID); err != nil || rec.Status != engine.RunSuccess {
		t.Fatalf("run %s: %v %v", assistant, rec.Status, err)
	}
	return th.ThreadID
}

// readBack reads a thread's log as a replay.
func readBack(ctx context.Context, t *testing.T, p *platform.Platform, threadID string) *replay.Thread {
	t.Helper()
	events, err := p.Log.Load(ctx, eventlog.Aggregate{Kind: "thread", Tenant: engine.DefaultTenant, ID: threadID})
	if err != nil {
		t.Fatal(err)
	}
	rt, err := replay.Read(threadID, events)
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// TestRecordedThreadsReplay: the threads recorded under testdata/*.jgx (exports of example
// graphs' runs) re-execute with the graphs as they are now without a divergence: a change to a
// graph that alters what it did fails here, as `jetgraph replay --file` fails in a user's CI.
func TestRecordedThreadsReplay(t *testing.T) {
	files, err := filepath.Glob("testdata/*.jgx")
	if err != nil || len(files) == 0 {
		t.Fatal("no recorded threads", err)
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var f replay.File
			if err := json.Unmarshal(raw, &f); err != nil {
				t.Fatal(err)
			}
			if err := f.Check(); err != nil {
				t.Fatal(err)
			}
			rt, err := replay.Read(f.ThreadID, f.Events)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := replay.Rerun(context.Background(), rt, graphs.Default().Runnable, "")
			if err != nil || rep.Divergence != nil || rep.Steps == 0 {
				t.Fatalf("%+v %v", rep, err)
			}
		})
	}
}
