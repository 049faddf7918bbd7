// Package threadstream is the thread-centric streaming protocol of the current LangGraph SDKs
// (the JS SDK's ThreadStream, @langchain/protocol): commands posted to a thread (run.start,
// input.respond, ...) and one stream of typed events per thread, filtered by channel and by
// subgraph namespace, over SSE or a WebSocket.
//
// The events are not kept anywhere of their own: they are the runs' output on the output bus
// (engine/streaming), translated run by run from each run's first message (translate.go). An
// event's seq is the output stream position of what it was translated from (its message's
// stream sequence and its rank among the events of that message), and its event_id is that
// number in decimal: the same on every read, from any process, and increasing across the runs of
// a thread. A client that reconnects with since=<seq> gets exactly the events after it.
package threadstream

import "encoding/json"

// Method names a command or an event.
type Method = string

// Command methods the server answers.
const (
	MethodRunStart             Method = "run.start"
	MethodInputRespond         Method = "input.respond"
	MethodInputInject          Method = "input.inject"
	MethodSubscribe            Method = "subscription.subscribe"
	MethodUnsubscribe          Method = "subscription.unsubscribe"
	MethodStateGet             Method = "state.get"
	MethodStateListCheckpoints Method = "state.listCheckpoints"
	MethodStateFork            Method = "state.fork"
	MethodAgentGetTree         Method = "agent.getTree"
)

// Event methods.
const (
	EventLifecycle      Method = "lifecycle"
	EventValues         Method = "values"
	EventUpdates        Method = "updates"
	EventMessages       Method = "messages"
	EventTools          Method = "tools"
	EventCustom         Method = "custom"
	EventTasks          Method = "tasks"
	EventCheckpoints    Method = "checkpoints"
	EventInputRequested Method = "input.requested"
)

// Channel names what a subscription asks for; an event belongs to one channel (ChannelOf).
type Channel = string

// The channels; a custom channel may also be named "custom:<name>".
const (
	ChannelValues      Channel = "values"
	ChannelUpdates     Channel = "updates"
	ChannelMessages    Channel = "messages"
	ChannelTools       Channel = "tools"
	ChannelLifecycle   Channel = "lifecycle"
	ChannelInput       Channel = "input"
	ChannelCheckpoints Channel = "checkpoints"
	ChannelTasks       Channel = "tasks"
	ChannelCustom      Channel = "custom"
)

// Channels lists every channel, for validation and the OpenAPI document.
var Channels = []Channel{ChannelValues, ChannelUpdates, ChannelMessages, ChannelTools, ChannelLifecycle,
	ChannelInput, ChannelCheckpoints, ChannelTasks, ChannelCustom}

// Lifecycle states (LifecycleData.Event).
const (
	StatusRunning     = "running"
	StatusCompleted   = "completed"
	StatusFailed      = "failed"
	StatusInterrupted = "interrupted"
)

// Error codes of an ErrorResponse.
const (
	ErrInvalidArgument    = "invalid_argument"
	ErrUnknownCommand     = "unknown_command"
	ErrUnknownError       = "unknown_error"
	ErrNoSuchSubscription = "no_such_subscription"
	ErrNoSuchInterrupt    = "no_such_interrupt"
	ErrNotSupported       = "not_supported"
)

// Message types (the "type" field of what the server sends).
const (
	TypeSuccess = "success"
	TypeError   = "error"
	TypeEvent   = "event"
)

// Command is one command a client sends: {id, method, params}.
type Command struct {
	ID     *uint64         `json:"id"`
	Method Method          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// Response answers a command: a success with its result, or an error with its code.
type Response struct {
	Type    string `json:"type"`
	ID      uint64 `json:"id"`
	Result  any    `json:"result,omitempty"`
	Error   string `json:"error,omitempty"`
	Message string `json:"message,omitempty"`
}

// Success is the response of a command that did what it was asked.
func Success(id uint64, result any) Response {
	if result == nil {
		result = struct{}{}
	}
	return Response{Type: TypeSuccess, ID: id, Result: result}
}

// Failure is the response of a command that failed with code.
func Failure(id uint64, code, message string) Response {
	return Response{Type: TypeError, ID: id, Error: code, Message: message}
}

// Event is one event of a thread's stream.
type Event struct {
	Type    string      `json:"type"`
	EventID string      `json:"event_id"`
	Seq     uint64      `json:"seq"`
	Method  Method      `json:"method"`
	Params  EventParams `json:"params"`
}

// EventParams are an event's namespace (the subgraph path, [] at the root), time (Unix ms),
// run, node where one applies, and data, whose shape depends on the method.
type EventParams struct {
	Namespace []string `json:"namespace"`
	Timestamp int64    `json:"timestamp"`
	RunID     string   `json:"run_id,omitempty"`
	Node      string   `json:"node,omitempty"`
	Data      any      `json:"data"`
}

// RunStartParams are run.start's parameters.
type RunStartParams struct {
	AssistantID       string         `json:"assistant_id"`
	Input             any            `json:"input"`
	Config            map[string]any `json:"config"`
	Metadata          map[string]any `json:"metadata"`
	MultitaskStrategy string         `json:"multitask_strategy"`
}

// RunResult is run.start's and input.respond's result.
type RunResult struct {
	RunID string `json:"run_id"`
}

// InputResponse answers one interrupt.
type InputResponse struct {
	Namespace   []string `json:"namespace"`
	InterruptID string   `json:"interrupt_id"`
	Response    any      `json:"response"`
}

// InputRespondParams are input.respond's parameters: one interrupt answered (InterruptID set)
// or several (Responses).
type InputRespondParams struct {
	InputResponse
	Responses []InputResponse `json:"responses"`
	Update    map[string]any  `json:"update"`
	Goto      any             `json:"goto"`
	Config    map[string]any  `json:"config"`
	Metadata  map[string]any  `json:"metadata"`
}

// StateGetParams are state.get's parameters.
type StateGetParams struct {
	Namespace []string `json:"namespace"`
	Keys      []string `json:"keys"`
}

// CheckpointRef names a checkpoint.
type CheckpointRef struct {
	ID string `json:"id"`
	NS string `json:"ns,omitempty"`
}

// StateGetResult is state.get's result.
type StateGetResult struct {
	Values     map[string]any `json:"values"`
	Checkpoint *CheckpointRef `json:"checkpoint,omitempty"`
}

// SubscribeResult is subscription.subscribe's result.
type SubscribeResult struct {
	SubscriptionID string `json:"subscription_id"`
}

// UnsubscribeParams are subscription.unsubscribe's parameters.
type UnsubscribeParams struct {
	SubscriptionID string `json:"subscription_id"`
}
