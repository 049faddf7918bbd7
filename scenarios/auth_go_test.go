package scenarios

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestGoAuthHandler builds the Go program with an auth handler of its own
// (scenarios/examples/go-auth: cli.Program's Auth, bearer tokens to users, owners.Rules) and
// drives it with two users through the official JS SDK and two others through the official
// Python SDK: each sees only their own threads, runs, assistants, crons and store namespace, and
// no token is a 401. The program refuses --auth beside its handler.
func TestGoAuthHandler(t *testing.T) {
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	bin := filepath.Join(t.TempDir(), "go-auth")
	build := exec.Command("go", "build", "-o", bin, "./scenarios/examples/go-auth")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./scenarios/examples/go-auth: %v\n%s", err, out)
	}
	const tokens = "tok-ada=ada tok-bo=bo tok-cy=cy tok-di=di"
	t.Setenv("GO_AUTH_TOKENS", tokens) // inherited by the program
	srv := startProgram(t, bin, "", t.TempDir(), freeAddr(t))

	js := []string{"JETGRAPH_URL=" + srv.URL, "TOKEN_A=tok-ada", "USER_A=ada", "TOKEN_B=tok-bo", "USER_B=bo"}
	if got := lastLine(runClient(t, js, "node", "auth_go.mjs")); got != "ok" {
		t.Fatalf("auth_go.mjs printed %q, want ok", got)
	}
	py := []string{"TOKEN_A=tok-cy", "USER_A=cy", "TOKEN_B=tok-di", "USER_B=di"}
	if got := lastLine(runPythonEnv(t, srv, py, "auth_go.py")); got != "ok" {
		t.Fatalf("auth_go.py printed %q, want ok", got)
	}
	logs := srv.logs.String()
	if !strings.Contains(logs, "auth=custom") || !strings.Contains(logs, "status=401") {
		t.Errorf("the log shows no custom authentication or no 401")
	}
	for _, token := range strings.Fields(tokens) {
		if tok, _, _ := strings.Cut(token, "="); strings.Contains(logs, tok) {
			t.Errorf("a token is in the server's log: %s", tok)
		}
	}

	out, err := exec.Command(bin, "serve", "--auth", "jwt", "--data", t.TempDir(), "--addr", freeAddr(t)).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "cannot go with --auth jwt") {
		t.Errorf("serve with the program's handler and --auth: %v\n%s", err, out)
	}
}

// TestReadmeGoAuthSteps runs the README's steps of the Go auth handler as they are written, with
// the program built in a temporary folder and a free address and data folder in place of theirs:
// no token is a 401, alice's assistant is hers and a 404 to bob, and bob's store namespace is his
// alone.
func TestReadmeGoAuthSteps(t *testing.T) {
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	raw, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	const serve = `GO_AUTH_TOKENS="tok-alice=alice tok-bob=bob" ./go-auth serve --addr localhost:8124 --data .go-auth &`
	var block string
	for _, m := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(string(raw), -1) {
		if strings.Contains(m[1], serve+"\n") {
			block = m[1]
		}
	}
	if block == "" {
		t.Fatalf("the README has no block with %q", serve)
	}
	addr, bin := freeAddr(t), filepath.Join(t.TempDir(), "go-auth")
	script := strings.Replace(block, serve, serve+
		"\nSERVER=$!\ntrap 'kill $SERVER; wait $SERVER' EXIT\nfor i in $(seq 300); do curl -sf "+addr+"/ok >/dev/null && break; sleep 0.1; done", 1)
	script = strings.NewReplacer("localhost:8124", addr, "-o go-auth", "-o '"+bin+"'", "./go-auth serve", "'"+bin+"' serve",
		"--data .go-auth", "--data '"+t.TempDir()+"'").Replace(script)
	out := runClient(t, nil, "bash", "-euc", "cd ..\n"+script)
	rest := out
	for _, w := range []string{`{"detail":"Unknown or missing token"}`, `"metadata":{"owner":"alice"}`, `{"detail":"Assistant not found"}`,
		`{"namespaces":[["bob","notes"]]}`, `{"namespaces":[]}`} {
		i := strings.Index(rest, w)
		if i < 0 {
			t.Fatalf("the steps printed no %q after the earlier ones:\n%s", w, out)
		}
		rest = rest[i+len(w):]
	}
}
