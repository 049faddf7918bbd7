package eventlogtest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetgraph/jetgraph/eventlog"
)

// readyTimeout bounds every wait for servers to start and for JetStream to be usable.
const readyTimeout = 30 * time.Second

// Server starts one listening JetStream server (no cluster) for the test and returns its client
// URL. It is shut down when the test ends.
func Server(t testing.TB) string {
	t.Helper()
	return Cluster(t, 1)[0]
}

// Cluster starts n in-process JetStream servers named n1..nn, clustered when n > 1, waits until
// JetStream answers on every one of them (a meta leader is elected) and returns their client
// URLs. They are shut down when the test ends.
func Cluster(t testing.TB, n int) []string {
	t.Helper()
	servers := ClusterServers(t, n)
	urls := make([]string, len(servers))
	for i, s := range servers {
		urls[i] = s.ClientURL()
	}
	return urls
}

// ClusterServers is Cluster returning the servers themselves, so that a test can shut one down.
// Shutting a server down early is fine: the cleanup shuts down whatever is still running.
func ClusterServers(t testing.TB, n int) []*server.Server {
	t.Helper()
	if n < 1 {
		t.Fatalf("eventlogtest: cluster of %d servers", n)
	}
	// Cluster ports are picked before the servers start (each server's routes name all of
	// them), so another process may take one in between: start afresh on new ports then.
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		servers, err := startCluster(t, n)
		if err == nil {
			t.Cleanup(func() { shutdown(servers) })
			if err := waitJetStream(servers); err != nil {
				t.Fatalf("eventlogtest: %v", err)
			}
			return servers
		}
		lastErr = err
	}
	t.Fatalf("eventlogtest: start %d servers: %v", n, lastErr)
	return nil
}

func startCluster(t testing.TB, n int) ([]*server.Server, error) {
	var clusterPorts []int
	if n > 1 {
		var err error
		if clusterPorts, err = freePorts(n); err != nil {
			return nil, err
		}
	}
	routes := make([]string, len(clusterPorts))
	for i, p := range clusterPorts {
		routes[i] = fmt.Sprintf("nats-route://127.0.0.1:%d", p)
	}
	servers := make([]*server.Server, 0, n)
	for i := range n {
		name := fmt.Sprintf("n%d", i+1)
		opts := &server.Options{
			ServerName:         name,
			Host:               "127.0.0.1",
			Port:               -1,
			JetStream:          true,
			StoreDir:           filepath.Join(t.TempDir(), name),
			JetStreamMaxMemory: 256 << 20,
			JetStreamMaxStore:  1 << 30,
			NoLog:              true,
			NoSigs:             true,
		}
		if n > 1 {
			opts.Cluster = server.ClusterOpts{
				Name: "jetgraph-test",
				Host: "127.0.0.1",
				Port: clusterPorts[i],
			}
			opts.Routes = server.RoutesFromStr(strings.Join(routes, ","))
		}
		s, err := server.NewServer(opts)
		if err != nil {
			shutdown(servers)
			return nil, fmt.Errorf("server %s: %w", name, err)
		}
		servers = append(servers, s)
		cp := *opts
		started.Store(s, &cp)
		go s.Start()
	}
	for _, s := range servers {
		if !s.ReadyForConnections(readyTimeout) {
			shutdown(servers)
			return nil, fmt.Errorf("server %s not ready for connections within %s", s.Name(), readyTimeout)
		}
		// A restart listens where the server did, so that clients find it again.
		if o, ok := started.Load(s); ok {
			o.(*server.Options).Port = s.Addr().(*net.TCPAddr).Port
		}
	}
	return servers, nil
}

// started maps each server Cluster started to its options, for Restart.
var started sync.Map

// Restart starts a server of ClusterServers again after it was shut down, with its name, store
// and ports, and returns it once it accepts connections. It is shut down when the test ends.
func Restart(t testing.TB, s *server.Server) *server.Server {
	t.Helper()
	o, ok := started.Load(s)
	if !ok {
		t.Fatalf("eventlogtest: restart of %s, which ClusterServers did not start", s.Name())
	}
	opts := *o.(*server.Options)
	var err error
	var n *server.Server
	// The port may linger in TIME_WAIT or be taken a moment: try for a while.
	deadline := time.Now().Add(readyTimeout)
	for {
		if n, err = server.NewServer(&opts); err == nil {
			go n.Start()
			if n.ReadyForConnections(readyTimeout) {
				break
			}
			n.Shutdown()
			err = fmt.Errorf("not ready for connections within %s", readyTimeout)
		}
		if time.Now().After(deadline) {
			t.Fatalf("eventlogtest: restart %s: %v", s.Name(), err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	started.Store(n, o)
	t.Cleanup(func() { shutdown([]*server.Server{n}) })
	return n
}

// waitJetStream waits until JetStream answers an account request through every server, which in
// a cluster means the meta group has elected a leader that every server knows.
func waitJetStream(servers []*server.Server) error {
	deadline := time.Now().Add(readyTimeout)
	for _, s := range servers {
		nc, err := nats.Connect(s.ClientURL(), nats.Name("eventlogtest-ready"))
		if err != nil {
			return fmt.Errorf("connect to %s: %w", s.Name(), err)
		}
		js, err := jetstream.New(nc)
		if err != nil {
			nc.Close()
			return err
		}
		for {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			_, err = js.AccountInfo(ctx)
			cancel()
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				nc.Close()
				return fmt.Errorf("jetstream not available on %s within %s: %w", s.Name(), readyTimeout, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
		nc.Close()
	}
	return nil
}

func shutdown(servers []*server.Server) {
	for _, s := range servers {
		s.Shutdown()
	}
	for _, s := range servers {
		s.WaitForShutdown()
	}
}

// freePorts returns n distinct TCP ports that were free on 127.0.0.1 a moment ago.
func freePorts(n int) ([]int, error) {
	ports := make([]int, n)
	listeners := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range listeners {
			_ = l.Close()
		}
	}()
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("free port: %w", err)
		}
		listeners = append(listeners, l)
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	return ports, nil
}

// FreeAddr returns a 127.0.0.1:port address that was free a moment ago, for a server to listen on.
func FreeAddr(t testing.TB) string {
	t.Helper()
	ports, err := freePorts(1)
	if err != nil {
		t.Fatalf("eventlogtest: %v", err)
	}
	return fmt.Sprintf("127.0.0.1:%d", ports[0])
}

// OpenURLs connects a log to external servers (comma-separated URLs) with the given replicas and
// closes it when the test ends.
func OpenURLs(t testing.TB, urls string, replicas int) *eventlog.Log {
	t.Helper()
	return OpenConfig(t, eventlog.Config{URLs: urls, Replicas: replicas})
}

// OpenConfig opens a log as cfg says, quietly unless cfg has a logger, and closes it when the
// test ends.
func OpenConfig(t testing.TB, cfg eventlog.Config) *eventlog.Log {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
	defer cancel()
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	l, err := eventlog.Open(ctx, cfg)
	if err != nil {
		t.Fatalf("open event log on %s: %v", cfg.URLs, err)
	}
	t.Cleanup(l.Close)
	return l
}
