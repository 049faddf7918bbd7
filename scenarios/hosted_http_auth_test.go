package scenarios

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// TestCustomRouteAuth serves a Starlette app (http.app) beside the API under --auth jwt, with and
// without http.enable_custom_route_auth: without it the custom route answers anyone, as on the
// reference servers, while the API asks for a token; with it the custom route asks for one too.
func TestCustomRouteAuth(t *testing.T) {
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	const secret = "custom-route-auth-secret-0123456789abcdef"
	t.Setenv("JETGRAPH_AUTH_JWT_SECRET", secret)
	token, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{
		"sub": "ada", "exp": time.Now().Add(time.Hour).Unix(),
	}).SignedString([]byte(secret))
	if err != nil {
		t.Fatal(err)
	}
	app, err := os.ReadFile(filepath.Join(filepath.Dir(hostedPythonConfig), "visits", "app.py"))
	if err != nil {
		t.Fatal(err)
	}
	userPython := ensureVenv(t, filepath.Join(filepath.Dir(hostedPythonConfig), "requirements.txt"))
	for _, c := range []struct {
		name      string
		routeAuth bool
		anonymous int // the custom route's status without a token
	}{
		{"public custom routes", false, 200},
		{"enable_custom_route_auth", true, 401},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			conf := `{"graphs": {"agent": "echo"}, "http": {"app": "./app.py:app", "enable_custom_route_auth": ` +
				map[bool]string{true: "true", false: "false"}[c.routeAuth] + `}}`
			for name, data := range map[string]string{"langgraph.json": conf, "app.py": string(app)} {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			srv := startServerArgs(t, t.TempDir(), "--config", filepath.Join(dir, "langgraph.json"), "--python", userPython, "--auth", "jwt")
			get := func(path, tok string) (int, string) {
				t.Helper()
				req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
				if tok != "" {
					req.Header.Set("Authorization", "Bearer "+tok)
				}
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatalf("GET %s: %v", path, err)
				}
				defer res.Body.Close()
				b, _ := io.ReadAll(res.Body)
				return res.StatusCode, string(b)
			}
			// The custom routes come up with the host: wait for the first, with a token.
			for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(300 * time.Millisecond) {
				code, body := get("/hello?name=jet", token)
				if code == 200 {
					if strings.TrimSpace(body) != `{"hello":"jet"}` {
						t.Fatalf("GET /hello with a token = %s", body)
					}
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("GET /hello with a token = %d %s", code, body)
				}
			}
			if code, body := get("/hello?name=anon", ""); code != c.anonymous {
				t.Errorf("GET /hello without a token = %d %s, want %d", code, body, c.anonymous)
			}
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/assistants/search", strings.NewReader(`{}`))
			req.Header.Set("Content-Type", "application/json")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != 401 {
				t.Errorf("POST /assistants/search without a token = %d, want 401", res.StatusCode)
			}
		})
	}
}
