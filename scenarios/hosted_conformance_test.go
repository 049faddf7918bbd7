package scenarios

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/engine/graphs"
	"github.com/jetgraph/jetgraph/engine/hosting"
)

// TestHostConformance holds both hosts to one protocol (engine/hosting/PROTOCOL.md): the same
// graph ("visits", written in Python and in TypeScript) run through hosting.Graph with the real
// libraries must give the same answers, checkpoints and writes in jetgraph's shapes, its store
// calls served by jetgraph's side.
func TestHostConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	for _, lang := range []string{graphs.LanguagePython, graphs.LanguageTypeScript} {
		t.Run(lang, func(t *testing.T) {
			opts, config := hostLangProject(t, lang, "")
			reg, err := graphs.LoadConfig(config)
			if err != nil {
				t.Fatal(err)
			}
			hosts, err := hosting.Attach(reg, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				for _, h := range hosts {
					h.Close()
				}
			}()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			for _, h := range hosts {
				if err := h.WaitReady(ctx); err != nil {
					t.Fatal(err)
				}
			}
			conformance(ctx, t, reg)
			drawingConformance(ctx, t, reg)
		})
	}
}

// hostLangProject readies the hosted scenario project of lang (its venv, its node_modules) and
// returns the options its hosts start with and its config file: name in the project's folder,
// or its langgraph.json when name is "".
func hostLangProject(t *testing.T, lang, name string) (hosting.Options, string) {
	opts := hosting.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	config := hostedTypeScriptConfig
	if lang == graphs.LanguagePython {
		config = hostedPythonConfig
		opts.Python = ensureVenv(t, filepath.Join(filepath.Dir(hostedPythonConfig), "requirements.txt"))
	} else {
		ensureTypeScriptProject(t)
	}
	if name != "" {
		config = filepath.Join(filepath.Dir(config), name)
	}
	return opts, config
}

func conformance(ctx context.Context, t *testing.T, reg *graphs.Registry) {
	cfg := graph.Config{Configurable: map[string]any{"run_id": "run-1", "graph_id": "visits"}}
	g, err := reg.Runnable("visits", cfg)
	if err != nil {
		t.Fatal(err)
	}
	saver, store := graph.NewMemorySaver(), newItems()
	var mu sync.Mutex
	var modes []string
	sink := func(e graph.Event) {
		mu.Lock()
		defer mu.Unlock()
		modes = append(modes, string(e.Kind))
	}
	run := graph.RunOptions{ThreadID: "th", Config: cfg, Saver: saver, Store: store, Sink: sink,
		Input:       map[string]any{"messages": []any{map[string]any{"role": "user", "content": "Ada"}}},
		Metadata:    map[string]any{"run_id": "run-1", "graph_id": "visits"},
		StreamModes: []engine.StreamMode{engine.StreamValues, engine.StreamUpdates}}
	res, err := g.Run(ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted || len(res.Interrupts) != 1 || fmt.Sprint(res.Interrupts[0].Value) != "map[question:continue?]" || res.Interrupts[0].ID == "" {
		t.Fatalf("the run's end: %+v", res)
	}
	if got := texts(res.Values); got != "Ada|hello Ada (visit 1)" {
		t.Errorf("values %s", got)
	}
	mu.Lock()
	for _, m := range []string{"values", "updates", "checkpoints"} {
		if !slices.Contains(modes, m) {
			t.Errorf("no %s event among %v", m, modes)
		}
	}
	if slices.Contains(modes, "messages") {
		t.Errorf("messages events though the run streams values and updates only: %v", modes)
	}
	mu.Unlock()

	// The checkpoints are jetgraph's: integer versions, the run's metadata, the interrupt as a
	// pending write in the shape the projections read.
	tup, err := saver.Get(ctx, graph.Ref{ThreadID: "th"})
	if err != nil || tup == nil {
		t.Fatalf("latest checkpoint: %v %v", tup, err)
	}
	if tup.Metadata["run_id"] != "run-1" || fmt.Sprint(tup.Metadata["step"]) != "1" || tup.Parent == nil {
		t.Errorf("checkpoint metadata %v, parent %v", tup.Metadata, tup.Parent)
	}
	if tup.Checkpoint.ChannelVersions["messages"] == 0 {
		t.Errorf("channel versions %v", tup.Checkpoint.ChannelVersions)
	}
	var ivs []graph.InterruptValue
	for _, w := range tup.Writes {
		if w.Channel == graph.Interrupt {
			if err := json.Unmarshal(w.Value, &ivs); err != nil {
				t.Errorf("interrupt write %s: %v", w.Value, err)
			}
		}
	}
	if len(ivs) != 1 || ivs[0].ID != res.Interrupts[0].ID {
		t.Errorf("interrupt writes %v, want the run's interrupt", ivs)
	}
	if it, ok := store.items["users/Ada/profile"]; !ok || fmt.Sprint(it.Value["visits"]) != "1" {
		t.Errorf("store %v", store.items)
	}

	snap, err := g.State(ctx, saver, graph.Ref{ThreadID: "th"}, false)
	if err != nil || snap == nil {
		t.Fatalf("state: %v %v", snap, err)
	}
	if fmt.Sprint(snap.Next) != "[ask]" || len(snap.Tasks) != 1 || len(snap.Tasks[0].Interrupts) != 1 || snap.Ref.ID != tup.Ref.ID {
		t.Errorf("state %+v", snap)
	}

	run.Input, run.Command = nil, &graph.Command{Resume: "yes"}
	run.Config.Configurable["run_id"], run.Metadata["run_id"] = "run-2", "run-2"
	res, err = g.Run(ctx, run)
	if err != nil || res.Interrupted {
		t.Fatalf("resumed run: %+v %v", res, err)
	}
	if got := texts(res.Values); got != "Ada|hello Ada (visit 1)|Ada said yes" {
		t.Errorf("resumed values %s", got)
	}
	hist, err := g.History(ctx, saver, graph.Ref{ThreadID: "th"}, graph.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var steps []string
	for _, s := range hist {
		steps = append(steps, fmt.Sprint(s.Metadata["step"]))
	}
	if strings.Join(steps, ",") != "2,1,0,-1" {
		t.Errorf("history steps %v", steps)
	}
	ref, err := g.UpdateState(ctx, saver, graph.Ref{ThreadID: "th"},
		[][]graph.Update{{{Values: map[string]any{"messages": []any{map[string]any{"role": "user", "content": "more"}}}, AsNode: "ask"}}}, nil)
	if err != nil || ref.ID == "" {
		t.Fatalf("update state: %v %v", ref, err)
	}
	snap, err = g.State(ctx, saver, graph.Ref{ThreadID: "th"}, false)
	if err != nil || snap.Ref.ID != ref.ID || !strings.HasSuffix(texts(snap.Values), "|more") || snap.Metadata["source"] != "update" {
		t.Errorf("state after the update: %+v %v", snap, err)
	}
}

// texts joins the contents of a state's messages.
func texts(values graph.State) string {
	ms, _ := values["messages"].([]any)
	var out []string
	for _, m := range ms {
		mm, _ := m.(map[string]any)
		out = append(out, fmt.Sprint(mm["content"]))
	}
	return strings.Join(out, "|")
}

// items is an in-memory store of the hosting.ItemStore calls, for the conformance test.
type items struct {
	mu    sync.Mutex
	items map[string]engine.Item
}

func newItems() *items { return &items{items: map[string]engine.Item{}} }

func itemKey(ns []string, key string) string { return strings.Join(append(slices.Clone(ns), key), "/") }

func (s *items) Get(ctx context.Context, ns []string, key string) (map[string]any, bool, error) {
	it, ok, err := s.GetItem(ctx, ns, key)
	return it.Value, ok, err
}

func (s *items) Put(ctx context.Context, ns []string, key string, value map[string]any) error {
	return s.PutItem(ctx, ns, key, value, nil, nil)
}

func (s *items) GetItem(_ context.Context, ns []string, key string) (engine.Item, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	it, ok := s.items[itemKey(ns, key)]
	return it, ok, nil
}

func (s *items) PutItem(_ context.Context, ns []string, key string, value map[string]any, _ any, _ *float64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := engine.At(time.Now())
	s.items[itemKey(ns, key)] = engine.Item{Namespace: ns, Key: key, Value: value, CreatedAt: now, UpdatedAt: now}
	return nil
}

func (s *items) Delete(_ context.Context, ns []string, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.items, itemKey(ns, key))
	return nil
}

func (s *items) Search(context.Context, engine.StoreQuery) ([]engine.Item, error) { return nil, nil }

func (s *items) ListNamespaces(context.Context, engine.NamespaceQuery) ([][]string, error) {
	return nil, nil
}

// drawingConformance holds both hosts' graph requests to one drawing of "visits": the same nodes
// and edges (in any order: the libraries list them differently), without the nodes' class paths.
func drawingConformance(ctx context.Context, t *testing.T, reg *graphs.Registry) {
	r, err := reg.Runnable("visits", graph.Config{})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := r.(*hosting.Graph).Drawing(ctx, graph.XrayAll)
	if err != nil {
		t.Fatalf("graph request: %v", err)
	}
	var drawn struct {
		Nodes []struct {
			ID   string         `json:"id"`
			Data map[string]any `json:"data"`
		} `json:"nodes"`
		Edges []struct{ Source, Target string } `json:"edges"`
	}
	if err := json.Unmarshal(raw, &drawn); err != nil {
		t.Fatalf("drawing %s: %v", raw, err)
	}
	var nodes, edges []string
	for _, n := range drawn.Nodes {
		if _, ok := n.Data["id"]; ok {
			t.Errorf("node %s keeps its class path: %s", n.ID, raw)
		}
		nodes = append(nodes, n.ID)
	}
	for _, e := range drawn.Edges {
		edges = append(edges, e.Source+">"+e.Target)
	}
	slices.Sort(nodes)
	slices.Sort(edges)
	if want := []string{"__end__", "__start__", "ask", "greet"}; !slices.Equal(nodes, want) {
		t.Errorf("nodes %v, want %v", nodes, want)
	}
	if want := []string{"__start__>greet", "ask>__end__", "greet>ask"}; !slices.Equal(edges, want) {
		t.Errorf("edges %v, want %v", edges, want)
	}
}

// TestHostAuthConformance holds both hosts to the protocol's auth frames (PROTOCOL.md, "Auth
// handler"): one handler, owners_auth.py and owners_auth.ts, loaded by hosting.AttachProject as
// serve loads it, must authenticate and authorize alike: users and their refusals, values the
// rules change (owner metadata, a store namespace; a Python rule sees it as a tuple), filters,
// a rule's 403 with its message, an assert, False, a result that is no filter, a guest's
// is_authenticated false reaching the rules, and operations no rule answers allowed as they are.
func TestHostAuthConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	answers := map[string]string{}
	for _, lang := range []string{graphs.LanguagePython, graphs.LanguageTypeScript} {
		t.Run(lang, func(t *testing.T) {
			opts, config := hostLangProject(t, lang, "owners_auth.json")
			proj, err := graphs.Catalog{}.LoadProject(config)
			if err != nil {
				t.Fatal(err)
			}
			hosts, _, auth, err := hosting.AttachProject(proj.Graphs, nil, proj.Auth, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				for _, h := range hosts {
					h.Close()
				}
			}()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			if err := auth.WaitLoaded(ctx); err != nil {
				t.Fatal(err)
			}
			answers[lang] = authConformance(ctx, t, auth)
		})
	}
	if py, ts := answers[graphs.LanguagePython], answers[graphs.LanguageTypeScript]; py != "" && py != ts {
		t.Errorf("the hosts answer differently:\npython:\n%s\ntypescript:\n%s", py, ts)
	}
}

// authConformance asks auth the table's questions, checks each answer and returns them all as
// text, for the two hosts' to be compared.
func authConformance(ctx context.Context, t *testing.T, auth *hosting.Auth) string {
	var b strings.Builder
	users := map[string]engine.User{}
	for _, c := range []struct{ token, want string }{
		{"", "unauthorized: Missing bearer token"},
		{"tok-nobody", "unauthorized: Unknown token"},
		{"tok-ada", "ada Ada L. [threads:delete] authenticated=true"},
		{"tok-bob", "bob bob [] authenticated=true"},
		{"tok-guest", "guest guest [] authenticated=false"},
	} {
		r := httptest.NewRequest(http.MethodGet, "/threads/search?limit=1", nil)
		if c.token != "" {
			r.Header.Set("Authorization", "Bearer "+c.token)
		}
		u, err := auth.Authenticate(r)
		got := fmt.Sprintf("%s %s %v authenticated=%v", u.Identity, u.DisplayName(), u.Permissions, u.Object()["is_authenticated"])
		if err != nil {
			got = fmt.Sprintf("%s: %s", engine.KindOf(err), engineDetail(err))
		} else {
			users[u.Identity] = u
		}
		if got != c.want {
			t.Errorf("authenticate %q: %s, want %s", c.token, got, c.want)
		}
		fmt.Fprintf(&b, "authenticate %s: %s\n", c.token, got)
	}
	owned := map[string]any{"owner": "ada"}
	for _, c := range []struct {
		user     string
		resource engine.AuthResource
		action   engine.AuthAction
		value    map[string]any
		want     string // the value after the rule, the filter's answer on owned and on {}, or the error
	}{
		{"ada", engine.ResourceThreads, engine.ActionCreate, map[string]any{"thread_id": "t1", "metadata": map[string]any{"a": 1}},
			`{"metadata":{"a":1,"owner":"ada"},"thread_id":"t1"} no filter`},
		{"bob", engine.ResourceThreads, engine.ActionCreate, map[string]any{"thread_id": "t2", "metadata": nil},
			`{"metadata":{"owner":"bob"},"thread_id":"t2"} no filter`},
		{"ada", engine.ResourceThreads, engine.ActionRead, map[string]any{"thread_id": "t1"}, `{"thread_id":"t1"} owned=true other=false`},
		{"bob", engine.ResourceThreads, engine.ActionRead, map[string]any{"thread_id": "t1"}, `{"thread_id":"t1"} owned=false other=false`},
		{"ada", engine.ResourceThreads, engine.ActionCreateRun, map[string]any{"thread_id": "t1", "metadata": map[string]any{}},
			`{"metadata":{"owner":"ada"},"thread_id":"t1"} owned=true other=false`},
		{"ada", engine.ResourceThreads, engine.ActionDelete, map[string]any{"thread_id": "t1"}, `{"thread_id":"t1"} owned=true other=false`},
		{"bob", engine.ResourceThreads, engine.ActionDelete, map[string]any{"thread_id": "t1"}, `forbidden: bob may not delete threads`},
		{"ada", engine.ResourceThreads, engine.ActionSearch, map[string]any{"limit": 10}, `{"limit":10} owned=true other=false`},
		{"guest", engine.ResourceThreads, engine.ActionSearch, map[string]any{"limit": 10}, `forbidden: guests may not search threads`},
		{"ada", engine.ResourceAssistants, engine.ActionCreate, map[string]any{"graph_id": "g", "metadata": map[string]any{}},
			`{"graph_id":"g","metadata":{"owner":"ada"}} no filter`},
		{"ada", engine.ResourceAssistants, engine.ActionRead, map[string]any{"assistant_id": "a1"}, `{"assistant_id":"a1"} no filter`},
		{"ada", engine.ResourceAssistants, engine.ActionUpdate, map[string]any{"assistant_id": "a1"}, `forbidden: Forbidden`},
		{"ada", engine.ResourceAssistants, engine.ActionDelete, map[string]any{"assistant_id": "a1"}, `internal error: Auth handler returned invalid result`},
		{"bob", engine.ResourceCrons, engine.ActionCreate, map[string]any{"schedule": "* * * * *", "metadata": map[string]any{"k": "v"}},
			`{"metadata":{"k":"v","owner":"bob"},"schedule":"* * * * *"} no filter`},
		{"bob", engine.ResourceCrons, engine.ActionSearch, map[string]any{"limit": 10}, `{"limit":10} owned=false other=false`},
		{"ada", engine.ResourceStore, engine.ActionPut, map[string]any{"namespace": []string{"notes"}, "key": "k", "value": map[string]any{"x": 1}},
			`{"key":"k","namespace":["ada","notes"],"value":{"x":1}} no filter`},
		{"bob", engine.ResourceStore, engine.ActionListNamespaces, map[string]any{"namespace": nil, "suffix": nil},
			`{"namespace":["bob"],"suffix":null} no filter`},
	} {
		req := &engine.AuthRequest{User: users[c.user], Resource: c.resource, Action: c.action, Value: c.value}
		f, err := auth.Authorize(ctx, req)
		var got string
		switch {
		case err != nil:
			got = fmt.Sprintf("%s: %s", engine.KindOf(err), engineDetail(err))
			if strings.HasPrefix(c.want, "internal error: ") { // the hosts word their 500s apart; their start agrees
				got = got[:min(len(got), len(c.want))]
			}
		default:
			v, _ := json.Marshal(req.Value)
			got = string(v) + " no filter"
			if !f.IsZero() {
				got = fmt.Sprintf("%s owned=%v other=%v", v, f.Match(owned), f.Match(map[string]any{}))
			}
		}
		if got != c.want {
			t.Errorf("%s %s.%s: %s, want %s", c.user, c.resource, c.action, got, c.want)
		}
		fmt.Fprintf(&b, "%s %s.%s: %s\n", c.user, c.resource, c.action, got)
	}
	return b.String()
}

// engineDetail is the detail an engine error answers with.
func engineDetail(err error) string {
	var ee *engine.Error
	if errors.As(err, &ee) {
		return ee.Detail
	}
	return err.Error()
}
