package a2a

import "encoding/json"

// The wire shapes of A2A's JSON-RPC binding (protocol 0.3, the one @a2a-js/sdk 0.3 and
// LangGraph's Agent Server speak), typed: map[string]any only where A2A itself is open
// (metadata, data parts).

// ProtocolVersion is the A2A version the 0.3 agent card declares.
const ProtocolVersion = "0.3.0"

// JSON-RPC methods of A2A 0.3.
const (
	MethodSend      = "message/send"
	MethodStream    = "message/stream"
	MethodGetTask   = "tasks/get"
	MethodCancel    = "tasks/cancel"
	MethodListTasks = "tasks/list"
)

// JSON-RPC 2.0 and A2A error codes.
const (
	CodeParseError            = -32700
	CodeInvalidRequest        = -32600
	CodeMethodNotFound        = -32601
	CodeInvalidParams         = -32602
	CodeInternal              = -32603
	CodeTaskNotFound          = -32001
	CodeTaskNotCancelable     = -32002
	CodePushNotSupported      = -32003
	CodeUnsupportedOperation  = -32004
	CodeContentTypeNotSupport = -32005
	CodeVersionNotSupported   = -32009
)

// TaskState is the state of an A2A task.
type TaskState string

// The task states jetgraph's runs map to.
const (
	StateSubmitted     TaskState = "submitted"
	StateWorking       TaskState = "working"
	StateInputRequired TaskState = "input-required"
	StateCompleted     TaskState = "completed"
	StateCanceled      TaskState = "canceled"
	StateFailed        TaskState = "failed"
)

// Roles of a message's sender.
const (
	RoleUser  = "user"
	RoleAgent = "agent"
)

// Kinds of parts, and of the objects results carry.
const (
	KindText           = "text"
	KindData           = "data"
	KindFile           = "file"
	KindMessage        = "message"
	KindTask           = "task"
	KindStatusUpdate   = "status-update"
	KindArtifactUpdate = "artifact-update"
)

// request is a JSON-RPC request as received: ID is kept raw (a string, a number or null) to be
// echoed as it came.
type request struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
}

// response is a JSON-RPC response: exactly one of Result and Error is set.
type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *RPCError       `json:"error,omitempty"`
}

// RPCError is a JSON-RPC error object. Data, for invalid params, lists every problem found.
type RPCError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func (e *RPCError) Error() string { return e.Message }

// Problem is one thing wrong with a request's params: where (a path into params) and what.
type Problem struct {
	Loc []any  `json:"loc"`
	Msg string `json:"msg"`
}

// Part is one piece of a message or artifact: text, structured data, or a file.
type Part struct {
	Kind     string         `json:"kind"`
	Text     string         `json:"text,omitempty"`
	Data     map[string]any `json:"data,omitempty"`
	File     *FilePart      `json:"file,omitempty"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

// FilePart is a file's content (base64 bytes) or location (uri).
type FilePart struct {
	Name     string `json:"name,omitempty"`
	MimeType string `json:"mimeType,omitempty"`
	Bytes    string `json:"bytes,omitempty"`
	URI      string `json:"uri,omitempty"`
}

// Message is one turn of a conversation.
type Message struct {
	Kind      string         `json:"kind"`
	MessageID string         `json:"messageId"`
	Role      string         `json:"role"`
	Parts     []Part         `json:"parts"`
	ContextID string         `json:"contextId,omitempty"`
	TaskID    string         `json:"taskId,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

// TaskStatus is where a task is, with the agent's message about it.
type TaskStatus struct {
	State     TaskState `json:"state"`
	Message   *Message  `json:"message,omitempty"`
	Timestamp string    `json:"timestamp,omitempty"`
}

// Artifact is an output of a task.
type Artifact struct {
	ArtifactID  string         `json:"artifactId"`
	Name        string         `json:"name,omitempty"`
	Description string         `json:"description,omitempty"`
	Parts       []Part         `json:"parts"`
	Metadata    map[string]any `json:"metadata,omitempty"`
}

// Task is one run of the assistant, in the context (thread) it ran on.
type Task struct {
	Kind      string         `json:"kind"`
	ID        string         `json:"id"`
	ContextID string         `json:"contextId"`
	Status    TaskStatus     `json:"status"`
	Artifacts []Artifact     `json:"artifacts,omitempty"`
	History   []Message      `json:"history,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

// StatusUpdate is a stream's news of a task's state; Final marks the stream's last event.
type StatusUpdate struct {
	Kind      string     `json:"kind"`
	TaskID    string     `json:"taskId"`
	ContextID string     `json:"contextId"`
	Status    TaskStatus `json:"status"`
	Final     bool       `json:"final"`
}

// ArtifactUpdate is a stream's news of an artifact of a task.
type ArtifactUpdate struct {
	Kind      string   `json:"kind"`
	TaskID    string   `json:"taskId"`
	ContextID string   `json:"contextId"`
	Artifact  Artifact `json:"artifact"`
	LastChunk bool     `json:"lastChunk"`
}

// sendParams are the params of message/send and message/stream.
type sendParams struct {
	Message       *Message           `json:"message"`
	Configuration *sendConfiguration `json:"configuration"`
	Metadata      map[string]any     `json:"metadata"`
}

// sendConfiguration is what a client asks of a send.
type sendConfiguration struct {
	AcceptedOutputModes    []string        `json:"acceptedOutputModes"`
	HistoryLength          *int            `json:"historyLength"`
	Blocking               *bool           `json:"blocking"`
	PushNotificationConfig json.RawMessage `json:"pushNotificationConfig"`
}

// taskQuery are the params of tasks/get and tasks/cancel.
type taskQuery struct {
	ID            string `json:"id"`
	HistoryLength *int   `json:"historyLength"`
}

// listParams are the params of a task listing (the same fields in 0.3 and 1.0; Status is the
// state as the wire spells it).
type listParams struct {
	ContextID            string `json:"contextId"`
	Status               string `json:"status"`
	StatusTimestampAfter string `json:"statusTimestampAfter"`
	PageSize             *int   `json:"pageSize"`
	PageToken            string `json:"pageToken"`
	HistoryLength        *int   `json:"historyLength"`
	IncludeArtifacts     bool   `json:"includeArtifacts"`
}

// listResult is the answer of tasks/list; NextPageToken is "" on the last page.
type listResult struct {
	Tasks         []Task `json:"tasks"`
	NextPageToken string `json:"nextPageToken"`
	PageSize      int    `json:"pageSize"`
	TotalSize     int    `json:"totalSize"`
}

// AgentCard describes an assistant to A2A clients. The 0.3 card has protocolVersion, url and
// preferredTransport; the 1.0 card names its endpoints in supportedInterfaces instead. The 0.3
// card lists the interfaces too, so that a 1.0 client that asks for no version finds its own.
type AgentCard struct {
	ProtocolVersion     string           `json:"protocolVersion,omitempty"`
	Name                string           `json:"name"`
	Description         string           `json:"description"`
	URL                 string           `json:"url,omitempty"`
	PreferredTransport  string           `json:"preferredTransport,omitempty"`
	SupportedInterfaces []AgentInterface `json:"supportedInterfaces"`
	Version             string           `json:"version"`
	Capabilities        Capabilities     `json:"capabilities"`
	DefaultInputModes   []string         `json:"defaultInputModes"`
	DefaultOutputModes  []string         `json:"defaultOutputModes"`
	Skills              []Skill          `json:"skills"`
}

// AgentInterface is one endpoint of an agent: where, its binding and its protocol version.
type AgentInterface struct {
	URL             string `json:"url"`
	ProtocolBinding string `json:"protocolBinding"`
	ProtocolVersion string `json:"protocolVersion"`
}

// Capabilities are the optional features of A2A the endpoint has (stateTransitionHistory is
// 0.3's, extendedAgentCard 1.0's).
type Capabilities struct {
	Streaming              bool  `json:"streaming"`
	PushNotifications      bool  `json:"pushNotifications"`
	StateTransitionHistory *bool `json:"stateTransitionHistory,omitempty"`
	ExtendedAgentCard      *bool `json:"extendedAgentCard,omitempty"`
}

// Skill is what an assistant can do: its graph.
type Skill struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Tags        []string `json:"tags"`
}

// The media types of the parts the endpoint takes and gives: text parts and data parts.
var contentModes = []string{"text/plain", "application/json"}
