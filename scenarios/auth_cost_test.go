package scenarios

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

// TestAuthCost measures what the user's auth handler costs a run on the path an SDK takes: a
// cycle is POST /threads then POST /threads/{id}/runs/wait of the Python whoami graph, with a
// bearer token, against the Python project served with no auth, with owners_auth.py (its
// authenticate and its @auth.on rules, each a frame to the Python host), and with that handler
// and auth.cache (the token's user kept: no authenticate frame after the first). The figures
// (testing.B's, one benchmark per server) are logged; nothing is asserted of them but that every
// cycle succeeds. It runs only when asked: JETGRAPH_BENCH_AUTH=1 go test ./scenarios -run TestAuthCost -v
func TestAuthCost(t *testing.T) {
	if os.Getenv("JETGRAPH_BENCH_AUTH") == "" {
		t.Skip("a benchmark: set JETGRAPH_BENCH_AUTH=1 to run it")
	}
	project, err := filepath.Abs(filepath.Dir(hostedPythonConfig))
	if err != nil {
		t.Fatal(err)
	}
	python := ensureVenv(t, filepath.Join(project, "requirements.txt"))
	auth := `"auth": {"path": "` + filepath.Join(project, "visits", "owners_auth.py") + `:auth"`
	for _, c := range []struct{ name, auth, user string }{
		{"no-auth", ``, ""},
		{"python-handler", `, ` + auth + `}`, "ada"},
		{"python-handler-cached", `, ` + auth + `, "cache": {"cache_keys": ["authorization"]}}`, "ada"},
	} {
		conf := filepath.Join(t.TempDir(), "langgraph.json")
		body := `{"dependencies": ["` + project + `"], "graphs": {"whoami": "` + filepath.Join(project, "visits", "whoami.py") + `:graph"}` + c.auth + `}`
		if err := os.WriteFile(conf, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		srv := startServerArgs(t, t.TempDir(), "--config", conf, "--python", python)
		var failed error
		res := testing.Benchmark(func(b *testing.B) {
			for range b.N {
				if err := authCycle(srv.URL, c.user); err != nil && failed == nil {
					failed = err
				}
			}
		})
		if failed != nil {
			t.Fatalf("%s: %v", c.name, failed)
		}
		t.Logf("%-22s %s  (%.2f ms a cycle: POST /threads + POST /threads/{id}/runs/wait)", c.name, res, float64(res.NsPerOp())/1e6)
		srv.Stop()
	}
}

// authCycle is one cycle as ada: a thread, then a run waited on it, which must run as user
// (nil without auth).
func authCycle(url, user string) error {
	var th struct {
		ThreadID string `json:"thread_id"`
	}
	if err := authPost(url+"/threads", `{}`, &th); err != nil {
		return err
	}
	var out map[string]any
	if err := authPost(url+"/threads/"+th.ThreadID+"/runs/wait", `{"assistant_id": "whoami", "input": {}}`, &out); err != nil {
		return err
	}
	if got, _ := out["user_id"].(string); got != user {
		return fmt.Errorf("the run ran as %q, not %q", got, user)
	}
	return nil
}

func authPost(url, body string, into any) error {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewBufferString(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer tok-ada")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("POST %s: %s", url, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(into)
}
