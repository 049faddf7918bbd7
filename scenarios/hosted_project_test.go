package scenarios

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// hostedProject is a Python project whose langgraph.json uses the keys beside "graphs": env as
// a .env file, dependencies (a local folder the graph imports from), store.index and
// checkpointer.ttl. Its graphs run with the hosted Python scenario's pinned langgraph.
const hostedProject = "hosted/python_project"

// embeddingsServer is an OpenAI-compatible embeddings endpoint (POST /v1/embeddings) whose
// vectors say which of a few words a text has, so that a search ranks by them; it keeps what
// it was sent.
type embeddingsServer struct {
	*httptest.Server
	mu       sync.Mutex
	requests []embeddingsRequest
}

type embeddingsRequest struct {
	Auth       string   `json:"-"`
	Model      string   `json:"model"`
	Dimensions int      `json:"dimensions"`
	Input      []string `json:"input"`
}

var embeddingWords = []string{"WORLD", "MOON", "HELLO", "NOTE"}

func startEmbeddings(t *testing.T) *embeddingsServer {
	t.Helper()
	s := &embeddingsServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req embeddingsRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || r.URL.Path != "/v1/embeddings" {
			http.Error(w, fmt.Sprintf("not an embeddings request: %s %v", r.URL.Path, err), http.StatusBadRequest)
			return
		}
		req.Auth = r.Header.Get("Authorization")
		s.mu.Lock()
		s.requests = append(s.requests, req)
		s.mu.Unlock()
		data := []map[string]any{}
		for i, text := range req.Input {
			v := make([]float64, len(embeddingWords))
			norm := 0.0
			for j, word := range embeddingWords {
				v[j] = 0.01
				if strings.Contains(strings.ToUpper(text), word) {
					v[j] = 1
				}
				norm += v[j] * v[j]
			}
			for j := range v {
				v[j] /= math.Sqrt(norm)
			}
			data = append(data, map[string]any{"object": "embedding", "index": i, "embedding": v})
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": req.Model,
			"usage": map[string]any{"prompt_tokens": 1, "total_tokens": 1}})
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *embeddingsServer) seen() []embeddingsRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]embeddingsRequest(nil), s.requests...)
}

// projectFlags skips a short run, copies the hosted project into a temporary folder with the
// .env file dotenv (which names the test's embeddings server: a test never writes into the
// tree), and returns the flags that serve it with the hosted scenarios' Python.
func projectFlags(t *testing.T, dotenv string) []string {
	t.Helper()
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	userPython := ensureVenv(t, filepath.Join(filepath.Dir(hostedPythonConfig), "requirements.txt"))
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(hostedProject)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".env"), []byte(dotenv), 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{"--config", filepath.Join(dir, "langgraph.json"), "--python", userPython}
}

// TestHostedProjectKeys serves a langgraph.json whose env is a .env file, whose graph imports a
// module of a local dependency, with a store.index on an OpenAI-compatible embeddings server
// and a checkpointer.ttl: the graph sees the .env file's variables, the store embeds its notes
// with the .env file's server and key (searched by meaning), and a new thread gets the default
// TTL.
func TestHostedProjectKeys(t *testing.T) {
	emb := startEmbeddings(t)
	flags := projectFlags(t, "# the project's settings\nGREETING=hello\nOPENAI_BASE_URL="+emb.URL+"/v1\nOPENAI_API_KEY=sk-from-dotenv\n")
	srv := startServerArgs(t, t.TempDir(), flags...)

	for _, word := range []string{"world", "moon"} {
		thread := get(api(t, "POST", srv.URL+"/threads", `{}`, 200), "thread_id").(string)
		th := api(t, "GET", srv.URL+"/threads/"+thread+"?include=ttl", "", 200)
		if fmt.Sprint(get(get(th, "ttl"), "ttl"), get(get(th, "ttl"), "strategy")) != "60delete" {
			t.Fatalf("a new thread's TTL (checkpointer.ttl.default_ttl 60): %v", get(th, "ttl"))
		}
		out := api(t, "POST", srv.URL+"/threads/"+thread+"/runs/wait",
			`{"assistant_id":"notes","input":{"messages":[{"role":"user","content":"`+word+`"}]}}`, 200)
		msgs, _ := get(out, "messages").([]any)
		want := "HELLO " + strings.ToUpper(word) + "!" // GREETING from .env, shout from ./libs
		if len(msgs) != 2 || get(msgs[1], "content") != want {
			t.Fatalf("the run's messages: %v, want %q last", msgs, want)
		}
	}
	res := api(t, "POST", srv.URL+"/store/items/search", `{"namespace_prefix":["notes"],"query":"the moon"}`, 200)
	items, _ := get(res, "items").([]any)
	if len(items) != 2 || get(get(items[0], "value"), "text") != "HELLO MOON!" || get(items[0], "score") == nil {
		t.Fatalf("a search by meaning ranks the moon's note first, with a score: %v", items)
	}
	seen := emb.seen()
	if len(seen) < 3 {
		t.Fatalf("the embeddings server was asked %d times, want the two notes and the query", len(seen))
	}
	for _, r := range seen {
		if r.Auth != "Bearer sk-from-dotenv" || r.Model != "test-embeddings" || r.Dimensions != 4 {
			t.Fatalf("an embeddings request: key %q, model %q, dimensions %d; want the .env file's key and store.index's model and dims",
				r.Auth, r.Model, r.Dimensions)
		}
	}
	if strings.Contains(srv.logs.String(), "sk-from-dotenv") {
		t.Error("the .env file's key is in jetgraph's log")
	}
}

// TestHostedDrainOnStop stops jetgraph (SIGTERM) while a hosted run is in its slow step: jetgraph
// stops taking runs, lets the run reach its next checkpoint (the slow step's), stops the host
// and exits without waiting for the run's long last step; the next jetgraph on the data resumes
// the run from that checkpoint and ends it once, no step run twice.
func TestHostedDrainOnStop(t *testing.T) {
	took := stopDuringSlowStep(t, "60s", true, "first:1 last:1 slow:1 slow_started:1")
	// The slow step ends once the drain has begun, the last one takes 12 s: a stop that waited
	// for the run's end would take over 12 s.
	if took > 10*time.Second {
		t.Fatalf("jetgraph took %s to stop: it waited for the run instead of draining it at its next checkpoint", took)
	}
}

// TestHostedCutOffOnStop stops jetgraph with a grace period shorter than the hosted run's slow
// step: the run is cut off there, and the next jetgraph resumes it from its last checkpoint (the
// first step's): the slow step starts again and ends once, the first one does not run again.
func TestHostedCutOffOnStop(t *testing.T) {
	stopDuringSlowStep(t, "1s", false, "first:1 last:1 slow:1 slow_started:2")
}

// stopDuringSlowStep serves the hosted project with --grace-period grace, stops jetgraph
// (SIGTERM) while a run of the graph "drain" is in its slow step, starts another jetgraph on the
// data, which must end the run, and checks the steps' executions (the store's counts, as
// "first:1 last:1 slow:1 slow_started:1"). It returns how long the stop took.
//
// The slow step waits for a file (the project's DRAIN_GATE), so that the run is seen in it
// however long the machine takes to show it. With drained, the gate opens once the drain has
// begun (the run then reaches the step's checkpoint within the grace period); else once
// jetgraph has stopped (the step was cut off, and the next jetgraph runs it again).
func stopDuringSlowStep(t *testing.T, grace string, drained bool, executions string) time.Duration {
	t.Helper()
	emb := startEmbeddings(t)
	gate := filepath.Join(t.TempDir(), "gate")
	flags := append(projectFlags(t, "GREETING=hi\nOPENAI_BASE_URL="+emb.URL+"/v1\nOPENAI_API_KEY=sk-test\nDRAIN_GATE="+gate+"\n"),
		"--grace-period", grace, "--lease-ttl", "2s", "--dispatch-ack-wait", "3s")
	openGate := func() {
		if err := os.WriteFile(gate, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data := t.TempDir()
	srv := startServerArgs(t, data, flags...)
	thread := get(api(t, "POST", srv.URL+"/threads", `{}`, 200), "thread_id").(string)
	run := get(api(t, "POST", srv.URL+"/threads/"+thread+"/runs",
		`{"assistant_id":"drain","input":{"messages":[{"role":"user","content":"go"}]}}`, 200), "run_id").(string)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if fmt.Sprint(get(api(t, "GET", srv.URL+"/threads/"+thread+"/state", "", 200), "next")) == "[slow]" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the run never reached its slow step")
		}
	}
	stopped := time.Now()
	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	const drainLine = "draining: runs stop at their next checkpoint"
	if drained {
		for deadline := time.Now().Add(10 * time.Second); !strings.Contains(srv.logs.String(), drainLine); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("no drain in the log 10s after SIGTERM:\n%s", srv.logs.String())
			}
		}
		openGate()
	}
	select {
	case <-srv.done:
	case <-time.After(45 * time.Second):
		t.Fatal("jetgraph did not stop within 45s of SIGTERM")
	}
	took := time.Since(stopped)
	if !strings.Contains(srv.logs.String(), drainLine) {
		t.Fatalf("no drain in the log:\n%s", srv.logs.String())
	}
	openGate() // for the run's slow step again, when it was cut off

	srv = startServerArgs(t, data, flags...)
	waitRun(t, srv.URL, thread, run, "success")
	if got := strings.Join(threadMessages(t, srv.URL, thread), "|"); got != "go|first|slow done|last done" {
		t.Fatalf("messages after the restart: %q", got)
	}
	item := api(t, "GET", srv.URL+"/store/items?namespace=executions&key="+thread, "", 200)
	if got := fmt.Sprint(get(item, "value")); got != "map["+executions+"]" {
		t.Fatalf("the steps' executions: %s, want %s", got, executions)
	}
	return took
}

// TestHostedReplay shows a hosted Python graph's thread in `jetgraph events`, imports its
// export into another jetgraph (its state read and a run going on by the hosted graph), and
// re-executes it with `jetgraph replay --file`: the binary starts the graph's host and compares
// each step with the record (what it changed in the state). The same project replays alike; with
// the .env file's GREETING changed the graph answers otherwise, and the replay names the step
// that diverged and fails.
func TestHostedReplay(t *testing.T) {
	emb := startEmbeddings(t)
	flags := projectFlags(t, "GREETING=hello\nOPENAI_BASE_URL="+emb.URL+"/v1\nOPENAI_API_KEY=sk-test\n")
	data := t.TempDir()
	srv := startServerArgs(t, data, flags...)
	thread := get(api(t, "POST", srv.URL+"/threads", `{}`, 200), "thread_id").(string)
	for _, word := range []string{"world", "moon"} {
		api(t, "POST", srv.URL+"/threads/"+thread+"/runs/wait",
			`{"assistant_id":"notes","input":{"messages":[{"role":"user","content":"`+word+`"}]}}`, 200)
	}
	srv.Stop()
	bin := buildBinary(t)
	export, err := exec.Command(bin, "export", "thread", thread, "--data", data).Output()
	if err != nil {
		t.Fatalf("export: %v", err)
	}
	file := filepath.Join(t.TempDir(), "thread.jgx")
	if err := os.WriteFile(file, export, 0o644); err != nil {
		t.Fatal(err)
	}
	replay := func(flags []string) (string, error) {
		out, err := exec.Command(bin, append([]string{"replay", "--file", file}, flags[:4]...)...).CombinedOutput()
		return string(out), err
	}
	if out, err := replay(flags); err != nil || !strings.Contains(out, "replayed 2 run(s), 6 step(s): no divergence") {
		t.Fatalf("replay of the same project: %v\n%s", err, out)
	}
	// The log holds the hosted graph's checkpoints as a Go graph's: `jetgraph events` shows them.
	events, err := exec.Command(bin, "events", "thread", thread, "--data", data, "--type", "checkpoint").Output()
	if err != nil || strings.Count(string(events), "\n") < 6 {
		t.Fatalf("jetgraph events --type checkpoint: %v\n%s", err, events)
	}
	// Imported into another jetgraph serving the same project, the thread's state is the hosted
	// graph's, and a run on it goes on from the imported checkpoints.
	other := startServerArgs(t, t.TempDir(), flags...)
	imported, err := exec.Command(bin, "import", file, "--url", other.URL).Output()
	if err != nil {
		t.Fatalf("import: %v", err)
	}
	var copied struct {
		ThreadID string `json:"thread_id"`
	}
	if err := json.Unmarshal(imported, &copied); err != nil || copied.ThreadID == thread {
		t.Fatalf("import printed %s (%v)", imported, err)
	}
	copyID := copied.ThreadID
	before := strings.Join(threadMessages(t, other.URL, copyID), "|")
	if want := "world|HELLO WORLD!|moon|HELLO MOON!"; before != want {
		t.Fatalf("the imported thread's state: %q, want %q", before, want)
	}
	api(t, "POST", other.URL+"/threads/"+copyID+"/runs/wait",
		`{"assistant_id":"notes","input":{"messages":[{"role":"user","content":"sun"}]}}`, 200)
	if after := strings.Join(threadMessages(t, other.URL, copyID), "|"); !strings.HasPrefix(after, before+"|sun|") {
		t.Fatalf("a run on the imported thread: %q, want it to go on from %q", after, before)
	}
	other.Stop()

	changed := projectFlags(t, "GREETING=bye\nOPENAI_BASE_URL="+emb.URL+"/v1\nOPENAI_API_KEY=sk-test\n")
	out, err := replay(changed)
	if err == nil || !strings.Contains(out, "step 1: state differ") || !strings.Contains(out, "BYE WORLD!") {
		t.Fatalf("replay with another GREETING: %v\n%s", err, out)
	}
}
