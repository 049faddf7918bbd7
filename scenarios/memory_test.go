package scenarios

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// maxIdleAnonymous bounds the anonymous memory (the Go heap and stacks, not the bbolt files the
// kernel maps) a server keeps once a burst of large requests is over: its soft memory limit
// (512 MiB) and some room. Without the limit it kept several GiB for minutes.
const maxIdleAnonymous = 768 << 20

// TestRSSAfterLargeRequests sends the built server a bounded mix of large requests (16 MiB run
// inputs, 8 MiB store items and thread states, gzipped traces, a 70 MiB body refused with 413)
// and checks, from /proc, that it gives the memory back: within a minute of the last answer its
// anonymous memory is under maxIdleAnonymous.
func TestRSSAfterLargeRequests(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	if testing.Short() {
		t.Skip("sends about 400 MB")
	}
	s := startServer(t, t.TempDir())
	pid := s.cmd.Process.Pid
	t.Logf("anonymous memory before: %d MiB", anonymous(t, pid)>>20)
	send := func(method, path, ctype, enc string, body []byte, want int) {
		t.Helper()
		req, err := http.NewRequest(method, s.URL+path, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", ctype)
		if enc != "" {
			req.Header.Set("Content-Encoding", enc)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("%s %s: %d %.200s, want %d", method, path, resp.StatusCode, out, want)
		}
	}
	mib := func(n int) string { return strings.Repeat("x", n<<20) }
	for r := range 4 {
		send("POST", "/runs/wait", "application/json", "",
			[]byte(`{"assistant_id": "echo", "input": {"messages": [{"role": "user", "content": "`+mib(16)+`"}]}}`), 200)
		send("PUT", "/store/items", "application/json", "",
			[]byte(`{"namespace": ["n"], "key": "k`+strconv.Itoa(r)+`", "value": {"doc": "`+mib(8)+`"}}`), 204)
		send("POST", "/threads", "application/json", "",
			[]byte(`{"metadata": {"graph_id": "echo"}, "supersteps": [{"updates": [{"values": {"messages": [{"role": "human", "content": "`+mib(8)+`"}]}, "as_node": "echo"}]}]}`), 200)
		send("POST", "/threads", "application/json", "", []byte(`{"metadata": {"x": "`+mib(70)+`"}}`), 413)
		var gz bytes.Buffer
		zw := gzip.NewWriter(&gz)
		id := fmt.Sprintf("0190a8c2-7f00-7000-8000-%012d", r)
		fmt.Fprintf(zw, `{"post": [{"id": "%s", "trace_id": "%s", "dotted_order": "20240101T000000000000Z%s", "name": "big",
			"run_type": "chain", "start_time": "2024-01-01T00:00:00Z", "inputs": {"doc": "%s"}}]}`, id, id, id, mib(6))
		_ = zw.Close()
		send("POST", "/tracing/runs/batch", "application/json", "gzip", gz.Bytes(), 202)
	}
	after := anonymous(t, pid)
	t.Logf("anonymous memory right after: %d MiB", after>>20)
	for deadline := time.Now().Add(time.Minute); after > maxIdleAnonymous && time.Now().Before(deadline); {
		time.Sleep(time.Second) // polling what the runtime gives back, not timing
		after = anonymous(t, pid)
	}
	if after > maxIdleAnonymous {
		t.Fatalf("anonymous memory a minute after the requests: %d MiB, want at most %d", after>>20, maxIdleAnonymous>>20)
	}
	t.Logf("anonymous memory once given back: %d MiB", after>>20)
}

// anonymous is the anonymous memory of process pid in bytes (/proc/<pid>/smaps_rollup).
func anonymous(t *testing.T, pid int) int64 {
	t.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "Anonymous:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no Anonymous line in smaps_rollup")
	return 0
}
