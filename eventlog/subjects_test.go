package eventlog_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
)

// TestShareSubjects: once a kind's events share their aggregate's subject, the types kept apart
// still have their own, the server indexes two subjects where it indexed one per type, and an
// aggregate written partly before keeps its optimistic concurrency and reads back whole, in
// order.
func TestShareSubjects(t *testing.T) {
	ctx := context.Background()
	l := eventlogtest.Open(t)
	agg := eventlog.Aggregate{Kind: "system", Tenant: eventlog.DefaultTenant, ID: "x"}
	appendAt := func(typ string, expect eventlog.Expect) (uint64, error) {
		return l.Append(ctx, mustEvent(t, agg, typ, map[string]string{"type": typ}), expect)
	}
	// Written before the kind shared its subjects.
	seq, err := appendAt("made", eventlog.At(0))
	if err != nil {
		t.Fatal(err)
	}
	eventlog.ShareSubjects("system", "kept")
	t.Cleanup(func() { eventlog.UnshareSubjects("system") })
	for _, typ := range []string{"changed", "kept", "changed", "ended"} {
		if seq, err = appendAt(typ, eventlog.At(seq)); err != nil {
			t.Fatalf("append %s at the aggregate's last sequence: %v", typ, err)
		}
	}
	// The filter of the aggregate sees every form: a stale expectation is a conflict.
	if _, err := appendAt("changed", eventlog.At(seq-1)); !errors.Is(err, eventlog.ErrConflict) {
		t.Fatalf("append at a stale sequence: %v, want a conflict", err)
	}
	if _, err := l.Append(ctx, mustEvent(t, agg, eventlog.SharedToken, nil), eventlog.Any); err == nil {
		t.Fatal("an event typed as the shared token was appended")
	}

	events, err := l.Load(ctx, agg)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, e := range events {
		types = append(types, e.Type)
	}
	if want := []string{"made", "changed", "kept", "changed", "ended"}; !slices.Equal(types, want) {
		t.Fatalf("read back %v, want %v", types, want)
	}

	st, err := eventlogtest.JetStream(l).Stream(ctx, eventlog.RuntimeStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx, jetstream.WithSubjectFilter("system.>"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]uint64{"system.default.x.made": 1, "system.default.x.kept": 1, "system.default.x._": 3}
	if len(info.State.Subjects) != len(want) {
		t.Errorf("subjects %v, want %v", info.State.Subjects, want)
	}
	for subject, n := range want {
		if info.State.Subjects[subject] != n {
			t.Errorf("subject %s holds %d messages, want %d (all: %v)", subject, info.State.Subjects[subject], n, info.State.Subjects)
		}
	}
}
