package projections

import (
	"encoding/json"
	"errors"
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

// TestExtendKeepsRefusalsBesideTheirEvents: what could not be upcast stays beside its event as a
// batch grows and is cut, and the events that were upcast replace their stored form in the batch
// only, never in what was read.
func TestExtendKeepsRefusalsBesideTheirEvents(t *testing.T) {
	up := eventlog.NewUpcasters()
	up.Register("x", 1, func(data json.RawMessage) (json.RawMessage, error) {
		if string(data) == `"bad"` {
			return nil, errors.New("refused")
		}
		return json.RawMessage(`"v2"`), nil
	})
	p := &Projector{projections: []Projection{seqPreparer{}}, Upcasters: up}
	ev := func(seq uint64, data string) eventlog.Event {
		return eventlog.Event{Type: "x", Version: 1, Seq: seq, Data: json.RawMessage(data)}
	}
	read := []eventlog.Event{ev(1, `"ok"`), ev(2, `"bad"`)}
	b := p.prepareBatch(read)
	if string(read[0].Data) != `"ok"` || read[0].Version != 1 {
		t.Fatalf("the events read were changed: %+v", read[0])
	}
	b = p.extend(b, []eventlog.Event{ev(3, `"ok"`)})
	b = p.extend(b, []eventlog.Event{ev(4, `"bad"`), ev(5, `"ok"`)})
	if len(b.refused) != len(b.events) {
		t.Fatalf("%d refusals for %d events", len(b.refused), len(b.events))
	}
	for j, e := range b.events {
		if refused := b.refused[j] != nil; refused != (e.Seq == 2 || e.Seq == 4) {
			t.Errorf("event %d (seq %d): refusal %v", j, e.Seq, b.refused[j])
		}
		if b.refused[j] == nil && (e.Version != 2 || string(e.Data) != `"v2"`) {
			t.Errorf("event %d (seq %d) not upcast: v%d %s", j, e.Seq, e.Version, e.Data)
		}
	}
	if cut := b.prefix(3); len(cut.refused) != 3 || cut.refused[1] == nil {
		t.Errorf("prefix refusals: %v", cut.refused)
	}
	if clean := p.extend(p.prepareBatch([]eventlog.Event{ev(6, `"ok"`)}), []eventlog.Event{ev(7, `"ok"`)}); clean.refused != nil {
		t.Errorf("refusals where there are none: %v", clean.refused)
	}
}
