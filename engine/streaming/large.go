package streaming

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/eventlog"
)

// Large events. A record over the log's inline limit (a "values" event of a state past 1 MiB,
// the "metadata" of a run with a large input) is not sent in a message: it is stored first in
// the output stream's object store (eventlog.PutBlob, kept a margin longer than the stream's
// messages), and the message carries, in its place, a reference record:
//
//	jgr
//	<eventlog.AppendBlobRef bytes>
//
// Followers fetch it and shape it like any record: clients get the event whole. Nothing is
// dropped without the client being told: an event that cannot be encoded or stored is replaced
// by an "error" event saying so, and a follower that cannot read a message or fetch a record
// sends an "error" event in its place.
const refVersion = "jgr"

// fetchTimeout bounds the tries to fetch a record stored apart: one that expired fails each
// time, and the client is told.
const fetchTimeout = 10 * time.Second

// ErrorStreamEvent is the "error" field of the error events that tell a client an event of the
// run's stream could not be delivered.
const ErrorStreamEvent = "StreamEventLost"

// lostRecord is the record of an "error" event telling that an event of the run is lost, and why.
func lostRecord(event graph.Kind, why string) []byte {
	data := mustJSON(map[string]any{"error": ErrorStreamEvent,
		"message": Sanitize(fmt.Sprintf("A %q event of the run could not be streamed: %s", event, why))})
	return append([]byte(wireVersion+"\nerror\n\n\n\n"), data...)
}

// storeLarge returns rec, or a reference to it when it is too large for a message, after storing
// it; an error record when it cannot be stored.
func (p *runPub) storeLarge(event graph.Kind, rec []byte) []byte {
	b := p.s.bus
	if b == nil || !b.Oversized(rec) {
		return rec
	}
	ref, err := b.PutBlob(p.ctx, rec)
	if err != nil {
		p.s.log.Warn("streaming: a large event could not be stored; the stream says so", "run_id", p.rec.RunID,
			"event", event, "bytes", len(rec), "err", err)
		return lostRecord(event, fmt.Sprintf("its %d bytes could not be stored (%v)", len(rec), err))
	}
	return eventlog.AppendBlobRef([]byte(refVersion+"\n"), ref)
}

// errNoPosition is why a message the log handed over without its stream position is not read.
var errNoPosition = errors.New("streaming: output message without its stream position")

// lostMsg is the "error" message a follower sends in place of what it could not read.
func lostMsg(m Msg, why string) Msg {
	m.Event, m.NS, m.Run, m.ChunkID = KindError, nil, nil, ""
	m.Data = mustJSON(map[string]any{"error": ErrorStreamEvent,
		"message": Sanitize("An event of the run's stream could not be read: " + why)})
	return m
}

// decode reads an output message: its events, in order (see wireVersion, packVersion and
// refVersion for its forms), fetching the records stored by reference. They share the message's
// sequence and time. What cannot be read becomes an "error" event.
func (s *Streamer) decode(ctx context.Context, jm eventlog.Message, into []Msg) []Msg {
	base := Msg{RunID: runOfSubject(jm.Subject), Seq: jm.Seq, Time: jm.Time}
	var recs [][]byte
	err := errNoPosition
	if jm.Seq > 0 {
		recs, err = records(jm.Data)
	}
	if err != nil {
		s.log.Warn("streaming: undecodable output message; the client is told", "subject", jm.Subject, "err", err)
		return append(into, lostMsg(base, err.Error()))
	}
	for _, r := range recs {
		m := base
		if err := s.decodeRecord(ctx, r, &m); err != nil {
			s.log.Warn("streaming: unreadable output record; the client is told", "subject", jm.Subject, "err", err)
			m = lostMsg(base, err.Error())
		}
		into = append(into, m)
	}
	return into
}

// decodeRecord reads one record, fetching it first when it is a reference.
func (s *Streamer) decodeRecord(ctx context.Context, r []byte, m *Msg) error {
	rest, ok := bytes.CutPrefix(r, []byte(refVersion+"\n"))
	if !ok {
		return decodeRecord(r, m)
	}
	ref, err := eventlog.ParseBlobRef(rest)
	if err != nil {
		return err
	}
	if s.bus == nil {
		return fmt.Errorf("a %d-byte event stored apart, and no log to read it from", ref.Size)
	}
	var full []byte
	rctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	err = eventlog.Retry(rctx, func() (err error) {
		full, err = s.bus.GetBlob(rctx, ref)
		return err
	})
	if err != nil {
		return fmt.Errorf("its %d bytes could not be fetched (expired?): %w", ref.Size, err)
	}
	return decodeRecord(full, m)
}
