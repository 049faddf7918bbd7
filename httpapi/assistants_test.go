package httpapi_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/jetgraph/jetgraph/engine/assistants"
)

// The tests below use the whole-stack harness of threads_test.go: startStack, call and field.

const missingAssistant = "00000000-0000-0000-0000-0000000000aa"

// asstIDs returns the assistant_id of each record of a list answer.
func asstIDs(v any) []string {
	ids := []string{}
	list, _ := v.([]any)
	for _, a := range list {
		ids = append(ids, fmt.Sprint(field(a, "assistant_id")))
	}
	return ids
}

// asstCreate creates an assistant from body and returns it.
func asstCreate(t *testing.T, s *stack, body string) map[string]any {
	t.Helper()
	code, _, a := s.call(t, "POST", "/assistants", body)
	if code != 200 {
		t.Fatalf("create %s: %d %v", body, code, a)
	}
	return a.(map[string]any)
}

func TestAssistantLifecycle(t *testing.T) {
	s := startStack(t)

	// System assistants, by graph id or id.
	for graph, want := range map[string]string{"agent": "fe096781-5601-53d2-b2f6-0d3403f7e9ca", "echo": assistants.SystemID("echo")} {
		code, _, a := s.call(t, "GET", "/assistants/"+graph, "")
		if code != 200 || field(a, "assistant_id") != want || field(a, "name") != graph ||
			field(a, "metadata", "created_by") != "system" || field(a, "version") != 1.0 {
			t.Errorf("GET /assistants/%s: %d %v", graph, code, a)
		}
		if _, _, byID := s.call(t, "GET", "/assistants/"+want, ""); !reflect.DeepEqual(byID, a) {
			t.Errorf("by id %v differs from by graph %v", byID, a)
		}
	}

	// Defaults.
	a := asstCreate(t, s, `{"graph_id":"echo"}`)
	want := map[string]any{"graph_id": "echo", "config": map[string]any{}, "context": map[string]any{},
		"metadata": map[string]any{}, "version": 1.0, "name": "echo", "description": nil}
	for k, v := range want {
		if !reflect.DeepEqual(a[k], v) {
			t.Errorf("default %s = %v, want %v", k, a[k], v)
		}
	}
	if a["created_at"] != a["updated_at"] || a["created_at"] == nil {
		t.Errorf("timestamps: %v %v", a["created_at"], a["updated_at"])
	}

	id := "6f9619ff-8b86-d011-b42d-00c04fc964ff"
	a = asstCreate(t, s, `{"assistant_id":"`+strings.ToUpper(id)+`","graph_id":"echo","name":"My Echo","description":"d",
		"config":{"tags":["a"],"recursion_limit":5,"configurable":{"m":"x"}},"context":{"c":1},"metadata":{"team":"x"}}`)
	if a["assistant_id"] != id || a["name"] != "My Echo" || a["description"] != "d" || field(a, "config", "recursion_limit") != 5.0 {
		t.Fatalf("create: %v", a)
	}

	code, _, v2 := s.call(t, "PATCH", "/assistants/"+id, `{"metadata":{"v":2},"context":{"c":2}}`)
	if code != 200 || field(v2, "version") != 2.0 || field(v2, "name") != "My Echo" ||
		!reflect.DeepEqual(field(v2, "metadata"), map[string]any{"team": "x", "v": 2.0}) ||
		!reflect.DeepEqual(field(v2, "context"), map[string]any{"c": 2.0}) || field(v2, "config", "recursion_limit") != 5.0 {
		t.Fatalf("patch: %d %v", code, v2)
	}

	code, h, vs := s.call(t, "POST", "/assistants/"+id+"/versions", `{}`)
	if code != 200 || len(vs.([]any)) != 2 || field(vs.([]any)[0], "version") != 2.0 || h.Get("X-Pagination-Total") != "2" {
		t.Fatalf("versions: %d %v", code, vs)
	}
	if _, ok := vs.([]any)[1].(map[string]any)["updated_at"]; ok {
		t.Errorf("a version has updated_at: %v", vs.([]any)[1])
	}
	_, h, vs = s.call(t, "POST", "/assistants/"+id+"/versions", `{"limit":1,"metadata":{"team":"x"}}`)
	if len(vs.([]any)) != 1 || h.Get("X-Pagination-Next") != "1" {
		t.Errorf("versions page: %v %v", vs, h)
	}
	_, _, vs = s.call(t, "POST", "/assistants/"+id+"/versions", `{"metadata":{"v":2}}`)
	if len(vs.([]any)) != 1 || field(vs.([]any)[0], "version") != 2.0 {
		t.Errorf("versions with metadata v=2: %v", vs)
	}

	code, _, v1 := s.call(t, "POST", "/assistants/"+id+"/latest", `{"version":1}`)
	if code != 200 || field(v1, "version") != 1.0 || !reflect.DeepEqual(field(v1, "metadata"), map[string]any{"team": "x"}) {
		t.Fatalf("latest 1: %d %v", code, v1)
	}
	if _, _, got := s.call(t, "GET", "/assistants/"+id, ""); !reflect.DeepEqual(got, v1) {
		t.Errorf("GET after latest: %v, want %v", got, v1)
	}

	tests := []struct {
		name, method, path, body string
		code                     int
		detail                   string
	}{
		{"duplicate create", "POST", "/assistants", `{"assistant_id":"` + id + `","graph_id":"echo"}`, 409, "Assistant already exists"},
		{"duplicate of a system assistant", "POST", "/assistants", `{"assistant_id":"` + assistants.SystemID("echo") + `","graph_id":"echo"}`, 409, "Assistant already exists"},
		{"get missing", "GET", "/assistants/" + missingAssistant, "", 404, "Assistant not found"},
		{"get an unknown graph", "GET", "/assistants/nope", "", 422, ""},
		{"patch missing", "PATCH", "/assistants/" + missingAssistant, `{}`, 404, "Assistant not found"},
		{"versions of missing", "POST", "/assistants/" + missingAssistant + "/versions", `{}`, 404, "Assistant not found"},
		{"latest of missing", "POST", "/assistants/" + missingAssistant + "/latest", `{"version":1}`, 404, "Assistant not found"},
		{"latest missing version", "POST", "/assistants/" + id + "/latest", `{"version":99}`, 404, "Assistant version not found"},
		{"delete missing", "DELETE", "/assistants/" + missingAssistant, "", 404, "Assistant not found"},
		{"delete", "DELETE", "/assistants/" + id, "", 204, ""},
		{"gone after delete", "GET", "/assistants/" + id, "", 404, "Assistant not found"},
		{"versions gone after delete", "POST", "/assistants/" + id + "/versions", `{}`, 404, "Assistant not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, body := s.call(t, tt.method, tt.path, tt.body)
			if code != tt.code || (tt.detail != "" && field(body, "detail") != tt.detail) {
				t.Errorf("%s %s: %d %v, want %d %q", tt.method, tt.path, code, body, tt.code, tt.detail)
			}
		})
	}

	// do_nothing answers the existing assistant, unchanged.
	code, _, same := s.call(t, "POST", "/assistants", `{"assistant_id":"`+assistants.SystemID("agent")+`","graph_id":"echo","if_exists":"do_nothing"}`)
	if code != 200 || field(same, "graph_id") != "agent" || field(same, "version") != 1.0 {
		t.Errorf("do_nothing: %d %v", code, same)
	}
}

// asstLocs returns the locations of a 422 answer's violations, each joined with dots.
func asstLocs(t *testing.T, body any) []string {
	t.Helper()
	list, ok := field(body, "detail").([]any)
	if !ok {
		t.Fatalf("detail is not a list: %v", body)
	}
	var locs []string
	for _, v := range list {
		var parts []string
		for _, p := range field(v, "loc").([]any) {
			parts = append(parts, fmt.Sprint(p))
		}
		locs = append(locs, strings.Join(parts, "."))
	}
	slices.Sort(locs)
	return locs
}

func TestAssistantValidationListsEveryProblem(t *testing.T) {
	s := startStack(t)
	tests := []struct {
		name, method, path, body string
		locs                     []string
	}{
		{"create", "POST", "/assistants",
			`{"assistant_id":"x","graph_id":"nope","config":{"tags":[1],"recursion_limit":1.5,"configurable":[]},"context":[],"metadata":3,"if_exists":"x","name":4,"description":5}`,
			[]string{"body.assistant_id", "body.config.configurable", "body.config.recursion_limit", "body.config.tags",
				"body.context", "body.description", "body.graph_id", "body.if_exists", "body.metadata", "body.name"}},
		{"create without graph", "POST", "/assistants", `{"config":"x"}`, []string{"body.config", "body.graph_id"}},
		{"create with a non-string graph", "POST", "/assistants", `{"graph_id":1}`, []string{"body.graph_id"}},
		{"create: body not an object", "POST", "/assistants", `[1]`, []string{"body", "body.graph_id"}},
		{"patch", "PATCH", "/assistants/not-a-uuid", `{"graph_id":"nope","config":[],"metadata":"x","name":1}`,
			[]string{"body.config", "body.graph_id", "body.metadata", "body.name", "path.assistant_id"}},
		{"get", "GET", "/assistants/not-a-uuid", "", []string{"path.assistant_id"}},
		{"delete", "DELETE", "/assistants/not-a-uuid?delete_threads=maybe", "", []string{"path.assistant_id", "query.delete_threads"}},
		{"versions", "POST", "/assistants/not-a-uuid/versions", `{"limit":0,"offset":-1,"metadata":1}`,
			[]string{"body.limit", "body.metadata", "body.offset", "path.assistant_id"}},
		{"latest without version", "POST", "/assistants/echo/latest", `{}`, []string{"body.version"}},
		{"latest", "POST", "/assistants/not-a-uuid/latest", `{"version":0}`, []string{"body.version", "path.assistant_id"}},
		{"search", "POST", "/assistants/search",
			`{"limit":0,"offset":"x","sort_by":"status","sort_order":"up","select":["name","nope"],"metadata":[],"graph_id":1,"name":2}`,
			[]string{"body.graph_id", "body.limit", "body.metadata", "body.name", "body.offset", "body.select.1", "body.sort_by", "body.sort_order"}},
		{"count", "POST", "/assistants/count", `{"metadata":1,"graph_id":[],"name":{}}`, []string{"body.graph_id", "body.metadata", "body.name"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, body := s.call(t, tt.method, tt.path, tt.body)
			if code != 422 {
				t.Fatalf("%d %v, want 422", code, body)
			}
			if got := asstLocs(t, body); !reflect.DeepEqual(got, tt.locs) {
				t.Errorf("locs %v, want %v (%v)", got, tt.locs, body)
			}
		})
	}
	// Nothing was created by the refused requests: only the two system assistants exist.
	if _, _, n := s.call(t, "POST", "/assistants/count", `{}`); n != 2.0 {
		t.Errorf("count = %v, want 2", n)
	}
}

func TestAssistantDeleteThreads(t *testing.T) {
	s := startStack(t)
	doomed := asstCreate(t, s, `{"graph_id":"echo"}`)["assistant_id"].(string)
	kept := asstCreate(t, s, `{"graph_id":"echo"}`)["assistant_id"].(string)
	thread := func(assistant string) string {
		code, _, th := s.call(t, "POST", "/threads", `{"metadata":{"assistant_id":"`+assistant+`"}}`)
		if code != 200 {
			t.Fatalf("create thread: %d %v", code, th)
		}
		return field(th, "thread_id").(string)
	}
	d1, d2, k1 := thread(doomed), thread(doomed), thread(kept)

	if code, _, body := s.call(t, "DELETE", "/assistants/"+kept+"?delete_threads=false", ""); code != 204 {
		t.Fatalf("delete without threads: %d %v", code, body)
	}
	if code, _, body := s.call(t, "DELETE", "/assistants/"+doomed+"?delete_threads=true", ""); code != 204 {
		t.Fatalf("delete with threads: %d %v", code, body)
	}
	for id, code := range map[string]int{d1: 404, d2: 404, k1: 200} {
		if got, _, body := s.call(t, "GET", "/threads/"+id, ""); got != code {
			t.Errorf("thread %s: %d %v, want %d", id, got, body, code)
		}
	}
	if _, _, n := s.call(t, "POST", "/threads/count", `{}`); n != 1.0 {
		t.Errorf("threads left: %v, want 1", n)
	}
}

func TestAssistantSearch(t *testing.T) {
	s := startStack(t)
	echo, agent := assistants.SystemID("echo"), assistants.SystemID("agent")
	mk := func(body string) string { return asstCreate(t, s, body)["assistant_id"].(string) }
	a1 := mk(`{"graph_id":"echo","name":"My Echo","metadata":{"team":"x","tier":{"level":1}}}`)
	a2 := mk(`{"graph_id":"agent","name":"Support agent","metadata":{"team":"y"}}`)
	a3 := mk(`{"graph_id":"echo","name":"ECHO two","metadata":{"team":"x"}}`)
	// a1 becomes the most recently updated.
	if code, _, body := s.call(t, "PATCH", "/assistants/"+a1, `{"description":"newest"}`); code != 200 {
		t.Fatalf("patch: %d %v", code, body)
	}
	// System assistants are made in graph order at start: agent, then echo.
	byName := []string{a3, a1, a2, agent, echo} // "ECHO two" < "My Echo" < "Support agent" < "agent" < "echo"
	slices.Reverse(byName)

	tests := []struct {
		name, body  string
		ids         []string
		total, next string
		count       float64
	}{
		{"default: created_at desc", `{}`, []string{a3, a2, a1, echo, agent}, "5", "", 5},
		{"graph_id", `{"graph_id":"echo"}`, []string{a3, a1, echo}, "3", "", 3},
		{"name substring, any case", `{"name":"eCHo"}`, []string{a3, a1, echo}, "3", "", 3},
		{"metadata containment", `{"metadata":{"tier":{"level":1}}}`, []string{a1}, "1", "", 1},
		{"all filters", `{"graph_id":"echo","name":"two","metadata":{"team":"x"}}`, []string{a3}, "1", "", 1},
		{"system metadata", `{"metadata":{"created_by":"system"}}`, []string{echo, agent}, "2", "", 2},
		{"sort by name desc", `{"sort_by":"name"}`, byName, "5", "", 5},
		{"sort by updated_at desc", `{"sort_by":"updated_at"}`, []string{a1, a3, a2, echo, agent}, "5", "", 5},
		{"first page", `{"limit":2}`, []string{a3, a2}, "5", "2", 5},
		{"middle page", `{"limit":2,"offset":2}`, []string{a1, echo}, "5", "4", 5},
		{"last page", `{"limit":2,"offset":4}`, []string{agent}, "5", "", 5},
		{"past the end", `{"offset":9}`, []string{}, "5", "", 5},
		{"no match", `{"graph_id":"nope"}`, []string{}, "0", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, h, body := s.call(t, "POST", "/assistants/search", tt.body)
			if code != 200 {
				t.Fatalf("%d %v", code, body)
			}
			if got := asstIDs(body); !reflect.DeepEqual(got, tt.ids) {
				t.Errorf("ids %v, want %v", got, tt.ids)
			}
			if h.Get("X-Pagination-Total") != tt.total || h.Get("X-Pagination-Next") != tt.next {
				t.Errorf("headers total=%q next=%q, want %q %q", h.Get("X-Pagination-Total"), h.Get("X-Pagination-Next"), tt.total, tt.next)
			}
			var q map[string]any
			_ = json.Unmarshal([]byte(tt.body), &q)
			delete(q, "limit")
			delete(q, "offset")
			delete(q, "sort_by")
			filter, _ := json.Marshal(q)
			if _, _, n := s.call(t, "POST", "/assistants/count", string(filter)); n != tt.count {
				t.Errorf("count %s = %v, want %v", filter, n, tt.count)
			}
		})
	}

	_, _, body := s.call(t, "POST", "/assistants/search", `{"select":["assistant_id","name"],"graph_id":"agent","sort_order":"asc"}`)
	want := []any{
		map[string]any{"assistant_id": agent, "name": "agent"},
		map[string]any{"assistant_id": a2, "name": "Support agent"},
	}
	if !reflect.DeepEqual(body, want) {
		t.Errorf("select: %v, want %v", body, want)
	}
}
