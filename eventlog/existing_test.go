package eventlog_test

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"

	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
)

// TestOpenExisting checks Config.Existing: a second process connecting to a running server's
// log uses its streams without changing their settings (here the trace retention), and finds
// none to make on a server that has none.
func TestOpenExisting(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	server, err := eventlog.Open(ctx, eventlog.Config{Dir: dir, Listen: "127.0.0.1:-1", TraceRetention: 48 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	client, err := eventlog.Open(ctx, eventlog.Config{URLs: server.ClientURL(), Creds: eventlog.CredsFile(dir), Existing: true})
	if err != nil {
		t.Fatal(err)
	}
	client.Close()

	raw, err := os.ReadFile(eventlog.CredsFile(dir))
	if err != nil {
		t.Fatal(err)
	}
	seed, err := nkeys.FromSeed(bytes.TrimSpace(raw))
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := seed.PublicKey()
	nc, err := nats.Connect(server.ClientURL(), nats.Nkey(pub, seed.Sign))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	s, err := js.Stream(ctx, eventlog.TraceStream)
	if err != nil {
		t.Fatal(err)
	}
	if info, err := s.Info(ctx); err != nil || info.Config.MaxAge != 48*time.Hour {
		t.Errorf("the trace stream's MaxAge after an Existing open: %v %v, want 48h", info.Config.MaxAge, err)
	}

	// A NATS server without jetgraph's streams: nothing is made, the open fails.
	if l, err := eventlog.Open(ctx, eventlog.Config{URLs: eventlogtest.Server(t), Existing: true}); err == nil {
		l.Close()
		t.Error("an Existing open of a server without the streams succeeded")
	}
}
