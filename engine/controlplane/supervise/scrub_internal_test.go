package supervise

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProcessOutputScrubbed runs a process that prints its secret (in two writes, as a graph
// dumping its environment might): the process log holds it masked.
func TestProcessOutputScrubbed(t *testing.T) {
	dir := t.TempDir()
	logPath := filepath.Join(dir, "process.log")
	const secret = "s3cret-value-42"
	p, err := newProc("d", "r", "/bin/sh", []string{"-c", `printf 'TOKEN=%s' "${TOKEN%-42}"; sleep 0.1; echo -42; echo done`},
		[]string{"TOKEN=" + secret}, "127.0.0.1:1", dir, logPath)
	if err != nil {
		t.Fatal(err)
	}
	p.secrets = []string{secret}
	if err := p.runOnce(); err != nil {
		t.Fatal(err)
	}
	out, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(out); strings.Contains(got, secret) || got != "TOKEN=********\ndone\n" {
		t.Errorf("process log %q", got)
	}
}
