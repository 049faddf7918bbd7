package webhooks

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/eventlog"
)

// hit is one request the test receiver got.
type hit struct {
	header http.Header
	body   []byte
}

// receiver is an httptest server whose answers are scripted per request (1-based).
type receiver struct {
	*httptest.Server
	mu   sync.Mutex
	hits []hit
}

func newReceiver(t *testing.T, answer func(n int, w http.ResponseWriter, r *http.Request)) *receiver {
	t.Helper()
	rc := &receiver{}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.hits = append(rc.hits, hit{header: r.Header.Clone(), body: body})
		n := len(rc.hits)
		rc.mu.Unlock()
		if r.Method != http.MethodPost {
			t.Errorf("method %s, want POST", r.Method)
		}
		answer(n, w, r)
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) got() []hit {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.hits)
}

func status(code int) func(int, http.ResponseWriter, *http.Request) {
	return func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(code) }
}

// noWait is a backoff that never waits: the tests never depend on the clock.
func noWait(int) time.Duration { return 0 }

func newDeliverer(t *testing.T, cfg Config) *Deliverer {
	t.Helper()
	if cfg.Backoff == nil {
		cfg.Backoff = noWait
	}
	d, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

var created = time.Date(2026, 3, 1, 10, 0, 0, 123456000, time.UTC)

func samplePayload() Payload {
	return Payload{
		RunID: "0195f3a0-0000-7000-8000-000000000001", ThreadID: "5b6b7d2e-8c1a-4f5e-9a3b-1c2d3e4f5a6b",
		AssistantID: "fe096781-5601-53d2-b2f6-0d3403f7e9ca", Status: "success",
		CreatedAt: engine.At(created), UpdatedAt: engine.At(created.Add(time.Second)),
		RunStartedAt: engine.At(created.Add(10 * time.Millisecond)), RunEndedAt: engine.At(created.Add(time.Second)),
		Metadata:          map[string]any{"user": "u1"},
		Kwargs:            &engine.RunKwargs{Input: map[string]any{"messages": []any{}}},
		MultitaskStrategy: "enqueue",
		Values:            map[string]any{"messages": []any{map[string]any{"type": "ai", "content": "hi"}}},
	}
}

func decode(t *testing.T, raw []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("body is not a JSON object: %v: %s", err, raw)
	}
	return m
}

func TestDeliverSuccess(t *testing.T) {
	rc := newReceiver(t, status(http.StatusNoContent))
	d := newDeliverer(t, Config{Headers: map[string]string{"Authorization": "Bearer receiver-token"}})
	p := samplePayload()
	res := d.Deliver(context.Background(), rc.URL+"/hook", p)
	if !res.Delivered || res.Err != nil || res.Skipped || len(res.Attempts) != 1 || res.Status() != 204 || res.Duration <= 0 {
		t.Fatalf("result %+v", res)
	}
	hits := rc.got()
	if len(hits) != 1 {
		t.Fatalf("%d requests, want 1", len(hits))
	}
	h := hits[0].header
	for k, want := range map[string]string{
		"Content-Type": "application/json", "User-Agent": DefaultUserAgent, DeliveryHeader: p.RunID,
		AttemptHeader: "1", "Authorization": "Bearer receiver-token",
	} {
		if got := h.Get(k); got != want {
			t.Errorf("header %s = %q, want %q", k, got, want)
		}
	}
	body := decode(t, hits[0].body)
	var keys []string
	for k := range body {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	want := slices.Clone(Fields)
	want = slices.DeleteFunc(want, func(f string) bool { return f == "error" }) // the run did not fail
	slices.Sort(want)
	if !slices.Equal(keys, want) {
		t.Errorf("keys %v, want %v", keys, want)
	}
	if body["run_id"] != p.RunID || body["thread_id"] != p.ThreadID || body["status"] != "success" ||
		body["created_at"] != "2026-03-01T10:00:00.123456+00:00" || body["multitask_strategy"] != "enqueue" {
		t.Errorf("body %v", body)
	}
	if sent, _ := body["webhook_sent_at"].(string); sent == "" {
		t.Errorf("webhook_sent_at = %v", body["webhook_sent_at"])
	}
	if msgs := body["values"].(map[string]any)["messages"].([]any); len(msgs) != 1 {
		t.Errorf("values %v", body["values"])
	}
}

func TestPayloadShape(t *testing.T) {
	p := Payload{RunID: "r1", AssistantID: "a1", Status: "error",
		Error: graph.RunErrorOf(&graph.NodeError{Class: "ValueError", Message: "boom"})}
	raw, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	m := decode(t, raw)
	if e, ok := m["error"].(map[string]any); !ok || e["error"] != "ValueError" || e["message"] != "boom" || len(e) != 2 {
		t.Errorf("error = %#v, want {error, message}", m["error"])
	}
	for _, k := range []string{"thread_id", "run_started_at", "run_ended_at", "values", "webhook_sent_at"} {
		if v, ok := m[k]; !ok || v != nil {
			t.Errorf("%s = %v (present %v), want null", k, v, ok)
		}
	}
	if md, ok := m["metadata"].(map[string]any); !ok || len(md) != 0 {
		t.Errorf("metadata = %v, want {}", m["metadata"])
	}
	for _, k := range []string{"kwargs", "multitask_strategy"} {
		if _, ok := m[k]; ok {
			t.Errorf("%s present though unset", k)
		}
	}
	if graph.RunErrorOf(nil) != nil {
		t.Error("graph.RunErrorOf(nil) != nil")
	}
	if e := graph.RunErrorOf(errors.New("plain")); e.Class != "Exception" || e.Message != "plain" {
		t.Errorf("graph.RunErrorOf(plain) = %+v", e)
	}
}

func TestRetryOn503ThenSuccess(t *testing.T) {
	rc := newReceiver(t, func(n int, w http.ResponseWriter, _ *http.Request) {
		if n < 3 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	var waits []int
	var mu sync.Mutex
	d := newDeliverer(t, Config{Backoff: func(n int) time.Duration {
		mu.Lock()
		waits = append(waits, n)
		mu.Unlock()
		return 0
	}})
	res := d.Deliver(context.Background(), rc.URL, samplePayload())
	if !res.Delivered || len(res.Attempts) != 3 || res.Err != nil {
		t.Fatalf("result %+v", res)
	}
	if res.Attempts[0].Status != 503 || res.Attempts[1].Status != 503 || res.Attempts[2].Status != 200 {
		t.Errorf("attempts %+v", res.Attempts)
	}
	if !slices.Equal(waits, []int{1, 2}) {
		t.Errorf("backoff asked for %v, want [1 2]", waits)
	}
	hits := rc.got()
	for i, h := range hits {
		if h.header.Get(DeliveryHeader) != samplePayload().RunID || h.header.Get(AttemptHeader) != []string{"1", "2", "3"}[i] {
			t.Errorf("attempt %d headers %v", i+1, h.header)
		}
		if string(h.body) != string(hits[0].body) {
			t.Errorf("attempt %d sent another body:\n%s\n%s", i+1, h.body, hits[0].body)
		}
	}
	typ, data := res.Data()
	if typ != EventDelivered || data.Attempts != 3 || data.Status != 200 || len(data.History) != 3 || data.History[0].Status != 503 {
		t.Errorf("event %s %+v", typ, data)
	}
}

func TestNoRetryOn4xxOr3xx(t *testing.T) {
	for _, code := range []int{400, 404, 422, 302} {
		rc := newReceiver(t, func(_ int, w http.ResponseWriter, r *http.Request) {
			if code == 302 {
				http.Redirect(w, r, "/elsewhere", code)
				return
			}
			w.WriteHeader(code)
		})
		d := newDeliverer(t, Config{})
		res := d.Deliver(context.Background(), rc.URL, samplePayload())
		if res.Delivered || len(res.Attempts) != 1 || res.Status() != code || res.Err == nil {
			t.Errorf("%d: result %+v", code, res)
		}
		if n := len(rc.got()); n != 1 {
			t.Errorf("%d: %d requests, want 1 (redirects not followed, 4xx not retried)", code, n)
		}
	}
}

func TestTimeoutIsRetried(t *testing.T) {
	rc := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
		if n == 1 {
			<-r.Context().Done() // hang until the client gives up
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	d := newDeliverer(t, Config{Timeout: 200 * time.Millisecond})
	res := d.Deliver(context.Background(), rc.URL, samplePayload())
	if !res.Delivered || len(res.Attempts) < 2 || len(rc.got()) != len(res.Attempts) {
		t.Fatalf("result %+v", res)
	}
	a := res.Attempts[0]
	if !a.Timeout || a.Status != 0 || !errors.Is(a.Err, context.DeadlineExceeded) {
		t.Errorf("first attempt %+v, want a timeout", a)
	}
}

func TestAllAttemptsFail(t *testing.T) {
	rc := newReceiver(t, status(http.StatusBadGateway))
	d := newDeliverer(t, Config{MaxAttempts: 3})
	res := d.Deliver(context.Background(), rc.URL+"/hook?token=s3cret", samplePayload())
	if res.Delivered || len(res.Attempts) != 3 || res.Status() != 502 || res.Err == nil {
		t.Fatalf("result %+v", res)
	}
	if n := len(rc.got()); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
	agg := eventlog.Aggregate{Kind: "thread", Tenant: "default", ID: "t1"}
	evs, err := Events(agg, res)
	if err != nil || len(evs) != 1 {
		t.Fatalf("events %v, %v", evs, err)
	}
	e := evs[0]
	if e.Type != EventFailed || e.Aggregate != agg || e.Subject() != "thread.default.t1.webhook_failed" || e.ID == "" {
		t.Errorf("event %+v", e)
	}
	var data DeliveryData
	if err := json.Unmarshal(e.Data, &data); err != nil {
		t.Fatal(err)
	}
	if data.Attempts != 3 || data.Status != 502 || !strings.Contains(data.Error, "502") || data.URL != rc.URL+"/hook" || len(data.History) != 3 {
		t.Errorf("data %+v", data)
	}
	if strings.Contains(string(e.Data), "s3cret") {
		t.Errorf("event leaks the query string: %s", e.Data)
	}
}

func TestDefaultAttempts(t *testing.T) {
	rc := newReceiver(t, status(http.StatusInternalServerError))
	res := newDeliverer(t, Config{}).Deliver(context.Background(), rc.URL, samplePayload())
	if len(res.Attempts) != DefaultMaxAttempts || len(rc.got()) != DefaultMaxAttempts {
		t.Errorf("%d attempts, %d requests, want %d", len(res.Attempts), len(rc.got()), DefaultMaxAttempts)
	}
}

func TestConnectionErrorIsRetriedWithoutLeakingSecrets(t *testing.T) {
	rc := newReceiver(t, status(http.StatusOK))
	u := strings.Replace(rc.URL, "http://", "http://user:pa55word@", 1) + "/hook?token=s3cret#frag"
	rc.Close() // nothing listens any more
	d := newDeliverer(t, Config{MaxAttempts: 2})
	res := d.Deliver(context.Background(), u, samplePayload())
	if res.Delivered || len(res.Attempts) != 2 || res.Status() != 0 || res.Err == nil {
		t.Fatalf("result %+v", res)
	}
	evs, err := Events(eventlog.Aggregate{Kind: "thread", Tenant: "default", ID: "t1"}, res)
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{string(evs[0].Data), res.Err.Error(), res.URL} {
		for _, secret := range []string{"s3cret", "pa55word", "user", "frag"} {
			if strings.Contains(text, secret) {
				t.Errorf("%q leaks %q", text, secret)
			}
		}
	}
}

func TestDisabled(t *testing.T) {
	rc := newReceiver(t, status(http.StatusOK))
	d := newDeliverer(t, Config{Disabled: true})
	if d.Enabled() {
		t.Error("Enabled() on a disabled config")
	}
	res := d.Deliver(context.Background(), rc.URL, samplePayload())
	if !res.Skipped || res.Delivered || len(res.Attempts) != 0 || res.Err != nil {
		t.Errorf("result %+v", res)
	}
	if n := len(rc.got()); n != 0 {
		t.Errorf("%d requests while disabled", n)
	}
	if evs, err := Events(eventlog.Aggregate{Kind: "thread", Tenant: "default", ID: "t1"}, res); err != nil || evs != nil {
		t.Errorf("events of a skipped delivery: %v, %v", evs, err)
	}
}

func TestFieldFiltering(t *testing.T) {
	rc := newReceiver(t, status(http.StatusOK))
	d := newDeliverer(t, Config{Fields: []string{"run_id", "status", "error", "values"}})
	p := samplePayload()
	p.Status, p.Error = "error", &engine.RunError{Class: "ValueError", Message: "bad"}
	if res := d.Deliver(context.Background(), rc.URL, p); !res.Delivered {
		t.Fatalf("result %+v", res)
	}
	body := decode(t, rc.got()[0].body)
	if len(body) != 4 || body["run_id"] != p.RunID || body["status"] != "error" || body["values"] == nil {
		t.Errorf("body %v, want run_id, status, error, values only", body)
	}
	if e, _ := body["error"].(map[string]any); e["error"] != "ValueError" || e["message"] != "bad" {
		t.Errorf("error %v", body["error"])
	}

	if _, err := New(Config{Fields: []string{"run_id", "secret_stuff"}}); err == nil || !strings.Contains(err.Error(), "secret_stuff") {
		t.Errorf("unknown field accepted: %v", err)
	}
	// An empty, non-nil list sends an empty object.
	rc2 := newReceiver(t, status(http.StatusOK))
	newDeliverer(t, Config{Fields: []string{}}).Deliver(context.Background(), rc2.URL, p)
	if got := string(rc2.got()[0].body); got != "{}" {
		t.Errorf("body with no fields %s", got)
	}
}

func TestValidateURL(t *testing.T) {
	cases := []struct {
		url string
		ok  bool
	}{
		{"http://example.com/hook", true},
		{"https://example.com", true},
		{"HTTPS://Example.com:8443/a/b?token=x#f", true},
		{"http://user:pw@127.0.0.1:9000/hook", true},
		{"http://[::1]:9000/hook", true},
		{"", false},
		{"/webhooks/local", false},
		{"example.com/hook", false},
		{"ftp://example.com/hook", false},
		{"file:///etc/passwd", false},
		{"javascript:alert(1)", false},
		{"mailto:a@example.com", false},
		{"http://", false},
		{"http:///path", false},
		{"http://:80/path", false},
		{"http:example.com", false},
		{"http://exa mple.com/", false},
		{" http://example.com/", false},
		{"http://example.com/\n", false},
		{"http://example.com:port/", false},
		{"http://example.com/" + strings.Repeat("a", MaxURLLength), false},
	}
	for _, c := range cases {
		err := ValidateURL(c.url)
		if (err == nil) != c.ok {
			t.Errorf("ValidateURL(%q) = %v, want ok=%v", c.url, err, c.ok)
			continue
		}
		if err == nil {
			continue
		}
		var ee *engine.Error
		if !errors.As(err, &ee) || ee.Kind != engine.Invalid || len(ee.Fields) != 1 ||
			!slices.Equal(ee.Fields[0].Loc, []any{"body", "webhook"}) {
			t.Errorf("ValidateURL(%q) = %#v, want an Invalid error at body.webhook", c.url, err)
		}
		if len(c.url) > 8 && strings.Contains(err.Error(), c.url) {
			t.Errorf("error echoes the URL: %v", err)
		}
	}
}

func TestAllowedHosts(t *testing.T) {
	d := newDeliverer(t, Config{AllowedHosts: []string{"hooks.example.com", "*.internal.test", ".corp.test"}})
	for u, ok := range map[string]bool{
		"https://hooks.example.com/x":    true,
		"https://HOOKS.example.com/x":    true,
		"https://other.example.com/x":    false,
		"https://a.internal.test/x":      true,
		"https://internal.test/x":        false,
		"https://b.c.corp.test/x":        true,
		"https://evilcorp.test/x":        false,
		"https://hooks.example.com.evil": false,
	} {
		if err := d.ValidateURL(u); (err == nil) != ok {
			t.Errorf("ValidateURL(%q) = %v, want ok=%v", u, err, ok)
		}
	}
	rc := newReceiver(t, status(http.StatusOK))
	res := d.Deliver(context.Background(), rc.URL, samplePayload())
	if res.Delivered || len(res.Attempts) != 0 || !engine.Is(engine.Invalid, res.Err) || len(rc.got()) != 0 {
		t.Errorf("delivery to a host not allowed: %+v", res)
	}
	typ, data := res.Data()
	if typ != EventFailed || data.Attempts != 0 || !strings.Contains(data.Error, "not allowed") {
		t.Errorf("event %s %+v", typ, data)
	}
}

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"https://u:p@example.com:8443/a/b?token=x&y=1#frag": "https://example.com:8443/a/b",
		"http://example.com":         "http://example.com",
		"http://example.com/a%2Fb?x": "http://example.com/a%2Fb",
		"%%":                         "(invalid URL)",
	} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestContextCancelStopsRetries(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rc := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		cancel() // the server shuts down while the first attempt is answered
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	// A backoff of an hour: only the context can end the wait.
	d := newDeliverer(t, Config{Backoff: func(int) time.Duration { return time.Hour }})
	res := d.Deliver(ctx, rc.URL, samplePayload())
	if res.Delivered || !errors.Is(res.Err, context.Canceled) || len(rc.got()) != 1 {
		t.Fatalf("result %+v, %d requests", res, len(rc.got()))
	}
}

func TestContextCancelDuringAttempt(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rc := newReceiver(t, func(_ int, _ http.ResponseWriter, r *http.Request) {
		cancel()
		<-r.Context().Done()
	})
	res := newDeliverer(t, Config{}).Deliver(ctx, rc.URL, samplePayload())
	if res.Delivered || len(res.Attempts) != 1 || !errors.Is(res.Err, context.Canceled) || res.Attempts[0].Timeout {
		t.Fatalf("result %+v", res)
	}
	// A context that is already done sends nothing.
	res = newDeliverer(t, Config{}).Deliver(ctx, rc.URL, samplePayload())
	if len(rc.got()) != 1 || !errors.Is(res.Err, context.Canceled) {
		t.Fatalf("result %+v after cancel, %d requests", res, len(rc.got()))
	}
}

func TestDefaultBackoff(t *testing.T) {
	for n, limit := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second, 6: 30 * time.Second, 100: 30 * time.Second} {
		for range 20 {
			if d := DefaultBackoff(n); d < limit/2 || d > limit {
				t.Errorf("DefaultBackoff(%d) = %v, want within [%v, %v]", n, d, limit/2, limit)
			}
		}
	}
}

func TestNewRejectsNegative(t *testing.T) {
	if _, err := New(Config{MaxAttempts: -1}); err == nil {
		t.Error("negative MaxAttempts accepted")
	}
	if _, err := New(Config{Timeout: -time.Second}); err == nil {
		t.Error("negative Timeout accepted")
	}
}

func TestParseFields(t *testing.T) {
	if f, err := ParseFields("  "); err != nil || f != nil {
		t.Errorf("ParseFields(blank) = %v, %v; want nil (every field)", f, err)
	}
	if f, err := ParseFields("run_id, status,,run_id,values"); err != nil || !slices.Equal(f, []string{"run_id", "status", "values"}) {
		t.Errorf("ParseFields = %v, %v", f, err)
	}
	if _, err := ParseFields("run_id,password"); err == nil {
		t.Error("unknown field accepted")
	}
}
