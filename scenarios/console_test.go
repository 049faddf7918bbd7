package scenarios

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// consoleWeb is the console's TypeScript project (sources, tsconfig, the pinned tsc).
const consoleWeb = "../httpapi/console/web"

// consoleAdminKey is the admin key of the servers the browser tests start: the console asks for it.
const consoleAdminKey = "console-admin-key-0123456789abcdef"

var (
	consoleNpmOnce sync.Once
	consoleNpmErr  error
)

// ensureConsoleTSC installs the console's pinned TypeScript compiler (npm ci in its folder) once.
func ensureConsoleTSC(t *testing.T) string {
	t.Helper()
	needTools(t, "the console's asset check", "node", "npm")
	tsc := filepath.Join(consoleWeb, "node_modules", "typescript", "bin", "tsc")
	consoleNpmOnce.Do(func() {
		lock, err := os.ReadFile(filepath.Join(consoleWeb, "package-lock.json"))
		if err != nil {
			consoleNpmErr = err
			return
		}
		if have, err := os.ReadFile(filepath.Join(consoleWeb, "node_modules", ".package-lock.json")); err == nil && sameLock(have, lock) {
			return
		}
		cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund")
		cmd.Dir = consoleWeb
		if out, err := cmd.CombinedOutput(); err != nil {
			consoleNpmErr = fmt.Errorf("npm ci in %s: %v\n%s", consoleWeb, err, out)
		}
	})
	if consoleNpmErr != nil {
		t.Fatal(consoleNpmErr)
	}
	return tsc
}

// sameLock reports whether the installed tree's lock (node_modules/.package-lock.json) pins what
// package-lock.json pins: the same "typescript" entry.
func sameLock(installed, lock []byte) bool {
	entry := func(b []byte) string {
		s := string(b)
		i := strings.Index(s, `"node_modules/typescript": {`)
		if i < 0 {
			return ""
		}
		j := strings.Index(s[i:], "}")
		return strings.Join(strings.Fields(s[i:i+j]), " ")
	}
	e := entry(lock)
	return e != "" && e == entry(installed)
}

// TestConsoleAssetsCurrent compiles the console's TypeScript into a temporary folder with the
// pinned tsc and fails when httpapi/console/web/dist (committed, embedded in the binary) differs:
// a source changed without `npm run build` in httpapi/console/web.
func TestConsoleAssetsCurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	tsc := ensureConsoleTSC(t)
	out := t.TempDir()
	cmd := exec.Command("node", tsc, "-p", consoleWeb, "--outDir", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tsc: %v\n%s", err, b)
	}
	want := readTree(t, out)
	have := readTree(t, filepath.Join(consoleWeb, "dist"))
	if len(want) == 0 {
		t.Fatal("tsc compiled nothing")
	}
	for name, b := range want {
		if h, ok := have[name]; !ok {
			t.Errorf("dist/%s is missing: run `npm run build` in httpapi/console/web and commit dist", name)
		} else if !bytes.Equal(h, b) {
			t.Errorf("dist/%s is stale: run `npm run build` in httpapi/console/web and commit dist", name)
		}
	}
	for name := range have {
		if _, ok := want[name]; !ok {
			t.Errorf("dist/%s has no source: delete it", name)
		}
	}
}

// readTree reads every file under dir by its slash path.
func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		files[filepath.ToSlash(rel)] = b
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// chromiumPath is Debian's Chromium, which the browser tests drive with playwright-core (which
// never downloads a browser of its own); JETGRAPH_CHROMIUM names another.
func chromiumPath(t *testing.T) string {
	t.Helper()
	p := os.Getenv("JETGRAPH_CHROMIUM")
	if p == "" {
		p = "/usr/bin/chromium"
	}
	if _, err := os.Stat(p); err != nil {
		const how = "install Debian's chromium (sudo apt-get install -y chromium) or set JETGRAPH_CHROMIUM"
		if os.Getenv("CI") == "" {
			t.Skipf("no Chromium at %s, which the console's browser tests need: %s", p, how)
		}
		t.Fatalf("no Chromium at %s, and CI must run the console's browser tests: %s", p, how)
	}
	return p
}

// screenshotDir is where a browser test saves its screenshots: $JETGRAPH_SCREENSHOTS/<test>, or
// scenarios/testdata/screenshots/<test> (ignored by git), emptied first.
func screenshotDir(t *testing.T) string {
	t.Helper()
	root := os.Getenv("JETGRAPH_SCREENSHOTS")
	if root == "" {
		root = filepath.Join("testdata", "screenshots")
	}
	dir, err := filepath.Abs(filepath.Join(root, t.Name()))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// startConsoleServer serves the example graphs in dev mode with API keys required, so that the
// console has to ask for the key. It skips (or in CI fails) first when there is no Chromium.
func startConsoleServer(t *testing.T) *server {
	t.Helper()
	chromiumPath(t)
	t.Setenv("JETGRAPH_ADMIN_KEY", consoleAdminKey)
	for _, v := range []string{"LANGGRAPH_API_KEY", "LANGSMITH_API_KEY", "LANGCHAIN_API_KEY"} {
		t.Setenv(v, "")
	}
	return startServerArgs(t, t.TempDir(), "--dev", "--auth", "api-key")
}

// runConsoleScript runs a browser script (a .mjs using console_harness.mjs) against srv and
// returns its output; it must print "ok" last.
func runConsoleScript(t *testing.T, srv *server, script string) string {
	t.Helper()
	ensureNodeModules(t)
	chromium := chromiumPath(t)
	shots := screenshotDir(t)
	out := runClient(t, []string{"JETGRAPH_URL=" + srv.URL, "JETGRAPH_KEY=" + consoleAdminKey, "CHROMIUM=" + chromium, "SCREENSHOTS=" + shots},
		"node", script)
	if got := lastLine(out); got != "ok" {
		t.Fatalf("%s printed %q last, want ok:\n%s", script, got, out)
	}
	t.Logf("screenshots in %s", shots)
	return out
}

// TestConsoleThreadsGraphs drives the console in headless Chromium against the built binary:
// the key prompt; a react thread's steps and its tool result; a fork with edited values run from
// a step; the weather graph's breakpoint in its subgraph answered by editing the subgraph's
// state; an interrupt() answered with a resume value; the graphs list, the react graph drawn and
// a run started from its form.
func TestConsoleThreadsGraphs(t *testing.T) {
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	srv := startConsoleServer(t)
	runConsoleScript(t, srv, "console_threads.mjs")
}

// TestConsoleHostileStrings feeds thread metadata, state values and assistant names that are
// markup and script (<script>, onerror, javascript: URLs, "><svg onload>) and checks in the
// browser that none ran, that no content was blocked by the Content-Security-Policy (nothing was
// parsed as markup), and that each string is shown as text.
func TestConsoleHostileStrings(t *testing.T) {
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	srv := startConsoleServer(t)
	runConsoleScript(t, srv, "console_hostile.mjs")
}
