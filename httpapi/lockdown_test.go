package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/httpapi"
)

// TestCORSAllowsLoopbackAndConfiguredOrigins checks that browsers on loopback origins may call
// the API, others only when configured, and that "*" must be asked for.
func TestCORSAllowsLoopbackAndConfiguredOrigins(t *testing.T) {
	def := startRunStack(t, nil)
	conf := startRunStack(t, func(d *httpapi.Deps) { d.CORSOrigins = []string{"https://ui.example.com"} })
	all := startRunStack(t, func(d *httpapi.Deps) { d.CORSOrigins = []string{"*"} })
	for _, tc := range []struct {
		name    string
		s       *stack
		origin  string
		allowed bool
	}{
		{"localhost", def, "http://localhost:3000", true},
		{"127.0.0.1", def, "http://127.0.0.1:5173", true},
		{"ipv6 loopback", def, "http://[::1]:8080", true},
		{"https localhost", def, "https://localhost", true},
		{"remote origin", def, "https://evil.example.com", false},
		{"localhost lookalike", def, "http://localhost.evil.example.com", false},
		{"file origin", def, "null", false},
		{"configured origin", conf, "https://ui.example.com", true},
		{"other origin with a list", conf, "https://evil.example.com", false},
		{"loopback with a list", conf, "http://localhost:3000", true},
		{"any origin when asked", all, "https://evil.example.com", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, method := range []string{http.MethodGet, http.MethodOptions} {
				req, err := http.NewRequest(method, tc.s.URL+"/threads/search", nil)
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("Origin", tc.origin)
				if method == http.MethodOptions {
					req.Header.Set("Access-Control-Request-Method", http.MethodPost)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				got := resp.Header.Get("Access-Control-Allow-Origin")
				if tc.allowed && got != tc.origin {
					t.Fatalf("%s from %s: Access-Control-Allow-Origin %q, want %q", method, tc.origin, got, tc.origin)
				}
				if !tc.allowed && got != "" {
					t.Fatalf("%s from %s: Access-Control-Allow-Origin %q, want none", method, tc.origin, got)
				}
			}
		})
	}
}

// TestSecretsMaskedInAnswers creates a run whose webhook URL carries credentials and whose
// config and context hold secret-looking values: every answer showing them masks them, while
// the run itself gets them (the echo graph ran).
func TestSecretsMaskedInAnswers(t *testing.T) {
	s := startRunStack(t, func(d *httpapi.Deps) {})
	secrets := []string{"s3cr3t-pass", "tok-123456", "sk-live-abcdef", "hunter2", "ctx-key-987"}
	_, th := s.must(t, 200, "POST", "/threads", `{}`)
	thread := field(th, "thread_id").(string)
	body := `{"assistant_id":"echo","input":{"messages":"hi"},
		"webhook":"https://user:s3cr3t-pass@hooks.example.com/h?token=tok-123456&kind=run",
		"config":{"configurable":{"openai_api_key":"sk-live-abcdef","db_password":"hunter2","model":"gpt","max_tokens":5}},
		"context":{"api_key":"ctx-key-987"}}`
	s.must(t, 200, "POST", "/threads/"+thread+"/runs/wait", body)
	_, runs := s.must(t, 200, "GET", "/threads/"+thread+"/runs", "")
	list := runs.([]any)
	if len(list) != 1 {
		t.Fatalf("%d runs", len(list))
	}
	run := field(list[0], "run_id").(string)
	answers := map[string]string{}
	for _, path := range []string{"/threads/" + thread + "/runs", "/threads/" + thread + "/runs/" + run,
		"/threads/" + thread + "/runs?select=kwargs", "/threads/" + thread} {
		code, _, v := s.call(t, "GET", path, "")
		if code != 200 {
			t.Fatalf("GET %s: %d", path, code)
		}
		answers["GET "+path] = jsonText(t, v)
	}
	_, search := s.must(t, 200, "POST", "/threads/search", `{}`)
	answers["POST /threads/search"] = jsonText(t, search)
	_, again := s.must(t, 200, "POST", "/threads/"+thread+"/runs", strings.Replace(body, `"echo"`, `"echo","multitask_strategy":"enqueue"`, 1))
	answers["POST /threads/{id}/runs"] = jsonText(t, again)
	for what, text := range answers {
		for _, secret := range secrets {
			if strings.Contains(text, secret) {
				t.Errorf("%s shows the secret %q: %s", what, secret, text)
			}
		}
	}
	got := field(again, "kwargs")
	if w := field(got, "webhook"); w != "https://user:********@hooks.example.com/h?kind=run&token=********" {
		t.Errorf("masked webhook = %v", w)
	}
	cf := field(got, "config", "configurable")
	if field(cf, "openai_api_key") != "********" || field(cf, "model") != "gpt" || field(cf, "max_tokens") != float64(5) {
		t.Errorf("masked configurable = %v", cf)
	}
	if field(got, "context", "api_key") != "********" {
		t.Errorf("masked context = %v", field(got, "context"))
	}
	// The run itself keeps what it was given.
	rec, err := s.P.Runs.Get(context.Background(), thread, run)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Webhook == "" || !strings.Contains(rec.Webhook, "s3cr3t-pass") || !strings.Contains(jsonText(t, rec.Kwargs), "sk-live-abcdef") {
		t.Errorf("the stored run lost its secrets: webhook %q, kwargs %v", rec.Webhook, rec.Kwargs)
	}
}

// TestMaskedSecretsAreNeverWrittenBack: a client that GETs an assistant (secrets masked) and
// PATCHes its config and context back, or passes them to a run, keeps the real secrets; a masked
// placeholder with no stored secret behind it is refused with a 422 naming the field.
func TestMaskedSecretsAreNeverWrittenBack(t *testing.T) {
	s := startRunStack(t, func(d *httpapi.Deps) {})
	_, a := s.must(t, 200, "POST", "/assistants", `{"graph_id":"echo",
		"config":{"configurable":{"api_key":"sk-real","model":"m1"}},"context":{"access_token":"ctx-real"}}`)
	id := field(a, "assistant_id").(string)
	_, got := s.must(t, 200, "GET", "/assistants/"+id, "")
	if field(got, "config", "configurable", "api_key") != engine.MaskedValue {
		t.Fatalf("GET does not mask: %v", field(got, "config"))
	}
	cfg := jsonText(t, field(got, "config"))
	patched := strings.Replace(cfg, `"m1"`, `"m2"`, 1)
	s.must(t, 200, "PATCH", "/assistants/"+id, `{"config":`+patched+`,"context":`+jsonText(t, field(got, "context"))+`}`)
	stored, err := s.P.Assistants.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	cf, _ := stored.Config["configurable"].(map[string]any)
	if cf["api_key"] != "sk-real" || cf["model"] != "m2" || stored.Context["access_token"] != "ctx-real" || stored.Version != 2 {
		t.Fatalf("stored after the round trip: version %d config %v context %v", stored.Version, stored.Config, stored.Context)
	}

	// A run given the masked config runs with the stored secret.
	thread := s.newThread(t)
	s.must(t, 200, "POST", "/threads/"+thread+"/runs/wait", `{"assistant_id":"`+id+`","input":{"messages":"hi"},"config":`+cfg+`}`)
	_, runs := s.must(t, 200, "GET", "/threads/"+thread+"/runs", "")
	rec, err := s.P.Runs.Get(context.Background(), thread, field(runs.([]any)[0], "run_id").(string))
	if err != nil {
		t.Fatal(err)
	}
	if got := field(rec.Kwargs.Config, "configurable", "api_key"); got != "sk-real" {
		t.Fatalf("the run got api_key %v", got)
	}

	// Nothing stored behind the placeholder: refused, nothing appended.
	for _, tc := range []struct{ path, body, loc string }{
		{"/assistants", `{"graph_id":"echo","config":{"configurable":{"openai_api_key":"********"}}}`, "[body config configurable openai_api_key]"},
		{"/assistants/" + id, `{"context":{"db_password":"********"}}`, "[body context db_password]"},
		{"/threads/" + thread + "/runs", `{"assistant_id":"` + id + `","input":{},"webhook":"https://u:********@hooks.example.com/h"}`, "[body webhook]"},
		{"/threads/" + thread + "/runs", `{"assistant_id":"` + id + `","input":{},"config":{"configurable":{"client_secret":"********"}}}`, "[body config configurable client_secret]"},
	} {
		method := "POST"
		if strings.HasPrefix(tc.path, "/assistants/") {
			method = "PATCH"
		}
		code, _, v := s.call(t, method, tc.path, tc.body)
		detail, _ := field(v, "detail").([]any)
		if code != 422 || len(detail) != 1 || fmt.Sprint(field(detail[0], "loc")) != tc.loc {
			t.Errorf("%s %s: %d %v, want 422 at %s", method, tc.path, code, v, tc.loc)
		}
	}
	if after, _ := s.P.Assistants.Get(context.Background(), id); after.Version != 2 {
		t.Errorf("a refused patch made version %d", after.Version)
	}
}
