package threadstream

import (
	"context"

	"github.com/jetgraph/jetgraph/engine/streaming"
)

// Source is a thread's output read from the bus (*streaming.OutputFollower is one).
type Source interface {
	// Next returns the events of the next output message, waiting for it.
	Next(ctx context.Context) ([]streaming.Msg, error)
	// Pending is how many messages are already waiting.
	Pending() int
}

// Pump translates what src reads, run by run, and passes each event f asks for to emit, except
// those at or before f.Since; flush is called when no more messages are waiting. It returns
// when ctx ends (its error), src fails, or emit or flush fails.
func Pump(ctx context.Context, src Source, f Filter, emit func(*Event) error, flush func() error) error {
	runs := map[string]*Translator{}
	var events []Event
	for {
		msgs, err := src.Next(ctx)
		if err != nil {
			return err
		}
		rank := 0 // events of this message so far
		for _, m := range msgs {
			t := runs[m.RunID]
			if t == nil {
				t = NewTranslator()
				runs[m.RunID] = t
			}
			events = t.Translate(m, events[:0])
			Number(events, m.Seq, rank)
			rank += len(events)
			if m.Event == "end" {
				delete(runs, m.RunID)
			}
			for i := range events {
				e := &events[i]
				if f.Since != nil && e.Seq <= *f.Since || !f.Matches(e) {
					continue
				}
				if err := emit(e); err != nil {
					return err
				}
			}
		}
		if src.Pending() == 0 {
			if err := flush(); err != nil {
				return err
			}
		}
	}
}
