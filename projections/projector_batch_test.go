package projections

import (
	"testing"

	"go.etcd.io/bbolt"

	"github.com/jetgraph/jetgraph/eventlog"
)

// seqPreparer prepares each event as its sequence, so that a prepared batch shows whether what
// was prepared stays beside its event.
type seqPreparer struct{}

func (seqPreparer) Name() string                                       { return "seq" }
func (seqPreparer) Buckets() []string                                  { return nil }
func (seqPreparer) Apply(*bbolt.Tx, eventlog.Event) error              { return nil }
func (seqPreparer) Prepare(e eventlog.Event) any                       { return e.Seq }
func (seqPreparer) ApplyPrepared(*bbolt.Tx, eventlog.Event, any) error { return nil }

// plainProjection prepares nothing.
type plainProjection struct{}

func (plainProjection) Name() string                          { return "plain" }
func (plainProjection) Buckets() []string                     { return nil }
func (plainProjection) Apply(*bbolt.Tx, eventlog.Event) error { return nil }

func events(seqs ...uint64) []eventlog.Event {
	out := make([]eventlog.Event, len(seqs))
	for i, s := range seqs {
		out[i].Seq = s
	}
	return out
}

// TestExtendKeepsPreparedBesideTheirEvents: events that join a batch while it waits for the
// applier (group commit) are prepared, and what they prepared follows the same order.
func TestExtendKeepsPreparedBesideTheirEvents(t *testing.T) {
	p := &Projector{projections: []Projection{plainProjection{}, seqPreparer{}}}
	b := p.prepareBatch(events(1, 2, 2))
	b = p.extend(b, events(3, 4))
	b = p.extend(b, events(5))
	if len(b.events) != 6 || b.prepared[0] != nil || len(b.prepared[1]) != 6 {
		t.Fatalf("batch: %d events, prepared %v", len(b.events), b.prepared)
	}
	for j, e := range b.events {
		if b.prepared[1][j] != e.Seq {
			t.Errorf("event %d (seq %d) has %v prepared", j, e.Seq, b.prepared[1][j])
		}
	}
}

func TestMessagesCountsSequences(t *testing.T) {
	tests := []struct {
		seqs []uint64
		want int
	}{
		{nil, 0},
		{[]uint64{7}, 1},
		{[]uint64{7, 7, 7}, 1}, // one packed message
		{[]uint64{7, 8}, 2},
		{[]uint64{7, 7, 8, 9, 9}, 3},
	}
	for _, tt := range tests {
		if got := messages(events(tt.seqs...)); got != tt.want {
			t.Errorf("messages(%v) = %d, want %d", tt.seqs, got, tt.want)
		}
	}
}
