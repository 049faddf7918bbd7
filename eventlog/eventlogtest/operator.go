package eventlogtest

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/jetgraph/jetgraph/eventlog"
)

// OperatorServer is a NATS server in operator mode, started from the configuration that
// `jetgraph nats init` writes (eventlog.InitOperator).
type OperatorServer struct {
	*server.Server
	// Dir holds the configuration, the keys and the credentials files.
	Dir string
}

// URL is the server's client URL.
func (s *OperatorServer) URL() string { return s.ClientURL() }

// File is the path of one of InitOperator's files in the server's folder.
func (s *OperatorServer) File(name string) string { return filepath.Join(s.Dir, name) }

// StartOperator writes an operator setup into a folder of the test and starts a JetStream
// server from its configuration, on a random loopback port. It is shut down when the test ends.
func StartOperator(t testing.TB) *OperatorServer {
	t.Helper()
	dir := t.TempDir()
	if _, err := eventlog.InitOperator(dir, "127.0.0.1:-1"); err != nil {
		t.Fatal(err)
	}
	return ServeOperator(t, dir)
}

// ServeOperator starts a JetStream server from the configuration in dir, as `jetgraph nats
// init` wrote it. It is shut down when the test ends.
func ServeOperator(t testing.TB, dir string) *OperatorServer {
	t.Helper()
	opts, err := server.ProcessConfigFile(filepath.Join(dir, eventlog.OperatorConfigFile))
	if err != nil {
		t.Fatalf("eventlogtest: the operator configuration: %v", err)
	}
	opts.NoSigs, opts.NoLog = true, true
	s, err := server.NewServer(opts)
	if err != nil {
		t.Fatalf("eventlogtest: operator server: %v", err)
	}
	go s.Start()
	t.Cleanup(s.Shutdown)
	if !s.ReadyForConnections(readyTimeout) {
		t.Fatal("eventlogtest: the operator server did not start")
	}
	return &OperatorServer{Server: s, Dir: dir}
}

// AccountStreams is how many streams the server keeps for the account of public key pub: the
// ones its monitoring reports, or, for an account without JetStream (which it no longer
// reports), the ones still on disk in its store (not counting those deleted, whose folders the
// server removes in the background).
func (s *OperatorServer) AccountStreams(t testing.TB, pub string) int {
	t.Helper()
	jsz, err := s.Jsz(&server.JSzOptions{Account: pub, Accounts: true, Streams: true})
	if err != nil {
		t.Fatalf("eventlogtest: jsz: %v", err)
	}
	n := 0
	for _, a := range jsz.AccountDetails {
		if a.Id == pub || a.Name == pub {
			n += len(a.Streams)
		}
	}
	entries, err := os.ReadDir(filepath.Join(s.Dir, "jetstream", "jetstream", pub, "streams"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("eventlogtest: %v", err)
	}
	onDisk := 0
	for _, e := range entries {
		// A deleted stream's folder is renamed ".<name>" at once, then removed in the background.
		if !strings.HasPrefix(e.Name(), ".") {
			onDisk++
		}
	}
	return max(n, onDisk)
}
