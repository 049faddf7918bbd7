package eventlog_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
)

// TestOperatorAccounts checks deployments' namespaces on a NATS server in operator mode, set up
// by InitOperator as `jetgraph nats init` does: jetgraph's own log opens in its account; an
// account added at run time admits the users minted for it and shows them its streams only (two
// accounts may use the same names, and neither sees jetgraph's log); a second Operator (another
// process) derives the same account; removing it cuts its users off and deletes its streams.
func TestOperatorAccounts(t *testing.T) {
	ctx := context.Background()
	srv := eventlogtest.StartOperator(t)
	own := eventlogtest.OpenConfig(t, eventlog.Config{URLs: srv.URL(), Creds: srv.File(eventlog.JetgraphCredsFile)})
	if _, err := own.Append(ctx, mustEvent(t, eventlog.Aggregate{Kind: "thread", Tenant: eventlog.DefaultTenant, ID: "own"}, "created", struct{}{}), eventlog.Any); err != nil {
		t.Fatal(err)
	}

	open := func() *eventlog.Operator {
		o, err := eventlog.OpenOperator(srv.URL(), srv.File(eventlog.OperatorSigningKeyFile), srv.File(eventlog.SystemCredsFile))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(o.Close)
		return o
	}
	o1, o2 := open(), open()
	credsFile := func(o *eventlog.Operator, account string) string {
		creds, err := o.UserCreds(account, "test")
		if err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(t.TempDir(), "user.creds")
		if err := os.WriteFile(f, creds, 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
	for _, a := range []string{"deployment-a", "deployment-b"} {
		if err := o1.AddAccount(ctx, a); err != nil {
			t.Fatal(err)
		}
		if err := o1.AddAccount(ctx, a); err != nil { // idempotent
			t.Fatal(err)
		}
	}
	// Each namespace is a whole jetgraph log: the same streams, the same subjects.
	logs := map[string]*eventlog.Log{}
	for _, a := range []string{"deployment-a", "deployment-b"} {
		logs[a] = eventlogtest.OpenConfig(t, eventlog.Config{URLs: srv.URL(), Creds: credsFile(o2, a)})
		if _, err := logs[a].Append(ctx, mustEvent(t, eventlog.Aggregate{Kind: "thread", Tenant: eventlog.DefaultTenant, ID: a}, "created", struct{}{}), eventlog.Any); err != nil {
			t.Fatal(a, err)
		}
	}
	for a, l := range logs {
		last, err := l.LastSeq(ctx, eventlog.RuntimeStream)
		if err != nil || last != 1 {
			t.Fatalf("%s: the runtime stream's last sequence is %d (%v), want 1: namespaces mix", a, last, err)
		}
	}
	if last, err := own.LastSeq(ctx, eventlog.RuntimeStream); err != nil || last != 1 {
		t.Fatalf("jetgraph's own log: last sequence %d (%v), want 1", last, err)
	}

	// Removing a cuts its users off (from any process: o2 removes what o1 added) and deletes its
	// streams; b is untouched.
	a := credsFile(o1, "deployment-a")
	if err := o2.RemoveAccount(ctx, "deployment-a"); err != nil {
		t.Fatal(err)
	}
	if nc, err := nats.Connect(srv.URL(), nats.UserCredentials(a), nats.MaxReconnects(0)); err == nil {
		js, _ := jetstream.New(nc)
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := js.AccountInfo(cctx)
		cancel()
		nc.Close()
		if err == nil {
			t.Fatal("a user of a removed account still reaches JetStream")
		}
	}
	if err := o1.AddAccount(ctx, "deployment-a"); !errors.Is(err, eventlog.ErrAccountRemoved) {
		t.Fatalf("a removed account added again: %v, want ErrAccountRemoved", err)
	}
	for name, want := range map[string]int{"deployment-a": 0, "deployment-b": 1} {
		pub, err := o1.AccountKey(name)
		if err != nil {
			t.Fatal(err)
		}
		if got := srv.AccountStreams(t, pub); (got == 0) != (want == 0) {
			t.Errorf("%s has %d streams on the server after a's removal", name, got)
		}
	}
	if last, err := logs["deployment-b"].LastSeq(ctx, eventlog.RuntimeStream); err != nil || last != 1 {
		t.Fatalf("deployment-b after a's removal: last sequence %d (%v), want 1", last, err)
	}
}

// TestOperatorRefusesWhatIsNotAnOperatorKey checks that a user key or a missing file given as
// the operator's signing key is refused at once, with the reason.
func TestOperatorRefusesWhatIsNotAnOperatorKey(t *testing.T) {
	srv := eventlogtest.StartOperator(t)
	for _, f := range []string{srv.File(eventlog.JetgraphCredsFile), filepath.Join(t.TempDir(), "none.nk")} {
		if _, err := eventlog.OpenOperator(srv.URL(), f, srv.File(eventlog.SystemCredsFile)); err == nil {
			t.Errorf("%s taken as an operator key", f)
		}
	}
	if _, err := eventlog.InitOperator(srv.Dir, "127.0.0.1:-1"); err == nil {
		t.Error("InitOperator overwrote a folder that has a configuration")
	}
}
