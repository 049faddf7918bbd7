package graph

import (
	"encoding/json"
	"strings"

	"github.com/jetgraph/jetgraph/engine"
)

// Kind names what a stream event holds, and so the type of its Data. Kinds are made where the
// event is made (the runtime, a node's Runtime) and travel with it to every consumer: in process
// as Event.Kind, on the output bus as the record's event line, and, for hosted graphs, over the
// host protocol. They are stable wire names: a kind is added, never renamed or given another
// payload.
type Kind string

// The kinds of the runtime's events, with the type of their Data.
const (
	// KindValues: State, the graph's state after a step (or the state a run resumes from).
	KindValues Kind = "values"
	// KindUpdates: NodeUpdate, what one node wrote in a step.
	KindUpdates Kind = "updates"
	// KindCustom: any JSON value a node wrote with Runtime.Write.
	KindCustom Kind = "custom"
	// KindMessages: MessageChunk, a streamed model token and its metadata.
	KindMessages Kind = "messages"
	// KindTaskStart: TaskStart, a task of a step began.
	KindTaskStart Kind = "task_start"
	// KindTaskResult: TaskResult, a task of a step finished (with its writes or its error).
	KindTaskResult Kind = "task_result"
	// KindCheckpoint: CheckpointSaved, a checkpoint was saved.
	KindCheckpoint Kind = "checkpoints"
)

// TraceModePrefix starts the kinds of internal observability events ("trace/llm_start",
// "trace/llm_end", "trace/tool_start", "trace/tool_end", declared with their payloads by the
// graphs that emit them): the engine's own tracing reads them; client-facing streams never show
// them.
const TraceModePrefix = "trace/"

// Mode is the stream mode whose clients see events of kind k: "tasks" for both task kinds (the
// wire tells a start from a result by its fields), the kind's own name otherwise.
func (k Kind) Mode() engine.StreamMode {
	if k == KindTaskStart || k == KindTaskResult {
		return engine.StreamTasks
	}
	return engine.StreamMode(k)
}

// Trace reports whether k is an internal observability kind (TraceModePrefix).
func (k Kind) Trace() bool { return strings.HasPrefix(string(k), TraceModePrefix) }

// Event is a stream event of a run: Kind says what Data holds (see the Kind constants); NS is
// the subgraph path ("node:task_id" parts), empty for the root graph.
type Event struct {
	Kind Kind
	NS   []string
	Data any
}

// NodeUpdate is a KindUpdates event's data: what Node wrote. It is sent as {node: values}.
type NodeUpdate struct {
	Node   string
	Values any
}

// MarshalJSON encodes u as the updates stream mode shows it: {node: values}.
func (u NodeUpdate) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]any{u.Node: u.Values})
}

// MessageChunk is a KindMessages event's data: a model's chunk and the metadata clients expect
// with it (node, step, triggers, checkpoint namespace, the run's metadata). It is sent as the
// pair [chunk, metadata].
type MessageChunk struct {
	Chunk    engine.MessageChunk
	Metadata map[string]any
}

// MarshalJSON encodes c as the messages stream mode shows it: [chunk, metadata].
func (c MessageChunk) MarshalJSON() ([]byte, error) {
	return json.Marshal([2]any{c.Chunk, c.Metadata})
}

// TaskStart is a KindTaskStart event's data, in the tasks stream mode's shape.
type TaskStart struct {
	ID         string           `json:"id"`
	Name       string           `json:"name"`
	Input      any              `json:"input"`
	Triggers   []string         `json:"triggers"`
	Interrupts []InterruptValue `json:"interrupts"`
}

// TaskResult is a KindTaskResult event's data, in the tasks stream mode's shape: Result is the
// task's writes (null when it wrote nothing), Error its failure, Interrupts what it stopped on.
type TaskResult struct {
	ID         string           `json:"id"`
	Name       string           `json:"name"`
	Error      *TaskError       `json:"error"`
	Result     any              `json:"result"`
	Interrupts []InterruptValue `json:"interrupts"`
}

// TaskError is a failed task's error as clients see it.
type TaskError struct {
	Error   string `json:"error"`
	Message string `json:"message"`
}

// CheckpointSaved is a KindCheckpoint event's data: the checkpoint saved, its metadata and its
// parent. Streams show it as a thread-history entry, which their publisher builds from it.
type CheckpointSaved struct {
	Checkpoint Ref            `json:"checkpoint"`
	Metadata   map[string]any `json:"metadata"`
	Parent     *Ref           `json:"parent"`
}

// EncodedMessageChunk is a KindMessages event's data made outside the Go runtime, by a hosted
// graph's own library: the [chunk, metadata] pair as the library encoded it (its message classes
// carry fields engine.MessageChunk does not know, so it is passed on as written) and the chunk's
// message id, which streams use to tell a streamed message from one to send whole.
type EncodedMessageChunk struct {
	ID   string
	Pair json.RawMessage
}

// MarshalJSON encodes c as the pair it holds.
func (c EncodedMessageChunk) MarshalJSON() ([]byte, error) { return c.Pair, nil }
