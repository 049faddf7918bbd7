package a2a

import (
	"net/http"
	"strconv"
	"strings"
)

// The endpoint speaks two versions of A2A's JSON-RPC binding on the same URL: 0.3 (slash
// method names, "kind"-tagged objects, lower-case states) and 1.0 (PascalCase method names,
// ProtoJSON shapes: oneof fields instead of kinds, SCREAMING_SNAKE_CASE enums). The method
// name a request calls tells which one the client speaks; the answer is in the same. The
// A2A-Version header (or query parameter) a client sends must name one of the two.

// version is a version of the A2A protocol the endpoint speaks.
type version int

const (
	v03 version = iota
	v10
)

// The protocol versions as A2A-Version and the agent card spell them.
const (
	versionText03 = "0.3"
	versionText10 = "1.0"
)

// headerVersion is the header (and query parameter) that names the client's A2A version.
const headerVersion = "A2A-Version"

// bindingJSONRPC is the protocol binding the endpoint serves.
const bindingJSONRPC = "JSONRPC"

// operation is what a method does, whatever its version's name for it.
type operation int

const (
	opSend operation = iota + 1
	opStream
	opGet
	opCancel
	opList
	opSubscribe
	opPushConfig
	opExtendedCard
)

// streaming reports whether op answers with an event stream.
func (op operation) streaming() bool { return op == opStream || op == opSubscribe }

// method is a JSON-RPC method: its operation and the version whose name it is.
type method struct {
	op operation
	v  version
}

// methods are the JSON-RPC methods of both versions.
var methods = map[string]method{
	MethodSend:                            {opSend, v03},
	MethodStream:                          {opStream, v03},
	MethodGetTask:                         {opGet, v03},
	MethodCancel:                          {opCancel, v03},
	MethodListTasks:                       {opList, v03},
	"tasks/resubscribe":                   {opSubscribe, v03},
	"tasks/pushNotificationConfig/set":    {opPushConfig, v03},
	"tasks/pushNotificationConfig/get":    {opPushConfig, v03},
	"tasks/pushNotificationConfig/list":   {opPushConfig, v03},
	"tasks/pushNotificationConfig/delete": {opPushConfig, v03},
	"agent/getAuthenticatedExtendedCard":  {opExtendedCard, v03},

	"SendMessage":                      {opSend, v10},
	"SendStreamingMessage":             {opStream, v10},
	"GetTask":                          {opGet, v10},
	"CancelTask":                       {opCancel, v10},
	"ListTasks":                        {opList, v10},
	"SubscribeToTask":                  {opSubscribe, v10},
	"CreateTaskPushNotificationConfig": {opPushConfig, v10},
	"GetTaskPushNotificationConfig":    {opPushConfig, v10},
	"ListTaskPushNotificationConfigs":  {opPushConfig, v10},
	"DeleteTaskPushNotificationConfig": {opPushConfig, v10},
	"GetExtendedAgentCard":             {opExtendedCard, v10},
}

// askedVersion is the A2A version request r names (A2A-Version header, else query parameter):
// its major and minor numbers; "" (0.3, as the specification says of no version) when none.
func askedVersion(r *http.Request) string {
	v := strings.TrimSpace(r.Header.Get(headerVersion))
	if v == "" {
		v = strings.TrimSpace(r.URL.Query().Get(headerVersion))
	}
	return v
}

// parseVersion reads a version "major.minor[.patch]" as the version the endpoint speaks:
// ok false for one it does not (the patch number never matters).
func parseVersion(s string) (version, bool) {
	if s == "" {
		return v03, true
	}
	parts := strings.SplitN(s, ".", 3)
	major, err := strconv.Atoi(parts[0])
	if err != nil {
		return v03, false
	}
	minor := 0
	if len(parts) > 1 {
		if minor, err = strconv.Atoi(parts[1]); err != nil {
			return v03, false
		}
	}
	switch {
	case major == 0 && minor == 3:
		return v03, true
	case major == 1 && minor == 0:
		return v10, true
	}
	return v03, false
}

// versionNotSupported is the error of a request for a version the endpoint does not speak.
func versionNotSupported(asked string) *RPCError {
	return &RPCError{Code: CodeVersionNotSupported, Message: "A2A version " + Sanitize(asked) +
		" is not supported: this agent speaks " + versionText03 + " and " + versionText10}
}

// The task states and roles as 1.0 spells them.
var (
	statesV1 = map[TaskState]string{
		StateSubmitted:     "TASK_STATE_SUBMITTED",
		StateWorking:       "TASK_STATE_WORKING",
		StateInputRequired: "TASK_STATE_INPUT_REQUIRED",
		StateCompleted:     "TASK_STATE_COMPLETED",
		StateCanceled:      "TASK_STATE_CANCELED",
		StateFailed:        "TASK_STATE_FAILED",
	}
	rolesV1 = map[string]string{RoleUser: "ROLE_USER", RoleAgent: "ROLE_AGENT"}
)

// wireState is state s as version v spells it.
func wireState(s TaskState, v version) string {
	if v == v10 {
		return statesV1[s]
	}
	return string(s)
}

// readState is the state version v's spelling s names; ok false for no state.
func readState(s string, v version) (TaskState, bool) {
	for st, name := range statesV1 {
		if v == v10 && s == name || v == v03 && s == string(st) {
			return st, true
		}
	}
	return "", false
}

// stateNames lists the task states as version v spells them, for an error message.
func stateNames(v version) string {
	order := []TaskState{StateSubmitted, StateWorking, StateInputRequired, StateCompleted, StateCanceled, StateFailed}
	names := make([]string, len(order))
	for i, s := range order {
		names[i] = wireState(s, v)
	}
	return strings.Join(names, ", ")
}

// interfaces are the endpoints of the assistant at url: its JSON-RPC binding in 1.0 and 0.3.
func interfaces(url string) []AgentInterface {
	return []AgentInterface{
		{URL: url, ProtocolBinding: bindingJSONRPC, ProtocolVersion: versionText10},
		{URL: url, ProtocolBinding: bindingJSONRPC, ProtocolVersion: versionText03},
	}
}
