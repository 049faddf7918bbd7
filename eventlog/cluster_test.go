package eventlog_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
)

// waitFor bounds every poll in these tests: generous, since a loaded machine may need seconds
// to elect a leader, and never asserted on.
const waitFor = 30 * time.Second

// eventually calls f until it returns nil or waitFor has passed, and fails the test with f's last
// error then.
func eventually(t testing.TB, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still failing after %s: %v", what, waitFor, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// moveLeader makes the server named to the leader of stream. A leadership transfer goes only to a replica
// its leader heard from lately (else the leader steps down to any peer), and a request sent
// while an election is under way is lost or undone, so each attempt waits for a leader whose
// replicas are all current and recently active, asks it to step down for to, and then waits
// for the election that request started to end (a leadership other than the one asked) before
// it looks again.
func moveLeader(t *testing.T, ctx context.Context, nc *nats.Conn, stream jetstream.Stream, to string) {
	t.Helper()
	const live = 2 * time.Second // under the 3 heartbeats (3s) in which a leader picks a preferred peer
	name := stream.CachedInfo().Config.Name
	leadership := func(c *jetstream.ClusterInfo) string {
		if c.LeaderSince == nil {
			return c.Leader
		}
		return c.Leader + " since " + c.LeaderSince.Format(time.RFC3339Nano)
	}
	asked := "" // the leadership a granted step-down was asked of, until another one is elected
	stepDowns := 0
	eventually(t, "move the stream leader to "+to, func() error {
		ictx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		info, err := stream.Info(ictx)
		if err != nil {
			return err
		}
		c := info.Cluster
		switch {
		case c.Leader == to:
			t.Logf("stream leader moved to %s after %d step-down(s)", to, stepDowns)
			return nil
		case c.Leader == "" || leadership(c) == asked:
			return fmt.Errorf("electing a leader after %s stepped down", asked)
		}
		asked = ""
		if len(c.Replicas) != 2 {
			return fmt.Errorf("leader %s reports %d replicas", c.Leader, len(c.Replicas))
		}
		for _, r := range c.Replicas {
			if !r.Current || r.Offline || r.Active > live {
				return fmt.Errorf("replica %s not current (offline %v, active %s ago, lag %d)", r.Name, r.Offline, r.Active, r.Lag)
			}
		}
		req := fmt.Sprintf(`{"placement":{"preferred":%q}}`, to)
		msg, err := nc.RequestWithContext(ictx, "$JS.API.STREAM.LEADER.STEPDOWN."+name, []byte(req))
		if err != nil {
			return fmt.Errorf("step-down request to %s: %w", c.Leader, err)
		}
		var resp struct {
			Success bool `json:"success"`
		}
		if err := json.Unmarshal(msg.Data, &resp); err != nil || !resp.Success {
			return fmt.Errorf("step-down refused by %s: %s (%v)", c.Leader, msg.Data, err)
		}
		asked, stepDowns = leadership(c), stepDowns+1
		return fmt.Errorf("%s stepped down for %s", asked, to)
	})
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// typesOf lists events as seq:type, in the order given.
func typesOf(events []eventlog.Event) string {
	s := make([]string, len(events))
	for i, e := range events {
		s[i] = fmt.Sprintf("%d:%s", e.Seq, e.Type)
	}
	return strings.Join(s, " ")
}

// checkOrdered fails unless events are in log order with every id distinct.
func checkOrdered(t testing.TB, events []eventlog.Event) {
	t.Helper()
	seen := map[string]bool{}
	for i, e := range events {
		if i > 0 && e.Seq < events[i-1].Seq {
			t.Fatalf("events out of order: %s", typesOf(events))
		}
		if seen[e.ID] {
			t.Fatalf("event %s loaded twice: %s", e.ID, typesOf(events))
		}
		seen[e.ID] = true
	}
}

func mustLoad(t testing.TB, l *eventlog.Log, agg eventlog.Aggregate) []eventlog.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	events, err := l.Load(ctx, agg)
	if err != nil {
		t.Fatalf("load %s: %v", agg, err)
	}
	checkOrdered(t, events)
	return events
}

func TestOpenRefusesReplicas2(t *testing.T) {
	for _, cfg := range []eventlog.Config{
		{Dir: t.TempDir(), Replicas: 2},
		{URLs: "nats://127.0.0.1:1", Replicas: 2},
	} {
		l, err := eventlog.Open(context.Background(), cfg)
		if err == nil {
			l.Close()
			t.Fatalf("Open(%+v) accepted 2 replicas", cfg)
		}
		if !strings.Contains(err.Error(), "replicas must be 1 or 3, not 2") {
			t.Fatalf("Open with 2 replicas: unclear error %q", err)
		}
	}
}

func TestExternalServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	url := eventlogtest.Server(t)
	l, err := eventlog.Open(ctx, eventlog.Config{URLs: url, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	if l.Embedded() || l.ClientURL() != "" {
		t.Fatalf("log on %s claims to be embedded", url)
	}
	if err := l.Healthy(ctx); err != nil {
		t.Fatal(err)
	}

	a := thread("a")
	s1, err := l.Append(ctx, mustEvent(t, a, "created", nil), eventlog.At(0))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(ctx, mustEvent(t, a, "created", nil), eventlog.At(0)); !errors.Is(err, eventlog.ErrConflict) {
		t.Fatalf("second create: err = %v, want conflict", err)
	}
	s2, err := l.Append(ctx, mustEvent(t, a, "patched", nil), eventlog.At(s1))
	if err != nil {
		t.Fatal(err)
	}
	if got := typesOf(mustLoad(t, l, a)); got != fmt.Sprintf("%d:created %d:patched", s1, s2) {
		t.Fatalf("load = %s", got)
	}

	// A second process on the same server sees the events and writes under the same conditions.
	l2, err := eventlog.Open(ctx, eventlog.Config{URLs: url, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l2.Close)
	sub, err := l2.Subscribe(ctx, eventlog.RuntimeStream, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Stop()
	for _, want := range []uint64{s1, s2} {
		e, err := sub.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if e.Seq != want || e.Aggregate != a {
			t.Fatalf("second log read %+v, want seq %d of %s", e, want, a)
		}
	}
	if _, err := l2.Append(ctx, mustEvent(t, a, "patched", nil), eventlog.At(s1)); !errors.Is(err, eventlog.ErrConflict) {
		t.Fatalf("stale append from the second log: err = %v, want conflict", err)
	}
	s3, err := l2.Append(ctx, mustEvent(t, a, "archived", nil), eventlog.At(s2))
	if err != nil {
		t.Fatal(err)
	}
	if e, err := sub.Next(ctx); err != nil || e.Seq != s3 {
		t.Fatalf("live event = %+v, %v; want seq %d", e, err, s3)
	}
	if got := typesOf(mustLoad(t, l, a)); got != fmt.Sprintf("%d:created %d:patched %d:archived", s1, s2, s3) {
		t.Fatalf("first log loads %s", got)
	}
}

func TestEmbeddedListen(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	dir := t.TempDir()
	l, err := eventlog.Open(ctx, eventlog.Config{Dir: dir, Listen: eventlogtest.FreeAddr(t), Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	url := l.ClientURL()
	if !l.Embedded() || url == "" {
		t.Fatalf("listening embedded log: Embedded() = %v, ClientURL() = %q", l.Embedded(), url)
	}
	a := thread("a")
	s1, err := l.Append(ctx, mustEvent(t, a, "created", nil), eventlog.At(0))
	if err != nil {
		t.Fatal(err)
	}

	// The listener admits only the holder of the key it wrote in the data folder, a file only
	// its owner may read.
	creds := eventlog.CredsFile(dir)
	if fi, err := os.Stat(creds); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("credentials file %s: %v, %v; want mode 0600", creds, fi, err)
	}
	if nc, err := nats.Connect(url); err == nil {
		nc.Close()
		t.Fatalf("a connection without credentials was admitted by %s", url)
	} else if !strings.Contains(strings.ToLower(err.Error()), "authorization") {
		t.Fatalf("connection without credentials: %v, want an authorization error", err)
	}
	other := eventlogtest.OpenConfig(t, eventlog.Config{URLs: url, Creds: creds, Replicas: 1})
	if other.Embedded() {
		t.Fatal("log on a URL claims to be embedded")
	}
	if _, err := other.Append(ctx, mustEvent(t, a, "created", nil), eventlog.At(0)); !errors.Is(err, eventlog.ErrConflict) {
		t.Fatalf("create through the listener: err = %v, want conflict", err)
	}
	s2, err := other.Append(ctx, mustEvent(t, a, "patched", map[string]string{"by": "other"}), eventlog.At(s1))
	if err != nil {
		t.Fatal(err)
	}
	events := mustLoad(t, l, a)
	if got := typesOf(events); got != fmt.Sprintf("%d:created %d:patched", s1, s2) {
		t.Fatalf("embedded log loads %s", got)
	}
	if string(events[1].Data) != `{"by":"other"}` {
		t.Fatalf("data = %s", events[1].Data)
	}
}

// TestClusterReplicas3 runs the log on three clustered servers with every stream replicated
// three times, then loses one server (the one the client is connected to, made stream leader
// first) and keeps writing.
func TestClusterReplicas3(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*waitFor)
	defer cancel()
	servers := eventlogtest.ClusterServers(t, 3)
	urls := make([]string, len(servers))
	for i, s := range servers {
		urls[i] = s.ClientURL()
	}
	l := eventlogtest.OpenURLs(t, strings.Join(urls, ","), 3)

	stream, err := eventlogtest.JetStream(l).Stream(ctx, eventlog.RuntimeStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := stream.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Config.Replicas != 3 {
		t.Fatalf("%s has %d replicas, want 3", eventlog.RuntimeStream, info.Config.Replicas)
	}
	if info.Cluster == nil || info.Cluster.Name != "jetgraph-test" {
		t.Fatalf("%s is not on the cluster: %+v", eventlog.RuntimeStream, info.Cluster)
	}

	a, b, c := thread("a"), thread("b"), thread("c")
	last := map[eventlog.Aggregate]uint64{}
	appendAt := func(t *testing.T, agg eventlog.Aggregate, typ string) uint64 {
		t.Helper()
		seq, err := l.Append(ctx, mustEvent(t, agg, typ, nil), eventlog.At(last[agg]))
		if err != nil {
			t.Fatalf("append %s to %s at %d: %v", typ, agg, last[agg], err)
		}
		last[agg] = seq
		return seq
	}

	t.Run("append and conflict", func(t *testing.T) {
		appendAt(t, a, "created")
		if _, err := l.Append(ctx, mustEvent(t, a, "created", nil), eventlog.At(0)); !errors.Is(err, eventlog.ErrConflict) {
			t.Fatalf("second create: err = %v, want conflict", err)
		}
		if _, err := l.Append(ctx, mustEvent(t, a, "patched", nil), eventlog.At(last[a]+1)); !errors.Is(err, eventlog.ErrConflict) {
			t.Fatalf("append at a future seq: err = %v, want conflict", err)
		}
		appendAt(t, a, "patched")
		// A retried append (same event id) is stored once, even with its now stale condition.
		e := mustEvent(t, a, "retried", nil)
		s1, err := l.Append(ctx, e, eventlog.At(last[a]))
		if err != nil {
			t.Fatal(err)
		}
		s2, err := l.Append(ctx, e, eventlog.At(last[a]))
		if err != nil || s2 != s1 {
			t.Fatalf("retry of an append stored at %d: seq %d, err %v", s1, s2, err)
		}
		last[a] = s1
	})

	// On a replicated stream the leader refuses a conditional append while another one on the
	// same aggregate is still being replicated, with code 10164 instead of 10071: both are
	// conflicts, and exactly one of the racing writers wins.
	t.Run("racing writers", func(t *testing.T) {
		for round := range 10 {
			agg := thread(fmt.Sprintf("race%d", round))
			errs := make(chan error, 8)
			var wg sync.WaitGroup
			for range cap(errs) {
				e := mustEvent(t, agg, "created", nil)
				wg.Go(func() {
					_, err := l.Append(ctx, e, eventlog.At(0))
					errs <- err
				})
			}
			wg.Wait()
			close(errs)
			won := 0
			for err := range errs {
				switch {
				case err == nil:
					won++
				case !errors.Is(err, eventlog.ErrConflict):
					t.Fatalf("racing create: %v", err)
				}
			}
			if won != 1 {
				t.Fatalf("%d of %d racing creates of %s won, want 1", won, cap(errs), agg)
			}
			if events := mustLoad(t, l, agg); len(events) != 1 {
				t.Fatalf("%s has %d events after racing creates, want 1", agg, len(events))
			}
		}
	})

	t.Run("packed batch", func(t *testing.T) {
		run := func(expect eventlog.Expect) []eventlog.Pending {
			return []eventlog.Pending{
				{Event: mustEvent(t, a, "run_started", nil), Expect: expect},
				{Event: mustEvent(t, a, "checkpoint", nil), Expect: eventlog.Any},
				{Event: mustEvent(t, a, "run_finished", nil), Expect: eventlog.Any},
			}
		}
		seq, err := l.AppendBatch(ctx, run(eventlog.At(last[a])))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.AppendBatch(ctx, run(eventlog.At(last[a]))); !errors.Is(err, eventlog.ErrConflict) {
			t.Fatalf("stale packed batch: err = %v, want conflict", err)
		}
		last[a] = seq
	})

	t.Run("atomic batch across aggregates", func(t *testing.T) {
		seq, err := l.AppendBatch(ctx, []eventlog.Pending{
			{Event: mustEvent(t, a, "moved", nil), Expect: eventlog.At(last[a])},
			{Event: mustEvent(t, b, "created", nil), Expect: eventlog.At(0)},
			{Event: mustEvent(t, c, "created", nil), Expect: eventlog.At(0)},
			{Event: mustEvent(t, b, "patched", nil), Expect: eventlog.Any},
		})
		if err != nil {
			t.Fatal(err)
		}
		last[a], last[b], last[c] = seq-3, seq, seq-1
		before, err := l.LastSeq(ctx, eventlog.RuntimeStream)
		if err != nil {
			t.Fatal(err)
		}
		if before != seq {
			t.Fatalf("stream last seq %d, batch acknowledged %d", before, seq)
		}

		// c's condition is stale, so neither a's nor b's event may be stored.
		_, err = l.AppendBatch(ctx, []eventlog.Pending{
			{Event: mustEvent(t, a, "moved", nil), Expect: eventlog.At(last[a])},
			{Event: mustEvent(t, b, "patched", nil), Expect: eventlog.At(last[b])},
			{Event: mustEvent(t, c, "created", nil), Expect: eventlog.At(0)},
		})
		if !errors.Is(err, eventlog.ErrConflict) {
			t.Fatalf("conflicting batch: err = %v, want conflict", err)
		}
		if after, err := l.LastSeq(ctx, eventlog.RuntimeStream); err != nil || after != before {
			t.Fatalf("stream last seq %d (err %v) after a refused batch, want %d", after, err, before)
		}
		// The log still takes batches after a refused one.
		if _, err := l.AppendBatch(ctx, []eventlog.Pending{
			{Event: mustEvent(t, b, "patched", nil), Expect: eventlog.At(last[b])},
			{Event: mustEvent(t, c, "patched", nil), Expect: eventlog.At(last[c])},
		}); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("load in order", func(t *testing.T) {
		want := "created patched retried run_started checkpoint run_finished moved"
		var got []string
		for _, e := range mustLoad(t, l, a) {
			got = append(got, e.Type)
		}
		if strings.Join(got, " ") != want {
			t.Fatalf("a loads %v, want %s", got, want)
		}
		for agg, want := range map[eventlog.Aggregate]string{b: "created patched patched", c: "created patched"} {
			var got []string
			for _, e := range mustLoad(t, l, agg) {
				got = append(got, e.Type)
			}
			if strings.Join(got, " ") != want {
				t.Fatalf("%s loads %v, want %s", agg, got, want)
			}
		}
	})
	if t.Failed() {
		return
	}

	// A subscription opened before the loss keeps delivering after it.
	sub, err := l.Subscribe(ctx, eventlog.RuntimeStream, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Stop()
	before, err := l.LastSeq(ctx, eventlog.RuntimeStream)
	if err != nil {
		t.Fatal(err)
	}
	var delivered []eventlog.Event
	readUpTo := func(seq uint64) {
		t.Helper()
		rctx, cancel := context.WithTimeout(ctx, waitFor)
		defer cancel()
		for {
			e, err := sub.Next(rctx)
			if err != nil {
				t.Fatalf("subscription: %d events read, waiting for seq %d: %v", len(delivered), seq, err)
			}
			delivered = append(delivered, e)
			if e.Seq >= seq && sub.Buffered() == 0 {
				return
			}
		}
	}
	readUpTo(before)

	// Lose one server. To exercise both the client's reconnect and the stream's leader failover,
	// the server the client is connected to is made the stream's leader first, then shut down.
	nc := eventlogtest.JetStream(l).Conn()
	victimName := nc.ConnectedServerName()
	var victim *server.Server
	for _, s := range servers {
		if s.Name() == victimName {
			victim = s
		}
	}
	if victim == nil {
		t.Fatalf("client connected to unknown server %q", victimName)
	}
	moveLeader(t, ctx, nc, stream, victimName)
	victim.Shutdown()
	victim.WaitForShutdown()

	// The first append after the loss may be lost while the client reconnects and the two
	// remaining servers take over (it then fails with its context's deadline, nothing stored);
	// retrying the same event is safe either way, since it is deduplicated by id.
	e := mustEvent(t, a, "after_failover", nil)
	attempts := 0
	eventually(t, "append after losing "+victimName, func() error {
		attempts++
		actx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		seq, err := l.Append(actx, e, eventlog.At(last[a]))
		if err != nil {
			t.Logf("append attempt %d after losing %s: %v", attempts, victimName, err)
			return err
		}
		last[a] = seq
		return nil
	})
	t.Logf("append after losing %s succeeded after %d attempt(s); client now on %s", victimName, attempts, nc.ConnectedServerName())
	if got := nc.ConnectedServerName(); got == victimName || got == "" {
		t.Fatalf("client connected to %q after %s was shut down", got, victimName)
	}
	eventually(t, "stream info after failover", func() error {
		info, err := stream.Info(ctx)
		if err != nil {
			return err
		}
		if info.Cluster.Leader == "" || info.Cluster.Leader == victimName {
			return fmt.Errorf("leader is %q", info.Cluster.Leader)
		}
		return nil
	})

	// Conditions, batches and reads all keep working on the two remaining replicas.
	if _, err := l.Append(ctx, mustEvent(t, a, "stale", nil), eventlog.At(last[a]-1)); !errors.Is(err, eventlog.ErrConflict) {
		t.Fatalf("stale append after failover: err = %v, want conflict", err)
	}
	appendAt(t, a, "patched")
	if _, err := l.AppendBatch(ctx, []eventlog.Pending{
		{Event: mustEvent(t, a, "run_started", nil), Expect: eventlog.At(last[a])},
		{Event: mustEvent(t, a, "run_finished", nil), Expect: eventlog.Any},
	}); err != nil {
		t.Fatalf("packed batch after failover: %v", err)
	}
	if _, err := l.AppendBatch(ctx, []eventlog.Pending{
		{Event: mustEvent(t, b, "deleted", nil), Expect: eventlog.Any},
		{Event: mustEvent(t, c, "deleted", nil), Expect: eventlog.Any},
	}); err != nil {
		t.Fatalf("atomic batch after failover: %v", err)
	}
	var got []string
	for _, e := range mustLoad(t, l, a) {
		got = append(got, e.Type)
	}
	want := "created patched retried run_started checkpoint run_finished moved after_failover patched run_started run_finished"
	if strings.Join(got, " ") != want {
		t.Fatalf("a loads %v after failover, want %s", got, want)
	}

	end, err := l.LastSeq(ctx, eventlog.RuntimeStream)
	if err != nil {
		t.Fatal(err)
	}
	readUpTo(end)
	checkOrdered(t, delivered)
	// Every event of every aggregate, each once: the subscription lost and repeated nothing.
	stored := map[string]bool{}
	loaded := map[eventlog.Aggregate]bool{}
	for _, e := range delivered {
		if !loaded[e.Aggregate] {
			loaded[e.Aggregate] = true
			for _, e := range mustLoad(t, l, e.Aggregate) {
				stored[e.ID] = true
			}
		}
	}
	if len(delivered) != len(stored) {
		t.Fatalf("subscription delivered %d events across the failover, the log holds %d", len(delivered), len(stored))
	}
	for _, e := range delivered {
		if !stored[e.ID] {
			t.Fatalf("subscription delivered %s (seq %d), which Load does not return", e.ID, e.Seq)
		}
	}
}

// TestOpenWaitsForAFormingCluster opens a log with three replicas while only one server of the
// cluster runs: Open waits, retrying, until the others join, instead of failing.
func TestOpenWaitsForAFormingCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	servers := eventlogtest.ClusterServers(t, 3)
	urls := make([]string, len(servers))
	for i, s := range servers {
		urls[i] = s.ClientURL()
	}
	for _, s := range servers[1:] {
		s.Shutdown()
		s.WaitForShutdown()
	}
	var logs eventlogtest.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 3*waitFor)
	defer cancel()
	type opened struct {
		l   *eventlog.Log
		err error
	}
	done := make(chan opened, 1)
	go func() {
		l, err := eventlog.Open(ctx, eventlog.Config{URLs: strings.Join(urls, ","), Replicas: 3,
			Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		done <- opened{l, err}
	}()
	eventually(t, "Open retrying", func() error {
		select {
		case o := <-done:
			t.Fatalf("Open returned before the cluster formed: %v", o.err)
		default:
		}
		if !strings.Contains(logs.String(), "the cluster is not ready, retrying") {
			return errors.New("no retry logged yet")
		}
		return nil
	})
	for _, s := range servers[1:] {
		eventlogtest.Restart(t, s)
	}
	o := <-done
	if o.err != nil {
		t.Fatalf("Open after the cluster formed: %v", o.err)
	}
	t.Cleanup(o.l.Close)
	if _, err := o.l.Append(ctx, mustEvent(t, thread("a"), "created", nil), eventlog.At(0)); err != nil {
		t.Fatal(err)
	}
}

// TestEmbeddedListenReusesItsKey: a restart on the same data folder reuses the user key it
// generated, so a process given that file with --nats-creds connects again; a key file others
// may read is refused at start.
func TestEmbeddedListenReusesItsKey(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	dir := t.TempDir()
	first, err := eventlog.Open(ctx, eventlog.Config{Dir: dir, Listen: eventlogtest.FreeAddr(t), Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	creds := eventlog.CredsFile(dir)
	key, err := os.ReadFile(creds)
	if err != nil {
		t.Fatal(err)
	}
	first.Close()

	l, err := eventlog.Open(ctx, eventlog.Config{Dir: dir, Listen: eventlogtest.FreeAddr(t), Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	again, err := os.ReadFile(creds)
	if err != nil || string(again) != string(key) {
		t.Fatalf("key file after the restart: %q, %v; want the first key", again, err)
	}
	other := eventlogtest.OpenConfig(t, eventlog.Config{URLs: l.ClientURL(), Creds: creds, Replicas: 1})
	if _, err := other.Append(ctx, mustEvent(t, thread("a"), "created", nil), eventlog.At(0)); err != nil {
		t.Fatalf("append with the kept key after the restart: %v", err)
	}
	other.Close()
	l.Close()

	if err := os.Chmod(creds, 0o644); err != nil {
		t.Fatal(err)
	}
	if l, err := eventlog.Open(ctx, eventlog.Config{Dir: dir, Listen: eventlogtest.FreeAddr(t), Logger: quiet()}); err == nil {
		l.Close()
		t.Fatal("a key file others may read was used")
	} else if !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("loose key file: %v, want the fix named", err)
	}
	if got, _ := os.ReadFile(creds); string(got) != string(key) {
		t.Fatal("the refused key file was changed")
	}
}
