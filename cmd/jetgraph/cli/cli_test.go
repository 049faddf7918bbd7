package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/jetgraph/jetgraph/engine/assistants"
	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/engine/graphs"
	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
)

// run runs p's command line with args in this process and returns its stdout, its stderr and
// its error.
func run(t *testing.T, p Program, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	p.Stdout, p.Stderr = &out, &errOut
	err = p.Run(context.Background(), args)
	return out.String(), errOut.String(), err
}

// serving is p's serve command running in this process on a free port with data.
type serving struct {
	url    string
	logs   *eventlogtest.Buffer
	cancel context.CancelFunc
	done   chan error
}

// startServe runs serve with args in this process and waits until it answers /ok; the test's
// end stops it.
func startServe(t *testing.T, p Program, data string, args ...string) *serving {
	t.Helper()
	logs := &eventlogtest.Buffer{}
	p.Stdout, p.Stderr = logs, logs
	ctx, cancel := context.WithCancel(context.Background())
	s := &serving{logs: logs, cancel: cancel, done: make(chan error, 1)}
	go func() {
		s.done <- p.Run(ctx, append([]string{"serve", "--addr", "127.0.0.1:0", "--data", data, "--grace-period", "5s"}, args...))
	}()
	t.Cleanup(func() { s.stop(t) })
	s.url = waitServing(t, data, s.done)
	return s
}

// stop cancels serve and waits for it to end, failing the test on an error.
func (s *serving) stop(t *testing.T) {
	t.Helper()
	if s.done == nil {
		return
	}
	s.cancel()
	if err := <-s.done; err != nil {
		t.Errorf("serve: %v\n%s", err, s.logs)
	}
	s.done = nil
}

// post sends a JSON body and decodes the JSON answer, which must be a 200.
func post(t *testing.T, url, body string) map[string]any {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var v map[string]any
	if resp.StatusCode != http.StatusOK || json.Unmarshal(raw, &v) != nil {
		t.Fatalf("POST %s: %s %s", url, resp.Status, raw)
	}
	return v
}

// A value a flag refuses is an error naming where it came from: the variable or the flag.
func TestBadValuesNameTheirSource(t *testing.T) {
	for _, c := range []struct {
		name, env, value string
		args             []string
		want             string
	}{
		{"int from the environment", "JETGRAPH_WORKERS", "ten", []string{"--data", "$DATA"}, `JETGRAPH_WORKERS="ten"`},
		{"duration from the environment", "JETGRAPH_GRACE_PERIOD", "30", []string{"serve", "--data", "$DATA"}, `JETGRAPH_GRACE_PERIOD="30"`},
		{"choice from the environment", "JETGRAPH_SYNC", "sometimes", []string{"projections", "rebuild", "--data", "$DATA"}, `JETGRAPH_SYNC="sometimes": must be interval or always`},
		{"log format from the environment", "JETGRAPH_LOG_FORMAT", "xml", []string{"version"}, `JETGRAPH_LOG_FORMAT="xml"`},
		{"webhook fields from the environment", "JETGRAPH_WEBHOOK_FIELDS", "nope", []string{"serve", "--data", "$DATA"}, `JETGRAPH_WEBHOOK_FIELDS="nope"`},
		{"bench flag from the environment", "JETGRAPH_CONCURRENCY", "many", []string{"bench", "runs"}, `JETGRAPH_CONCURRENCY="many"`},
		{"duration flag", "", "", []string{"serve", "--grace-period", "30", "--data", "$DATA"}, `"--grace-period"`},
		{"choice flag", "", "", []string{"--sync", "sometimes", "--data", "$DATA"}, `"--sync" flag: must be interval or always`},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.env != "" {
				t.Setenv(c.env, c.value)
			}
			data := t.TempDir()
			args := slices.Clone(c.args)
			if i := slices.Index(args, "$DATA"); i >= 0 {
				args[i] = data
			}
			_, stderr, err := run(t, Program{}, args...)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(stderr, c.want) {
				t.Fatalf("err = %v, stderr %q; want %s", err, stderr, c.want)
			}
			if _, err := os.Stat(filepath.Join(data, lockFile)); err == nil {
				t.Fatal("the command ran despite the bad value")
			}
		})
	}
}

// Serve's flags belong to serve (and to the root command, which serves); the log's flags to the
// commands that open the log; --log-format to every command.
func TestFlagsBelongToTheirCommands(t *testing.T) {
	for _, args := range [][]string{
		{"events", "thread", "x", "--addr", "localhost:1"},
		{"projections", "rebuild", "--workers", "3"},
		{"bench", "runs", "--config", "graph.json"},
		{"version", "--data", "x"},
		{"bench", "runs", "--data", "x"},
	} {
		if _, _, err := run(t, Program{}, args...); err == nil || !strings.Contains(err.Error(), "unknown flag") {
			t.Errorf("%v: %v, want an unknown flag", args, err)
		}
	}
	for _, args := range [][]string{{"--help"}, {"serve", "--help"}} {
		out, _, err := run(t, Program{}, args...)
		if err != nil || !strings.Contains(out, "--addr") || !strings.Contains(out, "--grace-period duration") {
			t.Errorf("%v: %v\n%s", args, err, out)
		}
	}
	out, _, err := run(t, Program{}, "--log-format", "json", "version")
	if err != nil || !strings.HasPrefix(out, "jetgraph ") {
		t.Errorf("--log-format before a subcommand: %v %q", err, out)
	}
}

func TestVersion(t *testing.T) {
	out, _, err := run(t, Program{Version: "1.2.3"}, "version")
	if want := "jetgraph 1.2.3 (" + runtime.Version() + ", " + runtime.GOOS + "/" + runtime.GOARCH + ")\n"; err != nil || out != want {
		t.Fatalf("version = %q, %v; want %q", out, err, want)
	}
	if out, _, _ := run(t, Program{}, "version"); !strings.Contains(out, moduleVersion()) {
		t.Fatalf("version without Program.Version = %q, want %s", out, moduleVersion())
	}
}

// events and projections rebuild never make a data folder out of a typo, and an id without
// events is an error, through a running server and from the data folder alike; an assistant is
// named by its graph id as in the API. The startup line names the process.
func TestEventsAndRebuildOnDataFolders(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "typo")
	for _, args := range [][]string{
		{"events", "thread", uuid.NewString(), "--data", missing},
		{"events", "assistant", "echo", "--data", missing, "--follow"},
		{"projections", "rebuild", "--data", missing},
	} {
		_, stderr, err := run(t, Program{}, args...)
		if err == nil || !strings.Contains(stderr, "does not exist") {
			t.Errorf("%v: %v %q", args, err, stderr)
		}
		if _, err := os.Stat(missing); !os.IsNotExist(err) {
			t.Fatalf("%v made the data folder", args)
		}
	}

	data := t.TempDir()
	srv := startServe(t, Program{}, data, "--log-format", "json")
	if !strings.Contains(srv.logs.String(), fmt.Sprintf(`"msg":"jetgraph ready","url":%q,"pid":%d`, srv.url, os.Getpid())) {
		t.Errorf("the startup line does not name the process:\n%s", srv.logs)
	}
	thread := post(t, srv.url+"/threads", `{}`)["thread_id"].(string)
	req, _ := http.NewRequest("PATCH", srv.url+"/threads/"+thread, strings.NewReader(`{"metadata":{"a":1}}`))
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Fatal(err, resp)
	}
	out, _, err := run(t, Program{}, "events", "thread", thread, "--data", data)
	var first struct{ Seq uint64 }
	if err != nil || json.Unmarshal([]byte(strings.SplitN(out, "\n", 2)[0]), &first) != nil {
		t.Fatal(err, out)
	}
	since := fmt.Sprint(first.Seq)
	unknown := uuid.NewString()
	check := func(where string) {
		t.Helper()
		for _, c := range []struct {
			args  []string
			lines int    // -1: an error
			has   string // the type of every line ("": the first is created)
		}{
			{[]string{"events", "thread", thread}, 2, ""},
			{[]string{"events", "thread", thread, "--type", "patched"}, 1, "patched"},
			{[]string{"events", "thread", thread, "--type", "created,patched", "--since", since}, 1, "patched"},
			{[]string{"events", "thread", thread, "--type", "deleted"}, 0, "none"},
			{[]string{"events", "assistant", "echo"}, 1, ""},
			{[]string{"events", "assistant", assistants.SystemID("echo")}, 1, ""},
			{[]string{"events", "thread", unknown}, -1, ""},
			{[]string{"events", "thread", unknown, "--follow"}, -1, ""},
			{[]string{"events", "thread", unknown, "--type", "created"}, -1, ""},
			{[]string{"events", "assistant", "no_such_graph"}, -1, ""},
		} {
			out, stderr, err := run(t, Program{}, append(c.args, "--data", data)...)
			want := strings.Count(out, `"type":"`+c.has+`"`) == c.lines // the filter keeps these alone
			if c.has == "" {
				want = strings.Contains(out, `"type":"created"`)
			}
			switch {
			case c.lines < 0 && (err == nil || !strings.Contains(stderr, "no events")):
				t.Errorf("%s: %v: %v %q", where, c.args, err, stderr)
			case c.lines >= 0 && (err != nil || strings.Count(out, "\n") != c.lines || !want):
				t.Errorf("%s: %v: %v %q", where, c.args, err, out)
			}
		}
	}
	check("through the server")
	srv.stop(t)
	check("from the data folder")
	if _, stderr, err := run(t, Program{}, "projections", "rebuild", "--data", data, "--log-format", "json"); err != nil || !strings.Contains(stderr, `"msg":"projections rebuilt"`) {
		t.Errorf("rebuild: %v %s", err, stderr)
	}
}

// A Program serves its own graphs instead of the examples; --config replaces them with the
// graphs of a graph.json, which may name the program's graphs and Go tools; --graphs narrows.
func TestProgramServesItsGraphs(t *testing.T) {
	upper := graphs.Tool{Name: "upper", Description: "Capitals.", Parameters: map[string]any{"type": "object",
		"required": []any{"text"}, "properties": map[string]any{"text": map[string]any{"type": "string"}}},
		Run: func(_ context.Context, args map[string]any) (string, error) {
			return strings.ToUpper(fmt.Sprint(args["text"])), nil
		}}
	mine := graphs.NewRegistry()
	for _, id := range []string{"one", "two"} {
		g := graph.NewBuilder(id).Channel("said", graph.LastValue()).
			Node("say", func(context.Context, any, *graph.Runtime) (any, error) { return map[string]any{"said": id}, nil }).
			Edge(graph.Start, "say").MustCompile(graph.CompileOptions{})
		mine.MustRegister(graphs.Entry{ID: id, Build: graphs.Static(g)})
	}
	p := Program{Graphs: mine, Tools: []graphs.Tool{upper}}
	conf := filepath.Join(t.TempDir(), "graph.json")
	if err := os.WriteFile(conf, []byte(`{"graphs": {"uno": "one", "loud": {"template": "react", "tools": ["upper"]}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		args   []string
		served []string
	}{
		{"own graphs", nil, []string{"one", "two"}},
		{"narrowed", []string{"--graphs", "two"}, []string{"two"}},
		{"graph.json", []string{"--config", conf}, []string{"uno", "loud"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := startServe(t, p, t.TempDir(), c.args...)
			if !strings.Contains(srv.logs.String(), "graphs="+strings.Join(c.served, ",")) {
				t.Errorf("served, want %v:\n%s", c.served, srv.logs)
			}
			for _, id := range c.served {
				switch got := post(t, srv.url+"/runs/wait", `{"assistant_id": "`+id+`", "input": {"messages": [{"role": "user", "content": "upper: hi"}]}}`); id {
				case "loud":
					if msgs, _ := got["messages"].([]any); len(msgs) != 4 || msgs[3].(map[string]any)["content"] != "upper: HI" {
						t.Errorf("%s: %v", id, got)
					}
				default:
					want := id
					if id == "uno" { // graph.json serves the program's graph one as uno
						want = "one"
					}
					if got["said"] != want {
						t.Errorf("%s: %v", id, got)
					}
				}
			}
			if code := postCode(t, srv.url+"/runs/wait", `{"assistant_id": "echo", "input": {}}`); code != http.StatusNotFound {
				t.Errorf("the example echo answered %d, want 404", code)
			}
		})
	}
}

// postCode sends a JSON body and returns the status.
func postCode(t *testing.T, url, body string) int {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
