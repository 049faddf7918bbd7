package scenarios

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

const (
	readyTimeout = 60 * time.Second
	stopTimeout  = 10 * time.Second
	nodeTimeout  = 120 * time.Second // one client script (node or python)
)

// binDir holds the jetgraph binary built for this test process.
var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "jetgraph-scenarios-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "scenarios:", err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// buildBinary builds ./cmd/jetgraph once per test process and returns its path.
// If JETGRAPH_BIN is set, that prebuilt binary is used instead.
func buildBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		if bin := os.Getenv("JETGRAPH_BIN"); bin != "" {
			binPath, buildErr = filepath.Abs(bin)
			return
		}
		path := filepath.Join(binDir, "jetgraph")
		cmd := exec.Command("go", "build", "-o", path, "./cmd/jetgraph")
		cmd.Dir = ".."
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/jetgraph: %v\n%s", err, out)
			return
		}
		binPath = path
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

var (
	npmOnce sync.Once
	npmErr  error
)

// ensureNodeModules makes sure node and npm are present and the pinned packages
// (the LangGraph SDK, the langsmith client, both A2A clients) are installed in
// scenarios/node_modules, running `npm ci` at most once. Without node or npm
// the test is skipped locally but fails under CI.
func ensureNodeModules(t *testing.T) {
	t.Helper()
	needTools(t, "the scenario tests", "node", "npm")
	npmOnce.Do(func() {
		if installed("@langchain/langgraph-sdk", "1.15.0") && installed("langsmith", "0.12.0") && installed("@a2a-js/sdk", "0.3.14") &&
			installed("@a2a-js/sdk-1", "1.3.0") {
			return
		}
		cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund")
		if out, err := cmd.CombinedOutput(); err != nil {
			npmErr = fmt.Errorf("npm ci: %v\n%s", err, out)
		}
	})
	if npmErr != nil {
		t.Fatal(npmErr)
	}
}

// needTools skips the test when a tool that what needs is not on PATH, but fails it under CI,
// which must run every test.
func needTools(t *testing.T, what string, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "" {
				t.Skipf("%s not on PATH; %s need it", tool, what)
			}
			t.Fatalf("%s not on PATH, and CI must run %s", tool, what)
		}
	}
}

// installed reports whether node_modules holds version of package pkg (as package.json pins it).
func installed(pkg, version string) bool {
	raw, err := os.ReadFile(filepath.Join("node_modules", filepath.FromSlash(pkg), "package.json"))
	if err != nil {
		return false
	}
	var p struct {
		Version string `json:"version"`
	}
	return json.Unmarshal(raw, &p) == nil && p.Version == version
}

// syncBuffer is a bytes.Buffer safe for concurrent writes and reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// server is a running jetgraph process.
type server struct {
	URL  string // base URL, e.g. http://127.0.0.1:40123
	Data string // data directory passed with --data

	t    *testing.T
	cmd  *exec.Cmd
	logs *syncBuffer
	done chan struct{} // closed once the process has exited
}

// startServer starts the jetgraph binary on a free loopback port with the given
// data directory and waits until GET /ok answers 200. The server is stopped,
// and on failure its output logged, when the test ends.
func startServer(t *testing.T, dataDir string) *server {
	t.Helper()
	return startServerArgs(t, dataDir)
}

// startServerArgs is startServer with extra command-line flags.
func startServerArgs(t *testing.T, dataDir string, extra ...string) *server {
	t.Helper()
	return startServerAt(t, dataDir, freeAddr(t), extra...)
}

// startServerAt is startServerArgs on the address addr: a restarted server keeps the URL
// its deployments' custom_url was made from.
func startServerAt(t *testing.T, dataDir, addr string, extra ...string) *server {
	t.Helper()
	return startServerIn(t, "", dataDir, addr, extra...)
}

// startServerIn is startServerAt with dir as the server's working directory ("": this one), for
// a project served from its own folder as its user would.
func startServerIn(t *testing.T, dir, dataDir, addr string, extra ...string) *server {
	t.Helper()
	return startProgram(t, buildBinary(t), dir, dataDir, addr, extra...)
}

// startProgram is startServerIn with bin, a program built on cli.Main, in place of jetgraph.
func startProgram(t *testing.T, bin, dir, dataDir, addr string, extra ...string) *server {
	t.Helper()
	s := &server{
		URL:  "http://" + addr,
		Data: dataDir,
		t:    t,
		logs: &syncBuffer{},
		done: make(chan struct{}),
	}
	s.cmd = exec.Command(bin, append([]string{"serve", "--addr", addr, "--data", dataDir, "--log-format", "text"}, extra...)...)
	s.cmd.Dir = dir
	s.cmd.Stdout = s.logs
	s.cmd.Stderr = s.logs
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	go func() {
		s.cmd.Wait()
		close(s.done)
	}()
	t.Cleanup(func() {
		s.Stop()
		if t.Failed() {
			t.Logf("jetgraph at %s (data %s) output:\n%s", s.URL, s.Data, s.logs.String())
			logDeploymentProcesses(t, s.Data)
		}
	})
	s.waitReady()
	return s
}

// logDeploymentProcesses logs the output of the deployments' revision processes the control
// plane of data folder data ran (deployments/<id>/<revision>/process.log), the end of each: a
// failure through a deployment's custom_url shows what its runtime said.
func logDeploymentProcesses(t *testing.T, data string) {
	t.Helper()
	logs, _ := filepath.Glob(filepath.Join(data, "deployments", "*", "*", "process.log"))
	for _, path := range logs {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Logf("%s: %v", path, err)
			continue
		}
		if len(raw) > processLogTail {
			raw = append([]byte("...\n"), raw[len(raw)-processLogTail:]...)
		}
		t.Logf("deployment process %s output:\n%s", path, raw)
	}
}

// processLogTail is how much of a deployment process's log a failed test shows.
const processLogTail = 256 << 10

// freeAddr returns a loopback host:port that was free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("find a free port: %v", err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// waitReady polls GET /ok every 50ms until it answers 200.
func (s *server) waitReady() {
	s.t.Helper()
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(readyTimeout)
	for {
		resp, err := client.Get(s.URL + "/ok")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-s.done:
			s.t.Fatalf("jetgraph exited before it was ready (%v)", s.cmd.ProcessState)
		default:
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("jetgraph not ready at %s/ok after %v (last error %v)", s.URL, readyTimeout, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Kill9 kills the server with SIGKILL, as a crash would, and waits for it.
func (s *server) Kill9() {
	s.t.Helper()
	if err := s.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		s.t.Fatalf("kill -9 jetgraph: %v", err)
	}
	<-s.done
}

// Stop asks the server to shut down with SIGTERM and kills it if it has not
// exited within 10 seconds. Stopping a stopped server does nothing.
func (s *server) Stop() {
	select {
	case <-s.done:
		return
	default:
	}
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err == nil {
		select {
		case <-s.done:
			return
		case <-time.After(stopTimeout):
			s.t.Errorf("jetgraph did not exit within %v of SIGTERM; killing it", stopTimeout)
		}
	}
	s.cmd.Process.Kill()
	<-s.done
}

// runNode runs `node script args...` in the scenarios directory against srv
// (JETGRAPH_URL) and returns its stdout. A non-zero exit fails the test.
func runNode(t *testing.T, srv *server, script string, args ...string) string {
	t.Helper()
	ensureNodeModules(t)
	return runClient(t, []string{"JETGRAPH_URL=" + srv.URL}, "node", append([]string{script}, args...)...)
}

// runClient runs a client program (node or python and its arguments) with env added to this
// process's environment, bounded by nodeTimeout, and returns its stdout. A non-zero exit fails
// the test with both outputs.
func runClient(t *testing.T, env []string, program string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), nodeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, program, args...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (timed out after %v)", err, nodeTimeout)
		}
		t.Fatalf("%s %s: %v\n--- stdout ---\n%s\n--- stderr ---\n%s",
			filepath.Base(program), shorten(strings.Join(args, " ")), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// shorten cuts s to at most 200 bytes for error messages.
func shorten(s string) string {
	if len(s) <= 200 {
		return s
	}
	return s[:200] + "..."
}

// lastLine returns the last non-empty line of out.
func lastLine(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
