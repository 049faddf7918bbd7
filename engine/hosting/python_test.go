package hosting

import (
	"os"
	"path/filepath"
	"testing"
)

// TestPythonHostFile: the host's program and the modules it imports are written side by side
// into one folder named by their hash, and a second call over a complete folder finds them as
// they are (a host already running from it keeps its files).
func TestPythonHostFile(t *testing.T) {
	cache := t.TempDir()
	path, err := PythonHostFile(cache)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(path) != pythonHostMain {
		t.Fatalf("the host's program is %s, want %s", path, pythonHostMain)
	}
	files, err := pythonHostFiles()
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 2 {
		t.Fatalf("the host ships %d files, want the program and its codec", len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(filepath.Dir(path), f.name))
		if err != nil || string(b) != string(f.data) {
			t.Fatalf("%s beside the program: %v (same: %t)", f.name, err, string(b) == string(f.data))
		}
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	again, err := PythonHostFile(cache)
	if err != nil || again != path {
		t.Fatalf("second call: %s, %v; want %s", again, err, path)
	}
	if info2, _ := os.Stat(path); !info2.ModTime().Equal(info.ModTime()) {
		t.Fatal("a complete host folder was written again")
	}
	leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "*.tmp"))
	if len(leftovers) > 0 {
		t.Fatalf("temporary files left: %v", leftovers)
	}
}
