package scenarios

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// pythonRequirements is the lock file (exact versions with hashes) of the official Python clients.
const pythonRequirements = "python/requirements.txt"

// venvs are the environments made by this test process, by lock file.
var (
	venvMu sync.Mutex
	venvs  = map[string]*venv{}
)

type venv struct {
	once sync.Once
	py   string
	err  error
}

// ensurePython returns the interpreter of a virtual environment holding exactly the pinned Python
// clients (langgraph-sdk, langsmith). The environment is made on first use under the user's cache
// folder (JETGRAPH_PY_CACHE overrides it), never in the tree, and is named by the hash of the lock
// file, so a changed lock file gets a new environment and an unchanged one is reused by every later
// run. Without python3 the test is skipped locally but fails under CI.
func ensurePython(t *testing.T) string {
	t.Helper()
	return ensureVenv(t, pythonRequirements)
}

// ensureVenv returns the interpreter of a virtual environment holding exactly what the lock file
// (a requirements file with hashes) pins, made as ensurePython's is.
func ensureVenv(t *testing.T, lockFile string) string {
	t.Helper()
	base, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("CI") == "" {
			t.Skip("python3 not on PATH; the Python scenarios need it")
		}
		t.Fatal("python3 not on PATH, and CI must run the Python scenarios")
	}
	venvMu.Lock()
	v := venvs[lockFile]
	if v == nil {
		v = &venv{}
		venvs[lockFile] = v
	}
	venvMu.Unlock()
	v.once.Do(func() { v.py, v.err = makeVenv(base, lockFile) })
	if v.err != nil {
		t.Fatal(v.err)
	}
	return v.py
}

// makeVenv creates (or reuses) the environment for the lock file. A file lock serialises test
// processes that make it at once; a marker written last tells a whole environment from one whose
// install was cut short, which is removed and made again.
func makeVenv(base, lockFile string) (string, error) {
	lock, err := os.ReadFile(lockFile)
	if err != nil {
		return "", fmt.Errorf("python venv: %w", err)
	}
	root := os.Getenv("JETGRAPH_PY_CACHE")
	if root == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			return "", fmt.Errorf("python venv: no cache folder (set JETGRAPH_PY_CACHE): %w", err)
		}
		root = filepath.Join(cache, "jetgraph", "scenarios-python")
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", fmt.Errorf("python venv: %w", err)
	}
	sum := sha256.Sum256(lock)
	dir := filepath.Join(root, "venv-"+hex.EncodeToString(sum[:8]))
	py := filepath.Join(dir, "bin", "python")
	marker := filepath.Join(dir, ".complete")

	lf, err := os.OpenFile(dir+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", fmt.Errorf("python venv: %w", err)
	}
	defer lf.Close()
	if err := syscall.Flock(int(lf.Fd()), syscall.LOCK_EX); err != nil {
		return "", fmt.Errorf("python venv: lock %s: %w", lf.Name(), err)
	}
	defer syscall.Flock(int(lf.Fd()), syscall.LOCK_UN)

	if _, err := os.Stat(marker); err == nil {
		return py, nil
	}
	if err := os.RemoveAll(dir); err != nil {
		return "", fmt.Errorf("python venv: %w", err)
	}
	abs, err := filepath.Abs(lockFile)
	if err != nil {
		return "", err
	}
	steps := [][]string{
		{base, "-m", "venv", dir},
		{py, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-input",
			"--require-hashes", "--only-binary", ":all:", "-r", abs},
	}
	for _, s := range steps {
		cmd := exec.Command(s[0], s[1:]...)
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("python venv: %s: %v\n%s", strings.Join(s, " "), err, out)
		}
	}
	if err := os.WriteFile(marker, lock, 0o644); err != nil {
		return "", fmt.Errorf("python venv: %w", err)
	}
	return py, nil
}

// runPython runs a Python client script from scenarios/python against srv (JETGRAPH_URL) with the
// pinned clients and returns its stdout. A non-zero exit fails the test with both outputs.
func runPython(t *testing.T, srv *server, script string, args ...string) string {
	t.Helper()
	return runPythonEnv(t, srv, nil, script, args...)
}

// runPythonEnv is runPython with extra environment variables (KEY=VALUE).
func runPythonEnv(t *testing.T, srv *server, env []string, script string, args ...string) string {
	t.Helper()
	py := ensurePython(t)
	env = append([]string{"JETGRAPH_URL=" + srv.URL, "PYTHONUNBUFFERED=1"}, env...)
	return runClient(t, env, py, append([]string{"-X", "dev", filepath.Join("python", script)}, args...)...)
}
