package replay

import (
	"encoding/json"
	"fmt"
	"maps"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/eventlog"
)

// FileVersion is the version of the export format (.jgx) this jetgraph writes and reads.
const FileVersion = 1

// File is one exported thread (a .jgx file): everything jetgraph keeps of it on the log, its
// runs (inputs, attempts, outcomes), checkpoints and pending writes, in log order. The model
// and tool outputs of its runs are in the checkpoints' writes (each AI and tool message, keyed
// by node and step), so a replay from the file needs nothing else.
type File struct {
	JGX        int              `json:"jgx"`
	ThreadID   string           `json:"thread_id"`
	Metadata   map[string]any   `json:"metadata"`
	ExportedAt time.Time        `json:"exported_at"`
	Events     []eventlog.Event `json:"events"`
}

// NewFile makes the export of a thread from its events. Values kept in the object store (over
// checkpoints.MaxInline) are refused: the file would not be self-contained.
func NewFile(threadID string, events []eventlog.Event) (*File, error) {
	f := &File{JGX: FileVersion, ThreadID: threadID, Metadata: map[string]any{}, ExportedAt: time.Now().UTC(), Events: events}
	for _, e := range events {
		switch e.Type {
		case engine.ThreadCreated, engine.ThreadPatched:
			var d struct {
				Metadata map[string]any `json:"metadata"`
			}
			if err := json.Unmarshal(e.Data, &d); err != nil {
				return nil, fmt.Errorf("replay: export: event %s: %w", e.ID, err)
			}
			maps.Copy(f.Metadata, d.Metadata)
		case engine.RunCreatedEvent: // a run names the thread's graph, as the projection keeps it
			var d engine.RunCreatedData
			if err := json.Unmarshal(e.Data, &d); err != nil {
				return nil, fmt.Errorf("replay: export: event %s: %w", e.ID, err)
			}
			if g := d.Run.Kwargs.GraphID(); g != "" {
				f.Metadata["graph_id"], f.Metadata["assistant_id"] = g, d.Run.AssistantID
			}
		case engine.ThreadDeleted:
			f.Metadata = map[string]any{}
		}
	}
	return f, f.Check()
}

// Check refuses a file this jetgraph cannot read: another version, no thread, events of
// another thread, a value it does not carry.
func (f *File) Check() error {
	const op = engine.Op("replay.file")
	if f.JGX != FileVersion {
		return engine.E(op, engine.Invalid, fmt.Sprintf("Export format version %d; this jetgraph reads version %d", f.JGX, FileVersion))
	}
	if _, err := engine.AggregateID("thread", f.ThreadID); err != nil {
		return engine.E(op, engine.Invalid, "Invalid thread_id: "+err.Error())
	}
	for _, e := range f.Events {
		if e.Aggregate.Kind != "thread" || e.Aggregate.ID != f.ThreadID {
			return engine.E(op, engine.Invalid, fmt.Sprintf("Event %s is not of thread %s", e.ID, f.ThreadID))
		}
		if e.Type != engine.ThreadCheckpoint && e.Type != engine.ThreadWrites {
			continue
		}
		var refs struct {
			Blobs  map[string]engine.BlobData `json:"blobs"`
			Writes []engine.PendingWriteData  `json:"writes"`
		}
		if err := json.Unmarshal(e.Data, &refs); err != nil {
			return engine.E(op, engine.Invalid, fmt.Sprintf("Event %s: %v", e.ID, err))
		}
		for _, b := range refs.Blobs {
			if b.Ref != "" {
				return engine.E(op, engine.Invalid, fmt.Sprintf("Event %s keeps a value in the object store (%s): threads with values over 512 KiB are not exported yet", e.ID, b.Ref))
			}
		}
		for _, w := range refs.Writes {
			if w.Ref != "" {
				return engine.E(op, engine.Invalid, fmt.Sprintf("Event %s keeps a value in the object store (%s): threads with values over 512 KiB are not exported yet", e.ID, w.Ref))
			}
		}
	}
	return nil
}
