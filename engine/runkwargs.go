package engine

import (
	"encoding/json"
	"slices"
)

// RunKwargs is what a run was asked to do, as its record keeps it and the API shows it (a run's
// "kwargs"). It is decoded once, with the record, and read by field from then on: the worker,
// the streamer and the tracer never look a key up by its name.
//
// The fields are declared in the order of their JSON names so that a record encodes to the same
// bytes as when kwargs were a map (whose keys encoding/json sorts): records written before and
// after read and compare alike. Empty optional strings and lists are JSON null, as they always
// were. Input, Command, Config and Context are the client's own JSON values.
type RunKwargs struct {
	// CheckpointID is the checkpoint the run starts from ("" for the thread's latest).
	CheckpointID OptString `json:"checkpoint_id"`
	// Command is the run's command ({update, resume, goto}) as the client sent it; nil for none.
	Command map[string]any `json:"command"`
	// Config is the run's config, with the configurable keys the server sets (run_id,
	// thread_id, graph_id, assistant_id, checkpoint_id).
	Config  map[string]any `json:"config"`
	Context map[string]any `json:"context"`
	// Durability is when the run's checkpoints reach the log ("" for the default, async).
	Durability      Durability   `json:"durability"`
	FeedbackKeys    []string     `json:"feedback_keys"`
	Input           any          `json:"input"`
	InterruptAfter  []string     `json:"interrupt_after"`
	InterruptBefore []string     `json:"interrupt_before"`
	StreamMode      []StreamMode `json:"stream_mode"`
	// Subgraphs is the run's stream_subgraphs: its stream, joined or reconnected to without
	// saying otherwise, sends its subgraphs' events too (the reference keeps it here as well).
	// Left out when false, so that the runs recorded before it answer as they did.
	Subgraphs bool `json:"subgraphs,omitempty"`
	// Temporary is set for a stateless run whose thread is deleted once it ends.
	Temporary bool      `json:"temporary"`
	Webhook   OptString `json:"webhook"`
}

// GraphID is the graph the run executes, as its config records it ("" when it does not).
func (k RunKwargs) GraphID() string {
	configurable, _ := k.Config["configurable"].(map[string]any)
	id, _ := configurable["graph_id"].(string)
	return id
}

// Streams reports whether the run streams in any of modes.
func (k RunKwargs) Streams(modes ...StreamMode) bool {
	return slices.ContainsFunc(k.StreamMode, func(m StreamMode) bool { return slices.Contains(modes, m) })
}

// OptString is an optional string of the wire: the empty string is JSON null, and null reads as
// the empty string.
type OptString string

// MarshalJSON writes null for the empty string.
func (s OptString) MarshalJSON() ([]byte, error) { return nullOr(string(s)) }

// nullOr is the JSON of s, or null when s is empty.
func nullOr(s string) ([]byte, error) {
	if s == "" {
		return []byte("null"), nil
	}
	return json.Marshal(s)
}

// Durability is when a run's checkpoints reach the log. A run resumed after a crash starts from
// the last checkpoint that reached the log.
type Durability string

// Durabilities. The zero value is the default (async).
const (
	// DurabilitySync appends each checkpoint before the next step.
	DurabilitySync Durability = "sync"
	// DurabilityAsync appends them in the background, and at the latest with the event that
	// ends the run.
	DurabilityAsync Durability = "async"
	// DurabilityExit appends them with the event that ends the run.
	DurabilityExit Durability = "exit"
)

// Durabilities lists the durabilities, for validation.
var Durabilities = []Durability{DurabilitySync, DurabilityAsync, DurabilityExit}

// MarshalJSON writes null for the default (the empty durability).
func (d Durability) MarshalJSON() ([]byte, error) { return nullOr(string(d)) }

// StreamMode names a kind of event a stream carries: a value of a run's stream_mode, or of a
// thread stream's.
type StreamMode string

// Stream modes of a run.
const (
	StreamValues        StreamMode = "values"
	StreamUpdates       StreamMode = "updates"
	StreamMessages      StreamMode = "messages"
	StreamMessagesTuple StreamMode = "messages-tuple"
	StreamEvents        StreamMode = "events"
	StreamDebug         StreamMode = "debug"
	StreamTasks         StreamMode = "tasks"
	StreamCheckpoints   StreamMode = "checkpoints"
	StreamCustom        StreamMode = "custom"
	// StreamTools and StreamLifecycle are accepted for the clients' sake; on a run stream they
	// stream nothing of their own (tools carries the tool calls' events on the output bus for
	// the thread-centric protocol's tools channel, engine/threadstream).
	StreamTools     StreamMode = "tools"
	StreamLifecycle StreamMode = "lifecycle"
)

// Stream modes of a thread stream, besides StreamLifecycle.
const (
	// StreamRunModes sends every run's stream in its own modes.
	StreamRunModes StreamMode = "run_modes"
	// StreamStateUpdate sends the thread's state after each change.
	StreamStateUpdate StreamMode = "state_update"
)

// RunStreamModes lists the stream modes a run accepts, for validation.
var RunStreamModes = []StreamMode{StreamValues, StreamUpdates, StreamMessages, StreamMessagesTuple, StreamEvents,
	StreamDebug, StreamTasks, StreamCheckpoints, StreamCustom, StreamTools, StreamLifecycle}

// ThreadStreamModes lists the stream modes of a thread stream, for validation.
var ThreadStreamModes = []StreamMode{StreamLifecycle, StreamRunModes, StreamStateUpdate}
