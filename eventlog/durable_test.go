package eventlog

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/nats-io/nats.go"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// appendThreads appends one event to each of n new threads at once and fails on any error.
func appendThreads(t *testing.T, l *Log, prefix string, n int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			e, err := New(Aggregate{Kind: "thread", Tenant: DefaultTenant, ID: fmt.Sprintf("%s%d", prefix, i)}, "created", map[string]int{"i": i})
			if err == nil {
				_, err = l.Append(context.Background(), e, Any)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestSyncAlwaysGroupsAppends: with --sync always on a private embedded server, every append
// returns only after an fsync round of the store (none without), and concurrent appends share
// rounds; a server others may write to syncs every write itself.
func TestSyncAlwaysGroupsAppends(t *testing.T) {
	for _, tc := range []struct {
		name        string
		sync        bool
		listen      string
		accounts    bool
		jetgraph    bool
		wantGrouped bool
	}{
		{"sync always, private", true, "", false, false, true},
		{"sync always, the control plane's listener", true, "127.0.0.1:-1", true, true, true},
		{"sync always, --nats-listen", true, "127.0.0.1:-1", false, false, false},
		{"sync always, --nats-listen with the control plane", true, "127.0.0.1:-1", true, false, false},
		{"interval", false, "", false, false, false},
		{"interval, the control plane's listener", false, "127.0.0.1:-1", true, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			l, err := Open(ctx, Config{Dir: t.TempDir(), SyncAlways: tc.sync, Listen: tc.listen,
				Accounts: tc.accounts, JetgraphListener: tc.jetgraph, Logger: quiet()})
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			if (l.durable != nil) != tc.wantGrouped {
				t.Fatalf("group sync: %v, want %v", l.durable != nil, tc.wantGrouped)
			}
			if got := l.srv.JetStreamConfig().SyncAlways; got != (tc.sync && !tc.wantGrouped) {
				t.Fatalf("server's own sync of every write: %v", got)
			}
			const n = 64
			appendThreads(t, l, "t", n)
			if !tc.wantGrouped {
				return
			}
			rounds := l.durable.rounds.Load()
			if rounds == 0 || rounds > n {
				t.Fatalf("%d appends returned after %d fsync rounds", n, rounds)
			}
			t.Logf("%d concurrent appends, %d fsync rounds", n, rounds)
		})
	}
}

// TestSyncRoundsOfAnotherProcess: with --sync always and the control plane's listener, a
// deployment's process (a second log connected to the listener with its account's key) waits
// for a sync round of the listening process after each append: each of its appends one after
// another returns only after one more round (rounds run only when asked, so an append that did
// not wait would leave the count as it was), and its concurrent appends share rounds. A client
// that does not say it waits is refused; with the server syncing each write itself (interval,
// or --nats-listen) the second log learns so once and asks no more.
func TestSyncRoundsOfAnotherProcess(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name       string
		sync       bool
		jetgraph   bool
		wantRounds bool
	}{
		{"sync always, the control plane's listener", true, true, true},
		{"sync always, --nats-listen with the control plane", true, false, false},
		{"interval, the control plane's listener", false, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			parent, err := Open(ctx, Config{Dir: dir, SyncAlways: tc.sync, Listen: "127.0.0.1:-1", Accounts: true,
				JetgraphListener: tc.jetgraph, Logger: quiet()})
			if err != nil {
				t.Fatal(err)
			}
			defer parent.Close()
			creds := filepath.Join(dir, "deployments", "d1", CredsFileName)
			pub, err := UserKey(creds)
			if err != nil {
				t.Fatal(err)
			}
			if err := parent.AddAccount("deployment-d1", pub); err != nil {
				t.Fatal(err)
			}
			child, err := Open(ctx, Config{URLs: parent.ClientURL(), Creds: creds, Logger: quiet()})
			if err != nil {
				t.Fatal(err)
			}
			defer child.Close()

			var rounds func() uint64
			if parent.durable != nil {
				rounds = parent.durable.rounds.Load
			}
			if (rounds != nil) != tc.wantRounds {
				t.Fatalf("the parent syncs in rounds: %v, want %v", rounds != nil, tc.wantRounds)
			}
			for i := range 5 {
				var before uint64
				if rounds != nil {
					before = rounds()
				}
				appendThreads(t, child, fmt.Sprintf("one%d-", i), 1)
				if rounds != nil && rounds() <= before {
					t.Fatalf("append %d of the child returned without a sync round of the parent (%d rounds before and after)", i, before)
				}
			}
			child.remote.mu.Lock()
			learnt := child.remote.rounds
			child.remote.mu.Unlock()
			if learnt != tc.wantRounds {
				t.Fatalf("the child waits for rounds: %v, want %v", learnt, tc.wantRounds)
			}
			if rounds == nil {
				return
			}
			const n = 64
			before := rounds()
			appendThreads(t, child, "many", n)
			if got := rounds() - before; got == 0 || got >= n {
				t.Fatalf("%d concurrent appends of the child returned after %d rounds of the parent", n, got)
			}

			// A client that does not say it waits for the rounds is refused, with the
			// account's key as with the data folder's.
			for _, key := range []string{creds, CredsFile(dir)} {
				opt, err := credsOption(key)
				if err != nil {
					t.Fatal(err)
				}
				nc, err := nats.Connect(parent.ClientURL(), opt, nats.Name("nats-cli"))
				if err == nil {
					nc.Close()
					t.Fatalf("a client that does not wait for the rounds was admitted with %s", filepath.Base(key))
				}
				if !strings.Contains(strings.ToLower(err.Error()), "authorization") {
					t.Fatalf("refused with %v, want an authorization error", err)
				}
			}
		})
	}
}
