package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/engine/command"
	"github.com/jetgraph/jetgraph/engine/store"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
	"github.com/jetgraph/jetgraph/httpapi"
	"github.com/jetgraph/jetgraph/projections"
)

// storeAPI serves only the store, over a real log and projection, with a settable clock.
type storeAPI struct {
	url string
	mu  sync.Mutex
	now time.Time
}

func (s *storeAPI) clock() time.Time { s.mu.Lock(); defer s.mu.Unlock(); return s.now }

func (s *storeAPI) advance(d time.Duration) { s.mu.Lock(); defer s.mu.Unlock(); s.now = s.now.Add(d) }

func startStoreAPI(t *testing.T) *storeAPI {
	t.Helper()
	l := eventlogtest.Open(t)
	db, err := projections.OpenDB(filepath.Join(t.TempDir(), "p.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	view := projections.NewStore(db)
	proj := projections.NewProjector(db, l, eventlog.RuntimeStream, view)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = proj.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	if err := proj.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	api := &storeAPI{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	svc := store.New(&command.Runner{Log: l, Projector: proj}, view, nil)
	svc.SetClock(api.clock)
	ts := serve(t, httpapi.New(httpapi.Deps{Store: svc}).Handler())
	api.url = ts.URL
	return api
}

// do sends body ("" for none) and returns the status and the raw body, trimmed.
func (s *storeAPI) do(t *testing.T, method, path, body string) (int, string) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, s.url+path, r)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(raw))
}

func (s *storeAPI) must(t *testing.T, method, path, body string, want int) string {
	t.Helper()
	code, got := s.do(t, method, path, body)
	if code != want {
		t.Fatalf("%s %s %s: %d %s, want %d", method, path, body, code, got, want)
	}
	return got
}

// keysOf lists the keys of the items of a search answer.
func keysOf(t *testing.T, body string) string {
	t.Helper()
	var out struct {
		Items []struct {
			Key   string   `json:"key"`
			Score *float64 `json:"score"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(body), &out); err != nil || out.Items == nil {
		t.Fatalf("not a search answer: %s", body)
	}
	var ks []string
	for _, it := range out.Items {
		ks = append(ks, it.Key)
	}
	return strings.Join(ks, ",")
}

func TestStoreItemLifecycle(t *testing.T) {
	s := startStoreAPI(t)
	if got := s.must(t, "PUT", "/store/items", `{"namespace":["users","u1"],"key":"prefs","value":{"theme":"dark"},"index":false,"ttl":null}`, 204); got != "" {
		t.Errorf("PUT body = %q", got)
	}
	want := `{"namespace":["users","u1"],"key":"prefs","value":{"theme":"dark"},"created_at":"2026-03-01T12:00:00.000000+00:00","updated_at":"2026-03-01T12:00:00.000000+00:00"}`
	for _, q := range []string{
		"namespace=users.u1&key=prefs",
		"namespace=users&namespace=u1&key=prefs",
		"namespace[]=users&namespace[]=u1&key=prefs",
		`namespace=["users","u1"]&key=prefs&refresh_ttl=false`,
	} {
		if got := s.must(t, "GET", "/store/items?"+q, "", 200); got != want {
			t.Errorf("GET ?%s = %s\nwant %s", q, got, want)
		}
	}
	if got := s.must(t, "GET", "/store/items?namespace=users.u2&key=prefs", "", 200); got != "null" {
		t.Errorf("GET of a missing item = %s, want null", got)
	}
	s.must(t, "DELETE", "/store/items", `{"namespace":["users","u1"],"key":"prefs"}`, 204)
	s.must(t, "DELETE", "/store/items", `{"namespace":["users","u1"],"key":"prefs"}`, 204)
	if got := s.must(t, "GET", "/store/items?namespace=users.u1&key=prefs", "", 200); got != "null" {
		t.Errorf("GET after delete = %s", got)
	}
}

func TestStoreValidation(t *testing.T) {
	s := startStoreAPI(t)
	tests := []struct {
		name, method, path, body string
		want                     string // the exact detail
	}{
		{"label with a dot", "PUT", "/store/items", `{"namespace":["a","b.c"],"key":"k","value":{}}`,
			`"Namespace labels cannot be empty or contain periods. Received: ('a', 'b.c')"`},
		{"empty label", "PUT", "/store/items", `{"namespace":["a",""],"key":"k","value":{}}`,
			`"Namespace labels cannot be empty or contain periods. Received: ('a', '')"`},
		{"get: empty label", "GET", "/store/items?namespace=a..b&key=k", "",
			`"Namespace labels cannot be empty or contain periods. Received: ('a', '', 'b')"`},
		{"get: empty namespace", "GET", "/store/items?namespace=&key=k", "",
			`"Namespace labels cannot be empty or contain periods. Received: ('',)"`},
		{"delete: label", "DELETE", "/store/items", `{"namespace":["a."],"key":"k"}`,
			`"Namespace labels cannot be empty or contain periods. Received: ('a.',)"`},
		{"search: prefix label", "POST", "/store/items/search", `{"namespace_prefix":["x.y"]}`,
			`"Namespace labels cannot be empty or contain periods. Received: ('x.y',)"`},
		{"namespaces: suffix label", "POST", "/store/namespaces", `{"suffix":[""]}`,
			`"Namespace labels cannot be empty or contain periods. Received: ('',)"`},
		{"put: everything missing", "PUT", "/store/items", `{}`,
			`[{"loc":["body","key"],"msg":"Field required","type":"missing"},{"loc":["body","namespace"],"msg":"Field required","type":"missing"},{"loc":["body","value"],"msg":"Field required","type":"missing"}]`},
		{"put: bad types", "PUT", "/store/items", `{"namespace":[],"key":"","value":[1],"index":true,"ttl":"x"}`,
			`[{"loc":["body","key"],"msg":"String should have at least 1 character","type":"string_too_short"},{"loc":["body","namespace"],"msg":"List should have at least 1 item after validation, not 0","type":"too_short"},{"loc":["body","value"],"msg":"Input should be a valid dictionary","type":"dict_type"},{"loc":["body","index"],"msg":"Input should be false or a list of strings","type":"union_type"},{"loc":["body","ttl"],"msg":"Input should be a valid number","type":"float_parsing"}]`},
		{"put: ttl", "PUT", "/store/items", `{"namespace":["a"],"key":"k","value":{},"ttl":0}`,
			`[{"loc":["body","ttl"],"msg":"TTL must be a positive number of minutes","type":"greater_than"}]`},
		{"get: missing", "GET", "/store/items", "",
			`[{"loc":["query","namespace"],"msg":"Field required","type":"missing"},{"loc":["query","key"],"msg":"Field required","type":"missing"}]`},
		{"delete: namespace type", "DELETE", "/store/items", `{"namespace":"a.b","key":"k"}`,
			`[{"loc":["body","namespace"],"msg":"Input should be a valid list of strings","type":"list_type"}]`},
		{"search: filter operators", "POST", "/store/items/search", `{"filter":{"n":{"$in":[1]},"s":{"$gt":true}},"limit":-1}`,
			`[{"loc":["body","limit"],"msg":"Input should be greater than or equal to 0","type":"greater_than_equal"},{"loc":["body","filter","n","$in"],"msg":"Unknown filter operator \"$in\": use one of $eq, $ne, $gt, $gte, $lt, $lte","type":"value_error"},{"loc":["body","filter","s","$gt"],"msg":"Operator $gt compares numbers or strings","type":"value_error"}]`},
		{"namespaces: max_depth", "POST", "/store/namespaces", `{"max_depth":0,"prefix":"a"}`,
			`[{"loc":["body","prefix"],"msg":"Input should be a valid list of strings","type":"list_type"},{"loc":["body","max_depth"],"msg":"Input should be greater than or equal to 1","type":"greater_than_equal"}]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, got := s.do(t, tc.method, tc.path, tc.body)
			if want := `{"detail":` + tc.want + `}`; code != 422 || got != want {
				t.Errorf("%d %s\nwant 422 %s", code, got, want)
			}
		})
	}
}

func TestStoreSearchAndNamespaces(t *testing.T) {
	s := startStoreAPI(t)
	for _, it := range []string{
		`{"namespace":["docs","a"],"key":"1","value":{"n":1,"text":"red apple"}}`,
		`{"namespace":["docs","a"],"key":"2","value":{"n":2,"text":"green apple, red apple"}}`,
		`{"namespace":["docs","b"],"key":"3","value":{"n":3,"text":"pear"}}`,
		`{"namespace":["notes"],"key":"4","value":{"n":4,"text":"red"}}`,
	} {
		s.must(t, "PUT", "/store/items", it, 204)
		s.advance(time.Second)
	}
	tests := []struct{ body, want string }{
		{`{}`, "4,3,2,1"},
		{`{"namespace_prefix":[]}`, "4,3,2,1"},
		{`{"namespace_prefix":["docs"]}`, "3,2,1"},
		{`{"namespace_prefix":["docs","a"],"limit":1,"offset":1}`, "1"},
		{`{"filter":{"n":{"$gte":2,"$lt":4}}}`, "3,2"},
		{`{"filter":{"n":3}}`, "3"},
		{`{"filter":{"n":{"$ne":3}},"limit":2}`, "4,2"},
		{`{"query":"red","namespace_prefix":["docs"]}`, "2,1"},
		{`{"limit":0}`, "4,3,2,1"},
	}
	for _, tc := range tests {
		if got := keysOf(t, s.must(t, "POST", "/store/items/search", tc.body, 200)); got != tc.want {
			t.Errorf("search %s = %s, want %s", tc.body, got, tc.want)
		}
	}
	got := s.must(t, "POST", "/store/items/search", `{"query":"APPLE"}`, 200)
	var res struct {
		Items []map[string]any `json:"items"`
	}
	if err := json.Unmarshal([]byte(got), &res); err != nil || len(res.Items) != 2 || res.Items[0]["score"] != 2.0 || res.Items[1]["score"] != 1.0 {
		t.Errorf("query answer = %s", got)
	}
	if got := s.must(t, "POST", "/store/items/search", `{"namespace_prefix":["none"]}`, 200); got != `{"items":[]}` {
		t.Errorf("empty search = %s", got)
	}
	if strings.Contains(s.must(t, "POST", "/store/items/search", `{}`, 200), "score") {
		t.Error("score on a search without query")
	}

	ns := []struct{ body, want string }{
		{`{}`, `{"namespaces":[["docs","a"],["docs","b"],["notes"]]}`},
		{`{"prefix":["docs"],"max_depth":1}`, `{"namespaces":[["docs"]]}`},
		{`{"suffix":["b"]}`, `{"namespaces":[["docs","b"]]}`},
		{`{"prefix":["*","a"]}`, `{"namespaces":[["docs","a"]]}`},
		{`{"limit":1,"offset":2}`, `{"namespaces":[["notes"]]}`},
		{`{"prefix":["zzz"]}`, `{"namespaces":[]}`},
	}
	for _, tc := range ns {
		if got := s.must(t, "POST", "/store/namespaces", tc.body, 200); got != tc.want {
			t.Errorf("namespaces %s = %s, want %s", tc.body, got, tc.want)
		}
	}
}

func TestStoreTTLOverHTTP(t *testing.T) {
	s := startStoreAPI(t)
	s.must(t, "PUT", "/store/items", `{"namespace":["c"],"key":"a","value":{},"ttl":1}`, 204)
	s.must(t, "PUT", "/store/items", `{"namespace":["c"],"key":"b","value":{},"ttl":1}`, 204)
	s.advance(50 * time.Second)
	s.must(t, "GET", "/store/items?namespace=c&key=a", "", 200)                   // refreshed: default true
	s.must(t, "GET", "/store/items?namespace=c&key=b&refresh_ttl=false", "", 200) // not refreshed
	s.advance(20 * time.Second)
	if got := keysOf(t, s.must(t, "POST", "/store/items/search", `{"refresh_ttl":false}`, 200)); got != "a" {
		t.Errorf("after 70s: %s, want a", got)
	}
	if got := s.must(t, "GET", "/store/items?namespace=c&key=b", "", 200); got != "null" {
		t.Errorf("expired item = %s", got)
	}
	s.advance(40 * time.Second)
	if got := keysOf(t, s.must(t, "POST", "/store/items/search", `{}`, 200)); got != "" {
		t.Errorf("after 110s: %s, want none", got)
	}
}
