package httpapi

import (
	"context"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/assistants"
	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/engine/graphs"
	"github.com/jetgraph/jetgraph/engine/runner"
	"github.com/jetgraph/jetgraph/engine/runs"
	"github.com/jetgraph/jetgraph/engine/store"
	"github.com/jetgraph/jetgraph/engine/streaming"
	"github.com/jetgraph/jetgraph/engine/threads"
	"github.com/jetgraph/jetgraph/eventlog"
)

// The runtime handlers depend on these interfaces, each listing exactly what the handlers call,
// rather than on the engine's services: a handler test that is about HTTP (validation, the
// error mapping, the wire shape) runs against a small fake, without JetStream or bbolt. The
// engine's services satisfy them as they are; cmd/jetgraph passes those.

// ThreadService creates, reads, changes and deletes threads (*threads.Service is one).
type ThreadService interface {
	Create(ctx context.Context, c threads.Create) (engine.Thread, error)
	Get(ctx context.Context, id string) (engine.Thread, error)
	Patch(ctx context.Context, id string, metadata map[string]any, ttl *engine.TTLSpec) (engine.Thread, error)
	Delete(ctx context.Context, id string) error
	// Search returns one page of the threads matching q and how many match in all.
	Search(ctx context.Context, q engine.ThreadQuery) ([]engine.Thread, int, error)
	Prune(ctx context.Context, ids []string, strategy string) (int, error)
}

// AssistantService keeps the assistants (*assistants.Service is one). An idOrGraph is an
// assistant id or a graph id standing for its system assistant.
type AssistantService interface {
	// ID returns the assistant id idOrGraph names, and false when it names none.
	ID(idOrGraph string) (string, bool)
	// CheckGraph records in v, at loc, that graphID is not a served graph.
	CheckGraph(v *engine.Violations, graphID string, loc ...any)
	Create(ctx context.Context, c assistants.Create) (engine.Assistant, error)
	Get(ctx context.Context, idOrGraph string) (engine.Assistant, error)
	// Resolve is Get for a run: the assistant a run names.
	Resolve(ctx context.Context, idOrGraph string) (engine.Assistant, error)
	Patch(ctx context.Context, idOrGraph string, p assistants.Patch) (engine.Assistant, error)
	SetLatest(ctx context.Context, idOrGraph string, version int) (engine.Assistant, error)
	Versions(ctx context.Context, idOrGraph string, metadata map[string]any, limit, offset int) ([]engine.AssistantVersion, int, error)
	Delete(ctx context.Context, idOrGraph string, deleteThreads bool) error
	// Search returns one page of the assistants matching q and how many match in all.
	Search(ctx context.Context, q engine.AssistantQuery) ([]engine.Assistant, int, error)
}

// StoreService is the key-value store (*store.Service is one). refresh renews the time to live
// of the items read.
type StoreService interface {
	Put(ctx context.Context, p store.Put) error
	Get(ctx context.Context, namespace []string, key string, refresh bool) (engine.Item, bool, error)
	Delete(ctx context.Context, namespace []string, key string) error
	Search(ctx context.Context, q engine.StoreQuery, refresh bool) ([]engine.Item, error)
	ListNamespaces(ctx context.Context, q engine.NamespaceQuery) ([][]string, error)
}

// RunService creates, waits for and cancels runs (*runs.Service, the durable scheduler, is one).
type RunService interface {
	Create(ctx context.Context, c runs.Create) (engine.RunRecord, error)
	Get(ctx context.Context, thread, run string) (engine.RunRecord, error)
	// GetByID finds a run without its thread (stateless runs).
	GetByID(ctx context.Context, run string) (engine.RunRecord, error)
	List(ctx context.Context, thread, status string, limit, offset int) ([]engine.RunRecord, error)
	Wait(ctx context.Context, thread, run string) (engine.RunRecord, error)
	// WaitEnd waits for the end of a run this request created; the values are those a run this
	// process executed ended with (nil otherwise).
	WaitEnd(ctx context.Context, rec engine.RunRecord) (engine.RunRecord, graph.State, error)
	Cancel(ctx context.Context, thread, run, action string, wait bool) error
	CancelMany(ctx context.Context, thread string, runIDs []string, status, action string) error
	CancelAll(ctx context.Context, status, action string) error
	Delete(ctx context.Context, thread, run string) error
}

// StateService reads and writes the state of threads (*runner.Runner is one).
type StateService interface {
	State(ctx context.Context, ref graph.Ref, subgraphs bool) (*graph.Snapshot, error)
	History(ctx context.Context, ref graph.Ref, opts graph.ListOptions) ([]graph.Snapshot, error)
	UpdateState(ctx context.Context, ref graph.Ref, supersteps [][]graph.Update) (graph.Ref, error)
	PatchState(ctx context.Context, ref graph.Ref, metadata map[string]any) error
	// Copy makes a new thread with the metadata and every checkpoint of threadID.
	Copy(ctx context.Context, threadID string) (engine.Thread, error)
	// Fork makes a new thread from a step of another, remembering where it came from.
	Fork(ctx context.Context, f runner.Fork) (engine.Thread, error)
	// Import makes a thread from an export's metadata and events ("" for a new id).
	Import(ctx context.Context, threadID string, metadata map[string]any, events []eventlog.Event) (engine.Thread, error)
	// CreateWithSupersteps creates a thread and writes supersteps of state updates on it; a bad
	// update creates nothing.
	CreateWithSupersteps(ctx context.Context, c threads.Create, supersteps [][]graph.Update) (engine.Thread, error)
}

// GraphCatalog holds the served graphs (*graphs.Registry is one).
type GraphCatalog interface {
	Get(id string) (graphs.Entry, bool)
	Build(id string, cfg graph.Config) (*graph.Graph, error)
	// Runnable returns a Go graph or a hosted graph (which a host process runs).
	Runnable(id string, cfg graph.Config) (graphs.Runnable, error)
}

// StreamService follows what runs and threads stream (StreamsOf(*streaming.Streamer) is one).
type StreamService interface {
	FollowRun(ctx context.Context, r streaming.RunRequest) (Follower, error)
	FollowThread(ctx context.Context, r streaming.ThreadRequest) (Follower, error)
	// Retained reports whether output of run is still kept (after the run was deleted), and the
	// thread it is on; thread "" looks on every thread.
	Retained(ctx context.Context, thread, run string) (string, bool)
}

// Follower is one client's following of a run or thread, as the stream handlers serve it
// (*streaming.Follower is one): the handlers own the port, so a test can serve frames of its
// own without a bus.
type Follower interface {
	// Serve writes the stream's frames to sink until it ends (nil), the request's context is
	// done, or the sink or the bus fails (the error).
	Serve(ctx context.Context, sink streaming.FrameSink) error
	// Close releases what the following holds; the handler calls it once served.
	Close()
}

// Streamer is a StreamService whose followers are of a concrete type F (*streaming.Streamer,
// whose followers are *streaming.Follower): Go's method sets do not convert F to Follower.
type Streamer[F Follower] interface {
	FollowRun(ctx context.Context, r streaming.RunRequest) (F, error)
	FollowThread(ctx context.Context, r streaming.ThreadRequest) (F, error)
	Retained(ctx context.Context, thread, run string) (string, bool)
}

// StreamsOf serves s as the StreamService: the wiring's one line between the output bus and
// the handlers (a server without streaming leaves Deps.Streams nil instead).
func StreamsOf[F Follower](s Streamer[F]) StreamService {
	return streams[F]{s}
}

// streams adapts a Streamer to StreamService.
type streams[F Follower] struct{ Streamer[F] }

func (s streams[F]) FollowRun(ctx context.Context, r streaming.RunRequest) (Follower, error) {
	f, err := s.Streamer.FollowRun(ctx, r)
	if err != nil {
		return nil, err
	}
	return f, nil
}

func (s streams[F]) FollowThread(ctx context.Context, r streaming.ThreadRequest) (Follower, error) {
	f, err := s.Streamer.FollowThread(ctx, r)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// Truncator empties the runtime's data (*truncate.Service is one).
type Truncator interface {
	Truncate(ctx context.Context, f engine.TruncatedData) error
}
