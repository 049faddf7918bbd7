package projections

import (
	"encoding/json"
	"maps"
	"sync"
	"unicode/utf8"

	"github.com/jetgraph/jetgraph/engine"
)

// A checkpoint's writer in this process hands its payload to the folds as it encoded it
// (Checkpoints.Prime), and the fold takes it instead of decoding the event's JSON again: the
// three checkpoints of an echo run were the projector's largest decode (issue 28, "no event
// read back that the writer already holds"). A primed payload equals what decoding the event
// yields, field for field (TestPrimedCheckpointEqualsDecoded): the fold's result, and so the file,
// does not depend on whether it was primed; a fold that finds nothing primed (another process
// wrote the event, a rebuild) decodes.
//
// Primed payloads are taken once, by the first fold that reads the event. One whose event never
// comes (its append failed) is forgotten when maxPrimed are held: the set is emptied then.

// maxPrimed bounds the payloads held for events not folded yet.
const maxPrimed = 4096

// primedPayloads holds checkpoint payloads by event id until a fold takes them.
type primedPayloads struct {
	mu          sync.Mutex
	checkpoints map[string]checkpointEvent
}

func (p *primedPayloads) put(id string, cp checkpointEvent) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.checkpoints == nil || len(p.checkpoints) >= maxPrimed {
		p.checkpoints = make(map[string]checkpointEvent, 64)
	}
	p.checkpoints[id] = cp
}

func (p *primedPayloads) take(id string) (checkpointEvent, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	cp, ok := p.checkpoints[id]
	if ok {
		delete(p.checkpoints, id)
	}
	return cp, ok
}

// PrimedCheckpoint is a checkpoint payload (engine.CheckpointData) as its writer encoded it into
// the event's data: the header and its JSON, and the metadata and channel values as the JSON
// written (slices of the event's data, which nobody changes once it is built).
type PrimedCheckpoint struct {
	NS         string
	Header     engine.CheckpointHeader // its TS in UTC, as HeaderJSON reads back
	HeaderJSON []byte
	Metadata   json.RawMessage
	Parent     *engine.CheckpointRef
	Blobs      map[string]engine.BlobData
	Full       bool
}

// Prime hands the payload of checkpoint event id, about to be appended, to the fold. The maps
// are copied (the writer goes on using its own). A payload whose strings are not all valid UTF-8
// is not primed: decoding would read them otherwise than they are.
func (c *Checkpoints) Prime(id string, p PrimedCheckpoint) {
	if !primable(p) {
		return
	}
	h := p.Header
	h.ChannelVersions = maps.Clone(h.ChannelVersions)
	if h.VersionsSeen != nil {
		seen := make(map[string]map[string]int64, len(h.VersionsSeen))
		for k, v := range h.VersionsSeen {
			seen[k] = maps.Clone(v)
		}
		h.VersionsSeen = seen
	}
	var parent *engine.CheckpointRef
	if p.Parent != nil {
		ref := *p.Parent
		parent = &ref
	}
	c.db.primed.put(id, checkpointEvent{NS: p.NS, Checkpoint: rawHeader{CheckpointHeader: h, raw: p.HeaderJSON},
		Metadata: p.Metadata, Parent: parent, Blobs: maps.Clone(p.Blobs), Full: p.Full})
}

// primable reports whether every string of p is valid UTF-8.
func primable(p PrimedCheckpoint) bool {
	ok := utf8.ValidString(p.NS) && utf8.ValidString(p.Header.ID)
	for k := range p.Header.ChannelVersions {
		ok = ok && utf8.ValidString(k)
	}
	for k, m := range p.Header.VersionsSeen {
		ok = ok && utf8.ValidString(k)
		for k := range m {
			ok = ok && utf8.ValidString(k)
		}
	}
	for k, b := range p.Blobs {
		ok = ok && utf8.ValidString(k) && utf8.ValidString(b.Ref)
	}
	if p.Parent != nil {
		ok = ok && utf8.ValidString(p.Parent.ThreadID) && utf8.ValidString(p.Parent.NS) && utf8.ValidString(p.Parent.ID)
	}
	return ok
}

// DecodeCheckpointPayload reads a checkpoint event's data as the folds do when nothing was
// primed: what Prime must be given for the same event.
func DecodeCheckpointPayload(data []byte) (PrimedCheckpoint, error) {
	var cd checkpointEvent
	if err := decodeJSON(data, &cd); err != nil {
		return PrimedCheckpoint{}, err
	}
	return PrimedCheckpoint{NS: cd.NS, Header: cd.Checkpoint.CheckpointHeader, HeaderJSON: cd.Checkpoint.raw,
		Metadata: cd.Metadata, Parent: cd.Parent, Blobs: cd.Blobs, Full: cd.Full}, nil
}
