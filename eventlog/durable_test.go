package eventlog

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
)

// TestSyncAlwaysGroupsAppends: with --sync always on a private embedded server, every append
// returns only after an fsync round of the store (none without), and concurrent appends share
// rounds; a server others may write to syncs every write itself.
func TestSyncAlwaysGroupsAppends(t *testing.T) {
	for _, tc := range []struct {
		name        string
		sync        bool
		listen      string
		wantGrouped bool
	}{
		{"sync always, private", true, "", true},
		{"sync always, listening", true, "127.0.0.1:-1", false},
		{"interval", false, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			l, err := Open(ctx, Config{Dir: t.TempDir(), SyncAlways: tc.sync, Listen: tc.listen,
				Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
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
			var wg sync.WaitGroup
			errs := make(chan error, n)
			for i := range n {
				wg.Go(func() {
					e, err := New(Aggregate{Kind: "thread", Tenant: DefaultTenant, ID: fmt.Sprintf("t%d", i)}, "created", map[string]int{"i": i})
					if err == nil {
						_, err = l.Append(ctx, e, Any)
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
