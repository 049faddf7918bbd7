package eventlog_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"

	"github.com/jetgraph/jetgraph/eventlog"
)

// TestAccounts checks the data namespaces of a listening embedded server on real JetStream:
// each account's holder sees its own streams only (two may use the same stream and subject
// names), an unknown key is refused, the streams survive a restart of the server, and removing
// an account deletes its streams and refuses its key.
func TestAccounts(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cfg := eventlog.Config{Dir: dir, Listen: "127.0.0.1:-1", Accounts: true}
	l, err := eventlog.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]nkeys.KeyPair{}
	for _, name := range []string{"a", "b"} {
		kp, _ := nkeys.CreateUser()
		pub, _ := kp.PublicKey()
		keys[name] = kp
		if err := l.AddAccount(name, pub); err != nil {
			t.Fatal(err)
		}
		if err := l.AddAccount(name, pub); err != nil { // idempotent
			t.Fatal(err)
		}
	}
	connect := func(l *eventlog.Log, kp nkeys.KeyPair) (jetstream.JetStream, error) {
		pub, _ := kp.PublicKey()
		nc, err := nats.Connect(l.ClientURL(), nats.Nkey(pub, kp.Sign))
		if err != nil {
			return nil, err
		}
		t.Cleanup(nc.Close)
		return jetstream.New(nc)
	}
	for name, kp := range keys {
		js, err := connect(l, kp)
		if err != nil {
			t.Fatal(name, err)
		}
		if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: eventlog.RuntimeStream, Subjects: []string{"thread.>"}}); err != nil {
			t.Fatal(name, err)
		}
		if _, err := js.Publish(ctx, "thread.x", []byte(name)); err != nil {
			t.Fatal(name, err)
		}
	}
	read := func(l *eventlog.Log, name string) string {
		t.Helper()
		js, err := connect(l, keys[name])
		if err != nil {
			t.Fatal(name, err)
		}
		msg, err := js.Stream(ctx, eventlog.RuntimeStream)
		if err != nil {
			t.Fatal(name, err)
		}
		m, err := msg.GetLastMsgForSubject(ctx, "thread.x")
		if err != nil {
			t.Fatal(name, err)
		}
		return string(m.Data)
	}
	for _, name := range []string{"a", "b"} {
		if got := read(l, name); got != name {
			t.Errorf("account %s reads %q", name, got)
		}
	}
	stranger, _ := nkeys.CreateUser()
	if _, err := connect(l, stranger); err == nil {
		t.Error("an unknown key was admitted")
	}

	// Restart: the accounts come back when added again, with their streams.
	l.Close()
	if l, err = eventlog.Open(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for name, kp := range keys {
		pub, _ := kp.PublicKey()
		if err := l.AddAccount(name, pub); err != nil {
			t.Fatal(err)
		}
	}
	if got := read(l, "a"); got != "a" {
		t.Errorf("after a restart account a reads %q", got)
	}

	pubA, _ := keys["a"].PublicKey()
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := l.RemoveAccount(rctx, "a", pubA); err != nil {
		t.Fatal(err)
	}
	if _, err := connect(l, keys["a"]); err == nil {
		t.Error("a removed account's key was admitted")
	}
	if err := l.AddAccount("a", pubA); err != nil {
		t.Fatal(err)
	}
	js, err := connect(l, keys["a"])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.Stream(ctx, eventlog.RuntimeStream); !errors.Is(err, jetstream.ErrStreamNotFound) {
		t.Errorf("a removed account's stream: %v, want not found", err)
	}
	if got := read(l, "b"); got != "b" {
		t.Errorf("account b after a's removal reads %q", got)
	}
}
