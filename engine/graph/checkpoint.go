package graph

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"sync"
	"time"
)

// Checkpoint is the state of a graph after a step: every channel's value and version.
type Checkpoint struct {
	V               int                         `json:"v"`
	ID              string                      `json:"id"`
	TS              time.Time                   `json:"ts"`
	ChannelValues   map[string]json.RawMessage  `json:"channel_values"`
	ChannelVersions map[string]int64            `json:"channel_versions"`
	VersionsSeen    map[string]map[string]int64 `json:"versions_seen"`
}

// Ref names a checkpoint: a thread, a namespace ("" for the root graph, "node:task_id" for a
// subgraph, nested with "|") and a checkpoint id.
type Ref struct {
	ThreadID string `json:"thread_id"`
	NS       string `json:"checkpoint_ns"`
	ID       string `json:"checkpoint_id"`
}

// PendingWrite is a write of a task of the step after a checkpoint that has not been applied yet:
// the finished tasks of an interrupted step, interrupts, and resume values.
type PendingWrite struct {
	TaskID  string          `json:"task_id"`
	Channel string          `json:"channel"`
	Value   json.RawMessage `json:"value"`
}

// Tuple is a stored checkpoint with its metadata, its parent and the pending writes on it.
type Tuple struct {
	Ref        Ref            `json:"ref"`
	Checkpoint Checkpoint     `json:"checkpoint"`
	Metadata   map[string]any `json:"metadata"`
	Parent     *Ref           `json:"parent,omitempty"`
	Writes     []PendingWrite `json:"pending_writes,omitempty"`
}

// ListOptions filters a checkpoint listing; the newest come first.
type ListOptions struct {
	Limit    int
	Before   string         // only checkpoints older than this id
	Metadata map[string]any // metadata containment
}

// Saver stores checkpoints. Implementations: MemorySaver here, and the event-log saver that
// appends every checkpoint to the thread's subject.
type Saver interface {
	// Get returns the checkpoint ref names, or the newest of its namespace when ref.ID is "";
	// nil when there is none.
	Get(ctx context.Context, ref Ref) (*Tuple, error)
	// List returns the checkpoints of ref's thread and namespace, newest first.
	List(ctx context.Context, ref Ref, opts ListOptions) ([]Tuple, error)
	// Put stores a checkpoint whose parent is parent (nil for the first).
	Put(ctx context.Context, ref Ref, cp Checkpoint, metadata map[string]any, parent *Ref) error
	// PutWrites stores pending writes on the checkpoint ref.
	PutWrites(ctx context.Context, ref Ref, writes []PendingWrite) error
}

// MemorySaver keeps checkpoints in memory: for tests, benchmarks and runs that need no history.
type MemorySaver struct {
	mu     sync.Mutex
	tuples map[string][]*Tuple // thread/ns -> in creation order
}

// NewMemorySaver returns an empty MemorySaver.
func NewMemorySaver() *MemorySaver { return &MemorySaver{tuples: map[string][]*Tuple{}} }

func memKey(r Ref) string { return r.ThreadID + "\x00" + r.NS }

// Get implements Saver.
func (m *MemorySaver) Get(_ context.Context, ref Ref) (*Tuple, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ts := m.tuples[memKey(ref)]
	if len(ts) == 0 {
		return nil, nil
	}
	if ref.ID == "" {
		return cloneTuple(ts[len(ts)-1]), nil
	}
	for _, t := range ts {
		if t.Ref.ID == ref.ID {
			return cloneTuple(t), nil
		}
	}
	return nil, nil
}

// List implements Saver.
func (m *MemorySaver) List(_ context.Context, ref Ref, opts ListOptions) ([]Tuple, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ts := slices.Clone(m.tuples[memKey(ref)])
	slices.Reverse(ts)
	return FilterTuples(ts, opts), nil
}

// FilterTuples applies opts to tuples that are newest first.
func FilterTuples(ts []*Tuple, opts ListOptions) []Tuple {
	var out []Tuple
	before := opts.Before == ""
	for _, t := range ts {
		if !before {
			before = t.Ref.ID == opts.Before
			continue
		}
		if len(opts.Metadata) > 0 && !containsAll(t.Metadata, opts.Metadata) {
			continue
		}
		out = append(out, *cloneTuple(t))
		if opts.Limit > 0 && len(out) == opts.Limit {
			break
		}
	}
	return out
}

func containsAll(md, filter map[string]any) bool {
	for k, v := range filter {
		a, _ := json.Marshal(md[k])
		b, _ := json.Marshal(v)
		if string(a) != string(b) {
			return false
		}
	}
	return true
}

// Put implements Saver.
func (m *MemorySaver) Put(_ context.Context, ref Ref, cp Checkpoint, md map[string]any, parent *Ref) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := &Tuple{Ref: ref, Checkpoint: cp, Metadata: md, Parent: parent}
	m.tuples[memKey(ref)] = append(m.tuples[memKey(ref)], cloneTuple(t))
	return nil
}

// PutWrites implements Saver.
func (m *MemorySaver) PutWrites(_ context.Context, ref Ref, writes []PendingWrite) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, t := range m.tuples[memKey(ref)] {
		if t.Ref.ID == ref.ID {
			t.Writes = MergeWrites(t.Writes, writes)
			return nil
		}
	}
	return nil
}

// MergeWrites adds writes to existing, replacing earlier writes of the same task and channel for
// the special channels (interrupts, resume values) and keeping the order of the rest.
func MergeWrites(existing, writes []PendingWrite) []PendingWrite {
	out := slices.Clone(existing)
	for _, w := range writes {
		replaced := false
		if w.Channel == Interrupt || w.Channel == resumeKey || w.Channel == errorKey {
			for i := range out {
				if out[i].TaskID == w.TaskID && out[i].Channel == w.Channel {
					out[i], replaced = w, true
				}
			}
		}
		if !replaced {
			out = append(out, w)
		}
	}
	return out
}

// cloneTuple copies t deeply enough that neither side's maps and slices are shared. Channel
// values (raw JSON) and metadata values are immutable by convention and shared.
func cloneTuple(t *Tuple) *Tuple {
	c := *t
	c.Checkpoint.ChannelValues = maps.Clone(t.Checkpoint.ChannelValues)
	c.Checkpoint.ChannelVersions = maps.Clone(t.Checkpoint.ChannelVersions)
	if t.Checkpoint.VersionsSeen != nil {
		c.Checkpoint.VersionsSeen = make(map[string]map[string]int64, len(t.Checkpoint.VersionsSeen))
		for k, v := range t.Checkpoint.VersionsSeen {
			c.Checkpoint.VersionsSeen[k] = maps.Clone(v)
		}
	}
	c.Metadata = maps.Clone(t.Metadata)
	c.Writes = slices.Clone(t.Writes)
	if t.Parent != nil {
		p := *t.Parent
		c.Parent = &p
	}
	return &c
}
