package routewalk_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/controlplane"
	cpkeys "github.com/jetgraph/jetgraph/engine/controlplane/keys"
	"github.com/jetgraph/jetgraph/engine/graphs"
	"github.com/jetgraph/jetgraph/engine/owners"
	"github.com/jetgraph/jetgraph/engine/platform"
	"github.com/jetgraph/jetgraph/engine/platform/platformtest"
	"github.com/jetgraph/jetgraph/engine/tracing"
	"github.com/jetgraph/jetgraph/engine/tracing/trace"
	"github.com/jetgraph/jetgraph/httpapi"
	"github.com/jetgraph/jetgraph/httpapi/a2a"
	"github.com/jetgraph/jetgraph/httpapi/controlapi"
	"github.com/jetgraph/jetgraph/httpapi/httpapitest"
	"github.com/jetgraph/jetgraph/httpapi/tracingapi"
	"github.com/jetgraph/jetgraph/projections/deployments/deploymentstest"
)

// The two users of the walk: the runtime's by bearer token (their rules are owners.Rules), the
// tracing API's and the control plane's by API key, each key its own tenant.
const (
	walkTokenA, walkTokenB = "walk-token-alice", "walk-token-bob"
	walkUserA, walkUserB   = "alice", "bob"
	walkTraceKeyA          = "walk-trace-acme"
	walkTraceKeyB          = "walk-trace-bravo"
)

// walkAuth is the runtime's Authenticator of the walk and, being an engine.Authorizer too, its
// rules: owners.Rules, each user reaching only what they made.
type walkAuth struct{ owners.Rules }

func (walkAuth) Authenticate(r *http.Request) (engine.User, error) {
	switch r.Header.Get("Authorization") {
	case "Bearer " + walkTokenA:
		return engine.User{Identity: walkUserA}, nil
	case "Bearer " + walkTokenB:
		return engine.User{Identity: walkUserB}, nil
	}
	return engine.User{}, engine.E(engine.Op("walk.authenticate"), engine.Unauthorized, "Invalid token")
}

func (walkAuth) Methods() []string { return []string{"custom"} }

// walkStack is the whole server the binary serves (runtime, streams, crons, A2A, MCP, tracing,
// control plane) on a real embedded JetStream and bbolt, every exchange checked against the
// OpenAPI document.
type walkStack struct {
	URL string
	// The control plane's tenants' keys.
	cpA, cpB string
}

func startWalkStack(t *testing.T) *walkStack {
	t.Helper()
	quiet := slog.New(slog.DiscardHandler)
	p := platformtest.Start(t, platform.Config{Graphs: graphs.Examples(), Logger: quiet,
		Tracing: platform.TracingConfig{Service: tracing.Config{APIKeys: map[string]string{walkTraceKeyA: "acme", walkTraceKeyB: "bravo"}}}}, nil)
	view, proj := deploymentstest.Open(t, p.Log)
	ks := cpkeys.New(p.Log, proj, view)
	ctx := context.Background()
	cpA, _, err := ks.Create(ctx, "acme", false, "")
	if err != nil {
		t.Fatal(err)
	}
	cpB, _, err := ks.Create(ctx, "rival", false, "")
	if err != nil {
		t.Fatal(err)
	}
	d := httpapi.Deps{Threads: p.Threads, Assistants: p.Assistants, Store: p.Store, Crons: p.Crons, Events: p.Log,
		Health: p.Health, Runner: p.Runner, Graphs: p.Graphs, Runs: p.Runs, Streams: httpapi.StreamsOf(p.Streams),
		Outputs: p.Streams, Logger: quiet, Auth: walkAuth{},
		Tracing:      tracingapi.New(p.Tracing),
		A2A:          a2a.New(a2a.Deps{Assistants: p.Assistants, Runs: p.Runs, States: p.Runner, Threads: p.Threads, Logger: quiet}),
		ControlPlane: controlapi.New(controlplane.NewService(p.Log, proj, view, nil, nil), ks, p.Log, nil),
	}
	h := httpapi.New(d).Handler()
	// Exchanges are checked against the document served, with its security and 401s.
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/openapi.json", nil))
	if rec.Code != 200 {
		t.Fatalf("GET /openapi.json: %d", rec.Code)
	}
	ts := httpapitest.NewServer(t, rec.Body.Bytes(), h)
	return &walkStack{URL: ts.URL, cpA: cpA, cpB: cpB}
}

// walkAnswer is one exchange's answer: its status and the body read (an event stream's for a
// moment only).
type walkAnswer struct {
	status int
	ctype  string
	body   []byte
}

func (a walkAnswer) json() any {
	var v any
	_ = json.Unmarshal(a.body, &v)
	return v
}

// send sends body ("" for none) with the headers; an event stream is read for streamRead, as
// some stay open.
func (s *walkStack) send(t testing.TB, method, path, body string, header map[string]string) walkAnswer {
	t.Helper()
	return s.sendAs(t, method, path, body, "application/json", header)
}

// sendAs is send with the body's content type.
func (s *walkStack) sendAs(t testing.TB, method, path, body, ctype string, header map[string]string) walkAnswer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.URL+path, r)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", ctype)
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := noRedirects.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if ct == httpapitest.MIMEEventStream {
		timer := time.AfterFunc(streamRead, cancel)
		defer timer.Stop()
	}
	raw, _ := io.ReadAll(resp.Body)
	return walkAnswer{status: resp.StatusCode, ctype: ct, body: raw}
}

// streamRead is how long an event stream's answer is read.
const streamRead = 1500 * time.Millisecond

// walkAs is who a walk's request is made by: the runtime's bearer token, the tracing key and
// the control plane's key of one user, or none of them.
type walkAs struct{ token, traceKey, cpKey string }

func (w walkAs) header(g guard) map[string]string {
	switch g {
	case guardTracing:
		if w.traceKey != "" {
			return map[string]string{"X-Api-Key": w.traceKey}
		}
	case guardControl:
		if w.cpKey != "" {
			return map[string]string{"X-Api-Key": w.cpKey}
		}
	default:
		if w.token != "" {
			return map[string]string{"Authorization": "Bearer " + w.token}
		}
	}
	return nil
}

// must sends and fails the test unless the status is want; it returns the decoded body.
func (s *walkStack) must(t testing.TB, as walkAs, g guard, want int, method, path, body string) any {
	t.Helper()
	a := s.send(t, method, path, body, as.header(g))
	if a.status != want {
		t.Fatalf("%s %s: %d %s, want %d", method, path, a.status, clipBody(a.body), want)
	}
	return a.json()
}

func clipBody(b []byte) string {
	if len(b) > 400 {
		return string(b[:400]) + "…"
	}
	return string(b)
}

// walkIDs are what one user made, substituted into the table's paths and bodies.
type walkIDs struct {
	marker                                 string // in every metadata and value the user wrote
	thread, run, checkpoint, assistant     string
	cron, threadCron, key                  string
	traceRun, session, feedback, token     string
	deployment, revision, listener, spare  string // spare: a thread only deletes use
	spareRun, spareAssistant, spareCron    string
	spareDeployment, spareListener, secret string
	spareSessions                          [3]string
}

func (ids walkIDs) replacer() *strings.Replacer {
	return strings.NewReplacer("{marker}", ids.marker, "{thread}", ids.thread, "{run}", ids.run,
		"{checkpoint}", ids.checkpoint, "{assistant}", ids.assistant, "{cron}", ids.cron,
		"{thread_cron}", ids.threadCron, "{key}", ids.key, "{trace_run}", ids.traceRun,
		"{session}", ids.session, "{feedback}", ids.feedback, "{token}", ids.token,
		"{deployment}", ids.deployment, "{revision}", ids.revision, "{listener}", ids.listener,
		"{spare}", ids.spare, "{spare_run}", ids.spareRun, "{spare_assistant}", ids.spareAssistant,
		"{spare_cron}", ids.spareCron, "{spare_deployment}", ids.spareDeployment,
		"{spare_listener}", ids.spareListener, "{spare_session1}", ids.spareSessions[0],
		"{spare_session2}", ids.spareSessions[1], "{spare_session3}", ids.spareSessions[2], "{new}", uuid.NewString())
}

// secrets are the strings of ids that no other user may ever read.
func (ids walkIDs) secrets() []string {
	var out []string
	for _, s := range []string{ids.marker, ids.thread, ids.run, ids.checkpoint, ids.assistant, ids.cron, ids.threadCron,
		ids.traceRun, ids.session, ids.feedback, ids.deployment, ids.revision, ids.listener, ids.spare, ids.spareRun,
		ids.spareAssistant, ids.spareCron, ids.spareDeployment, ids.spareListener, ids.secret,
		ids.spareSessions[0], ids.spareSessions[1], ids.spareSessions[2]} {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// makeAll has as make one of everything: an assistant, a thread with checkpoints through a run,
// crons (one on the thread), a store item, a trace with feedback and a feedback token, a
// deployment with its revision and a listener; and a spare of what the walk deletes.
func (s *walkStack) makeAll(t *testing.T, as walkAs) walkIDs {
	t.Helper()
	m := "mk-" + strings.ReplaceAll(uuid.NewString(), "-", "")[:12]
	ids := walkIDs{marker: m, key: "key-" + m}
	rt := guardRuntime
	asst := func() string {
		v := s.must(t, as, rt, 200, "POST", "/assistants", `{"graph_id":"echo","name":"walk `+m+`","metadata":{"marker":"`+m+`"}}`)
		return field(v, "assistant_id").(string)
	}
	ids.assistant, ids.spareAssistant = asst(), asst()
	thread := func() (string, string) {
		th := field(s.must(t, as, rt, 200, "POST", "/threads", `{"metadata":{"marker":"`+m+`"}}`), "thread_id").(string)
		s.must(t, as, rt, 200, "POST", "/threads/"+th+"/runs/wait",
			`{"assistant_id":"`+ids.assistant+`","input":{"messages":[{"role":"user","content":"`+m+`"}]},"metadata":{"marker":"`+m+`"}}`)
		runs := s.must(t, as, rt, 200, "GET", "/threads/"+th+"/runs", "").([]any)
		return th, field(runs[0], "run_id").(string)
	}
	ids.thread, ids.run = thread()
	ids.spare, ids.spareRun = thread()
	hist := s.must(t, as, rt, 200, "GET", "/threads/"+ids.thread+"/history", "").([]any)
	ids.checkpoint = field(hist[len(hist)-1], "checkpoint", "checkpoint_id").(string)
	cron := func(path string) string {
		v := s.must(t, as, rt, 200, "POST", path, `{"assistant_id":"`+ids.assistant+`","schedule":"0 0 1 1 *","input":{"messages":"`+m+`"},"metadata":{"marker":"`+m+`"}}`)
		return field(v, "cron_id").(string)
	}
	ids.cron, ids.spareCron = cron("/runs/crons"), cron("/runs/crons")
	ids.threadCron = cron("/threads/" + ids.thread + "/runs/crons")
	s.must(t, as, rt, 204, "PUT", "/store/items", `{"namespace":["walk"],"key":"`+ids.key+`","value":{"marker":"`+m+`"}}`)

	// The tracing API: a trace, its feedback and a token, in the user's tenant.
	tr := guardTracing
	id, _ := uuid.NewV7()
	start := time.Now().Add(-time.Minute)
	ids.traceRun = id.String()
	run := map[string]any{"id": ids.traceRun, "trace_id": ids.traceRun, "dotted_order": trace.FormatSegment(start, ids.traceRun),
		"name": "walk", "run_type": "chain", "start_time": start.UTC().Format("2006-01-02T15:04:05.000000Z"),
		"inputs": map[string]any{"marker": m}, "session_name": "walk-" + m}
	raw, _ := json.Marshal(run)
	s.must(t, as, tr, 202, "POST", "/tracing/runs", string(raw))
	eventually(t, "the trace is read", func() bool {
		return s.send(t, "GET", "/tracing/runs/"+ids.traceRun, "", as.header(tr)).status == 200
	})
	sessions := s.must(t, as, tr, 200, "GET", "/tracing/sessions?name=walk-"+m, "").([]any)
	ids.session = field(sessions[0], "id").(string)
	for i := range ids.spareSessions {
		v := s.must(t, as, tr, 200, "POST", "/tracing/sessions", `{"name":"spare-`+m+fmt.Sprint(i)+`"}`)
		ids.spareSessions[i] = field(v, "id").(string)
	}
	ids.feedback = field(s.must(t, as, tr, 200, "POST", "/tracing/feedback", `{"run_id":"`+ids.traceRun+`","key":"walk","score":1,"comment":"`+m+`"}`), "id").(string)
	tok := s.must(t, as, tr, 200, "POST", "/tracing/feedback/tokens", `{"run_id":"`+ids.traceRun+`","feedback_key":"walk"}`)
	u, err := url.Parse(field(tok, "url").(string))
	if err != nil {
		t.Fatal(err)
	}
	ids.token = u.Path[strings.LastIndex(u.Path, "/")+1:]
	ids.secret = ids.token

	// The control plane: a deployment (with its first revision) and a listener of the tenant.
	cp := guardControl
	dep := func(name string) (string, string) {
		v := s.must(t, as, cp, 201, "POST", "/v2/deployments", `{"name":"`+name+`","source":"git_host","source_config":{"repo_url":"https://example.com/`+m+`.git","deployment_type":"dev"},"source_revision_config":{"repo_ref":"main"},"secrets":[]}`)
		rev, _ := field(v, "latest_revision_id").(string)
		return field(v, "id").(string), rev
	}
	ids.deployment, ids.revision = dep("walk-" + m)
	ids.spareDeployment, _ = dep("spare-" + m)
	listener := func(compute string) string {
		return field(s.must(t, as, cp, 201, "POST", "/v2/listeners", `{"compute_type":"k8s","compute_id":"`+compute+`"}`), "id").(string)
	}
	ids.listener, ids.spareListener = listener("walk-"+m), listener("spare-"+m)
	return ids
}

// TestRouteWalkIsolation walks every operation of the served OpenAPI document (a new one
// without a row fails it): as bob over alice's ids, each answers 404 or an empty list, a zero
// count, and never alice's ids or marker; as bob over his own ids, each works; without a
// credential, each guarded one answers 401. alice then finds all she made as she left it.
func TestRouteWalkIsolation(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the whole server")
	}
	s := startWalkStack(t)
	alice := walkAs{token: walkTokenA, traceKey: walkTraceKeyA, cpKey: s.cpA}
	bob := walkAs{token: walkTokenB, traceKey: walkTraceKeyB, cpKey: s.cpB}

	doc := s.send(t, "GET", "/openapi.json", "", nil)
	if doc.status != 200 {
		t.Fatalf("GET /openapi.json: %d", doc.status)
	}
	checkWalkCovers(t, doc.body)

	a := s.makeAll(t, alice)
	secrets := a.secrets()

	stateBefore := field(s.must(t, alice, guardRuntime, 200, "GET", "/threads/"+a.thread+"/state", ""), "values")
	t.Run("bob over alice's ids", func(t *testing.T) {
		for _, r := range walkTable {
			if r.guard == guardOpen || r.guard == guardDev {
				continue
			}
			t.Run(r.name(), func(t *testing.T) {
				got := r.send(t, s, a, bob.header(r.guard))
				for _, sec := range secrets {
					if bytes.Contains(got.body, []byte(sec)) && !r.names(a, sec) {
						t.Errorf("%s answered %d with alice's %q: %s", r.name(), got.status, sec, clipBody(got.body))
					}
				}
				if r.refuse != "" && bytes.Contains(got.body, []byte(r.refuse)) {
					t.Errorf("%s: %s, want no %s", r.name(), clipBody(got.body), r.refuse)
				}
				if !slices.Contains(r.other.statuses(), got.status) {
					t.Errorf("%s: %d %s, want %v", r.name(), got.status, clipBody(got.body), r.other.statuses())
				} else if r.other.empty && got.status == 200 && !emptyAnswer(got) {
					t.Errorf("%s: %s, want an empty list or a zero count", r.name(), clipBody(got.body))
				}
			})
		}
	})

	t.Run("alice's are as she left them", func(t *testing.T) {
		for _, c := range []struct {
			g    guard
			path string
		}{
			{guardRuntime, "/threads/{thread}"}, {guardRuntime, "/threads/{spare}"}, {guardRuntime, "/threads/{thread}/runs/{run}"},
			{guardRuntime, "/threads/{thread}/state"}, {guardRuntime, "/assistants/{assistant}"}, {guardRuntime, "/assistants/{spare_assistant}"},
			{guardRuntime, "/store/items?namespace=walk&key={key}"}, {guardTracing, "/tracing/runs/{trace_run}"},
			{guardTracing, "/tracing/feedback/{feedback}"}, {guardTracing, "/tracing/sessions/{session}"},
			{guardControl, "/v2/deployments/{deployment}"}, {guardControl, "/v2/listeners/{listener}"},
		} {
			path := a.replacer().Replace(c.path)
			got := s.send(t, "GET", path, "", alice.header(c.g))
			if got.status != 200 || !bytes.Contains(got.body, []byte(a.marker)) && c.g != guardControl {
				t.Errorf("alice's GET %s: %d %s", path, got.status, clipBody(got.body))
			}
		}
		if after := field(s.must(t, alice, guardRuntime, 200, "GET", "/threads/"+a.thread+"/state", ""), "values"); jsonText(t, after) != jsonText(t, stateBefore) {
			t.Errorf("alice's thread state changed: %s, was %s", jsonText(t, after), jsonText(t, stateBefore))
		}
		crons := s.send(t, "POST", "/runs/crons/search", `{}`, alice.header(guardRuntime))
		for _, id := range []string{a.cron, a.spareCron, a.threadCron} {
			if !bytes.Contains(crons.body, []byte(id)) {
				t.Errorf("alice's cron %s is gone: %s", id, clipBody(crons.body))
			}
		}
	})

	b := s.makeAll(t, bob)
	t.Run("bob over his own ids", func(t *testing.T) {
		for _, r := range walkTable {
			if r.guard == guardDev {
				continue
			}
			t.Run(r.name(), func(t *testing.T) {
				got := r.send(t, s, b, bob.header(r.guard))
				if got.status != r.own {
					t.Errorf("%s: %d %s, want %d", r.name(), got.status, clipBody(got.body), r.own)
				}
				for _, sec := range secrets {
					if bytes.Contains(got.body, []byte(sec)) {
						t.Errorf("%s answered bob with alice's %q: %s", r.name(), sec, clipBody(got.body))
					}
				}
			})
		}
	})

	t.Run("no credential", func(t *testing.T) {
		for _, r := range walkTable {
			t.Run(r.name(), func(t *testing.T) {
				got := r.send(t, s, b, nil)
				want := http.StatusUnauthorized
				switch r.guard {
				case guardOpen:
					want = r.own
				case guardDev:
					want = http.StatusNotFound
				}
				if r.anonymous != 0 {
					want = r.anonymous
				}
				if got.status != want {
					t.Errorf("%s without a credential: %d %s, want %d", r.name(), got.status, clipBody(got.body), want)
				}
			})
		}
	})
}

// emptyAnswer reports whether an answer is an empty list, a zero count, null (a store item not
// found), or an object whose lists are all empty (a page of resources).
func emptyAnswer(a walkAnswer) bool {
	switch v := a.json().(type) {
	case nil:
		return string(bytes.TrimSpace(a.body)) == "null" || len(bytes.TrimSpace(a.body)) == 0
	case []any:
		return len(v) == 0
	case float64:
		return v == 0
	case map[string]any:
		for _, x := range v {
			if l, ok := x.([]any); ok && len(l) > 0 {
				return false
			}
		}
		return true
	}
	return false
}

// checkWalkCovers fails the test for every operation of the document without a row, and every
// row whose operation the document lacks.
func checkWalkCovers(t *testing.T, document []byte) {
	t.Helper()
	var d struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(document, &d); err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for p, ops := range d.Paths {
		for m := range ops {
			if m != "parameters" {
				documented[strings.ToUpper(m)+" "+p] = true
			}
		}
	}
	rows := map[string]bool{}
	for _, r := range walkTable {
		rows[r.method+" "+r.path] = true
	}
	var missing, extra []string
	for op := range documented {
		if !rows[op] {
			missing = append(missing, op)
		}
	}
	for op := range rows {
		if !documented[op] {
			extra = append(extra, op)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	if len(missing) > 0 {
		t.Errorf("operations of /openapi.json the walk has no row for: %s", strings.Join(missing, "; "))
	}
	if len(extra) > 0 {
		t.Errorf("rows of the walk the document lacks: %s", strings.Join(extra, "; "))
	}
	if len(documented) < 100 {
		t.Errorf("the document lists only %d operations", len(documented))
	}
}

// guard is how a route is authenticated.
type guard int

const (
	guardRuntime guard = iota // the runtime's Authenticator and its rules (owners.Rules)
	guardTracing              // the tracing API's keys, each of a tenant
	guardControl              // the control plane's keys, each of a tenant
	guardOpen                 // open by design
	guardDev                  // served only with jetgraph serve --dev (not here)
)

// otherWant is what bob may get over alice's ids: one of the statuses, and with empty an empty
// list or zero count when it is 200. No answer may hold alice's ids or marker, whatever it is.
type otherWant struct {
	status []int
	empty  bool
}

func (o otherWant) statuses() []int { return o.status }

var (
	notFound = otherWant{status: []int{404}}
	empty    = otherWant{status: []int{200}, empty: true}
)

// answers is an otherWant of these statuses, the body free of alice's data.
func answers(status ...int) otherWant { return otherWant{status: status} }

// walkRow is one operation of the document and how the walk calls it.
type walkRow struct {
	method, path string // the document's operation
	// req is the path and query sent, with {placeholders} of walkIDs; "" is path.
	req  string
	body string
	// ctype is the body's content type; "" is JSON.
	ctype string
	guard
	other otherWant // bob over alice's ids
	own   int       // bob over his own ids (an open route: anyone)
	// refuse, when set, must not be in bob's answer over alice's ids (a JSON-RPC "result").
	refuse string
	// anonymous, when set, is the status without a credential (else 401, or own when open).
	anonymous int
	why       string // why the route is open, or answers as it does
}

func (r walkRow) name() string { return r.method + " " + r.path }

// send sends the row's request with ids and the headers.
func (r walkRow) send(t testing.TB, s *walkStack, ids walkIDs, header map[string]string) walkAnswer {
	t.Helper()
	ct := r.ctype
	if ct == "" {
		ct = "application/json"
	}
	rep := ids.replacer()
	return s.sendAs(t, r.method, rep.Replace(r.call()), rep.Replace(r.body), ct, header)
}

// names reports whether the row's request names sec (with ids): an answer may say back the id
// it was asked about ("Thread X not found"), never anything else of alice's.
func (r walkRow) names(ids walkIDs, sec string) bool {
	rep := ids.replacer()
	return strings.Contains(rep.Replace(r.call()), sec) || strings.Contains(rep.Replace(r.body), sec)
}

func (r walkRow) call() string {
	if r.req != "" {
		return r.req
	}
	return r.path
}

// noRedirects answers a redirect as it is: the walk checks each route's own answer.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// field is the value at path in decoded JSON, nil where a step is missing.
func field(v any, path ...string) any {
	for _, p := range path {
		m, _ := v.(map[string]any)
		v = m[p]
	}
	return v
}

// eventually and jsonText are httpapitest's, under the names this package's tests use.
var (
	eventually = httpapitest.Eventually
	jsonText   = httpapitest.JSONText
)
