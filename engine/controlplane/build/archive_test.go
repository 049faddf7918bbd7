package build

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/engine/controlplane"
	"github.com/jetgraph/jetgraph/eventlog"
)

// archiveOf is a gzipped tar of the given entries (a name ending in "/" is a folder, one with
// "->" a symbolic link).
func archiveOf(t testing.TB, entries map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for name, body := range entries {
		hdr := &tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}
		switch {
		case strings.HasSuffix(name, "/"):
			hdr.Typeflag, hdr.Size, hdr.Mode = tar.TypeDir, 0, 0o755
		case strings.HasPrefix(body, "->"):
			hdr.Typeflag, hdr.Size, hdr.Linkname = tar.TypeSymlink, 0, strings.TrimPrefix(body, "->")
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if hdr.Typeflag == tar.TypeReg {
			if _, err := tw.Write([]byte(body)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// FuzzUnpackProject checks that no archive writes outside the project's folder: neither by a
// path that climbs out of it nor through a symbolic link.
func FuzzUnpackProject(f *testing.F) {
	f.Add(archiveOf(f, map[string]string{"a/b.txt": "x", "c/": ""}))
	f.Add(archiveOf(f, map[string]string{"../evil": "x"}))
	f.Add(archiveOf(f, map[string]string{"/abs": "x"}))
	f.Add(archiveOf(f, map[string]string{"up": "->..", "link": "->/tmp"}))
	f.Add(archiveOf(f, map[string]string{"up": "->..", "up/evil": "x"}))
	f.Add([]byte("not gzip"))
	f.Fuzz(func(t *testing.T, data []byte) {
		parent := t.TempDir()
		dir := filepath.Join(parent, "project")
		_ = unpackProject(data, dir)
		entries, err := os.ReadDir(parent)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.Name() != "project" {
				t.Fatalf("the archive wrote %s outside the project's folder", e.Name())
			}
		}
	})
}

// TestPackSkips checks that the archive holds the project's files without the installed
// packages and .git, and that unpacking it gives the same files back.
func TestPackSkips(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{"langgraph.json": "{}", "src/a.ts": "export {}", "node_modules/x/index.js": "x", ".git/HEAD": "ref", "dist/a.js": "built"} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data, err := packProject(dir, map[string]bool{"node_modules": true})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "project")
	if err := unpackProject(data, out); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{"langgraph.json": true, "src/a.ts": true, "dist/a.js": true, "node_modules": false, ".git": false} {
		if _, err := os.Stat(filepath.Join(out, name)); (err == nil) != want {
			t.Errorf("%s in the unpacked project: %v, want %v", name, err == nil, want)
		}
	}
}

// TestProjectRestore makes a built project ready on a second process (another folder and
// cache, the same object store): its files come from the store, checked against the digest,
// its virtual environment is made there, and a second deploy finds the folder ready.
func TestProjectRestore(t *testing.T) {
	tools := toolDir(t, "python3")
	env := []string{"PATH=" + tools + ":/usr/bin:/bin", "HOME=" + os.Getenv("HOME")}
	ctx := context.Background()
	l, err := eventlog.Open(ctx, eventlog.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	objs, err := l.OpenObjects(ctx, "TEST_PROJECTS", 0)
	if err != nil {
		t.Fatal(err)
	}
	src := t.TempDir()
	config := `{"dependencies": ["."], "graphs": {"g": "./g.py:graph"}}`
	for name, body := range map[string]string{"langgraph.json": config, "requirements.txt": "# nothing\n", "g.py": "graph = None\n"} {
		if err := os.WriteFile(filepath.Join(src, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	files, err := packProject(src, nil)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(files)
	art := controlplane.Artifact{Kind: controlplane.ArtifactProject, Config: []byte(config), ConfigFile: "langgraph.json",
		Object: ObjectPrefix("d") + "r", Digest: hex.EncodeToString(sum[:])}
	if err := objs.Put(ctx, art.Object, files); err != nil {
		t.Fatal(err)
	}
	other := &Builder{Dir: t.TempDir(), Env: env, Objects: objs, Timeout: 3 * time.Minute}
	spec := controlplane.DeploySpec{DeploymentID: "d", RevisionID: "r", Artifact: art}
	var log bytes.Buffer
	cfg, venv, err := other.Project(ctx, spec, &log)
	if err != nil {
		t.Fatalf("%v\n%s", err, &log)
	}
	if got, err := os.ReadFile(cfg); err != nil || string(got) != config || !strings.HasPrefix(cfg, other.Dir) {
		t.Fatalf("the restored config %s: %q %v", cfg, got, err)
	}
	if _, err := os.Stat(filepath.Join(venv, "bin", "python")); err != nil || !strings.HasPrefix(venv, other.cache()) {
		t.Fatalf("the venv %s: %v\n%s", venv, err, &log)
	}
	if !strings.Contains(log.String(), "making the project's folder") || !strings.Contains(log.String(), "cache miss") {
		t.Errorf("the restore's log:\n%s", &log)
	}
	log.Reset()
	if cfg2, venv2, err := other.Project(ctx, spec, &log); err != nil || cfg2 != cfg || venv2 != venv || log.Len() != 0 {
		t.Fatalf("the second deploy: %s %s %v, log %q", cfg2, venv2, err, &log)
	}
	bad := spec
	bad.RevisionID = "r2"
	bad.Artifact.Digest = strings.Repeat("0", 64)
	if _, _, err := other.Project(ctx, bad, &log); err == nil || !strings.Contains(err.Error(), "has not the artifact's digest") {
		t.Fatalf("a project whose digest differs: %v", err)
	}
}
