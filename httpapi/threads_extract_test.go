package httpapi_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestThreadSearchExtract answers a thread search's extract: each alias with the value at its
// path in the thread (null where the path does not resolve), next to the selected fields; bad
// aliases and paths are refused with 422, each at its place.
func TestThreadSearchExtract(t *testing.T) {
	s := startRunStack(t, nil)
	_, _, th := s.call(t, "POST", "/threads", `{"metadata":{"team":{"name":"red"},"tags":["a","b"]}}`)
	id := field(th, "thread_id").(string)
	// A run's config becomes the thread's: a secret in it must not come out through extract.
	s.must(t, 200, "POST", "/threads/"+id+"/runs/wait", `{"assistant_id":"echo","input":{"messages":"hi"},"config":{"configurable":{"api_key":"sk-secret"}}}`)

	code, _, got := s.call(t, "POST", "/threads/search", `{"ids":["`+id+`"],"select":["thread_id"],"extract":{`+
		`"team":"metadata.team.name","last_tag":"metadata.tags[-1]","first":"metadata.tags[0]","none":"metadata.tags[5]",`+
		`"lastmsg":"values.messages[-1].content","key":"config.configurable.api_key"}}`)
	if code != 200 {
		t.Fatalf("search with extract: %d %v", code, got)
	}
	raw, _ := json.Marshal(got)
	want := `[{"extracted":{"first":"a","key":"********","last_tag":"b","lastmsg":"echo: hi","none":null,"team":"red"},"thread_id":"` + id + `"}]`
	if string(raw) != want {
		t.Fatalf("search with extract:\n got %s\nwant %s", raw, want)
	}
	_, _, got = s.call(t, "POST", "/threads/search", `{"ids":["`+id+`"],"extract":{"team":"metadata.team.name"}}`)
	if field(got.([]any)[0], "status") != "idle" || field(got.([]any)[0], "extracted", "team") != "red" {
		t.Fatalf("extract without select keeps every field: %v", got)
	}

	code, _, got = s.call(t, "POST", "/threads/search", `{"extract":{"status":"values.x","1bad":"values.x","empty":"","nums":7,`+
		`"root":"runs.x","broken":"values[x]","ok":"values.messages[0]"}}`)
	if code != 422 {
		t.Fatalf("bad extract: %d %v", code, got)
	}
	raw, _ = json.Marshal(got)
	for _, alias := range []string{"status", "1bad", "empty", "nums", "root", "broken"} {
		if !strings.Contains(string(raw), `"loc":["body","extract","`+alias+`"]`) {
			t.Errorf("no problem at extract.%s: %s", alias, raw)
		}
	}
	if strings.Contains(string(raw), `"ok"]`) {
		t.Errorf("a good path reported: %s", raw)
	}
	many := `{"extract":{`
	for i := range 11 {
		if i > 0 {
			many += ","
		}
		many += `"a` + string(rune('a'+i)) + `":"values.x"`
	}
	if code, _, got = s.call(t, "POST", "/threads/search", many+`}}`); code != 422 || !strings.Contains(string(mustJSON(got)), "Maximum of 10 extract paths") {
		t.Fatalf("11 paths: %d %v", code, got)
	}
}
