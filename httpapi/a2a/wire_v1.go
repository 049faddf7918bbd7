package a2a

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// The wire shapes of A2A 1.0's JSON-RPC binding (ProtoJSON of the specification's a2a.proto),
// and their translation to and from the endpoint's own (0.3's) shapes: what a 1.0 client sends
// is read into the shapes the methods take, and what they answer written in 1.0's.

// partV1 is a 1.0 part: exactly one of text, raw (base64 bytes), url and data (any JSON value).
type partV1 struct {
	Text      *string         `json:"text,omitempty"`
	Raw       *string         `json:"raw,omitempty"`
	URL       *string         `json:"url,omitempty"`
	Data      json.RawMessage `json:"data,omitempty"`
	Metadata  map[string]any  `json:"metadata,omitempty"`
	Filename  string          `json:"filename,omitempty"`
	MediaType string          `json:"mediaType,omitempty"`
}

// messageV1 is a 1.0 message; its role is ROLE_USER or ROLE_AGENT.
type messageV1 struct {
	MessageID        string         `json:"messageId"`
	ContextID        string         `json:"contextId,omitempty"`
	TaskID           string         `json:"taskId,omitempty"`
	Role             string         `json:"role"`
	Parts            []partV1       `json:"parts"`
	Metadata         map[string]any `json:"metadata,omitempty"`
	Extensions       []string       `json:"extensions,omitempty"`
	ReferenceTaskIDs []string       `json:"referenceTaskIds,omitempty"`
}

// sendParamsV1 are the params of SendMessage and SendStreamingMessage.
type sendParamsV1 struct {
	Tenant        string     `json:"tenant"`
	Message       *messageV1 `json:"message"`
	Configuration *struct {
		AcceptedOutputModes        []string        `json:"acceptedOutputModes"`
		TaskPushNotificationConfig json.RawMessage `json:"taskPushNotificationConfig"`
		HistoryLength              *int            `json:"historyLength"`
		ReturnImmediately          bool            `json:"returnImmediately"`
	} `json:"configuration"`
	Metadata map[string]any `json:"metadata"`
}

// statusV1 is a 1.0 task status.
type statusV1 struct {
	State     string     `json:"state"`
	Message   *messageV1 `json:"message,omitempty"`
	Timestamp string     `json:"timestamp,omitempty"`
}

// artifactV1 is a 1.0 artifact.
type artifactV1 struct {
	ArtifactID  string         `json:"artifactId"`
	Name        string         `json:"name,omitempty"`
	Description string         `json:"description,omitempty"`
	Parts       []partV1       `json:"parts"`
	Metadata    map[string]any `json:"metadata,omitempty"`
}

// taskV1 is a 1.0 task.
type taskV1 struct {
	ID        string         `json:"id"`
	ContextID string         `json:"contextId"`
	Status    statusV1       `json:"status"`
	Artifacts []artifactV1   `json:"artifacts,omitempty"`
	History   []messageV1    `json:"history,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

// statusUpdateV1 and artifactUpdateV1 are 1.0's stream events (the stream's end is the end of
// the events: 1.0 has no final flag).
type statusUpdateV1 struct {
	TaskID    string   `json:"taskId"`
	ContextID string   `json:"contextId"`
	Status    statusV1 `json:"status"`
}

type artifactUpdateV1 struct {
	TaskID    string     `json:"taskId"`
	ContextID string     `json:"contextId"`
	Artifact  artifactV1 `json:"artifact"`
	Append    bool       `json:"append"`
	LastChunk bool       `json:"lastChunk"`
}

// listResultV1 is the answer of ListTasks.
type listResultV1 struct {
	Tasks         []taskV1 `json:"tasks"`
	NextPageToken string   `json:"nextPageToken"`
	PageSize      int      `json:"pageSize"`
	TotalSize     int      `json:"totalSize"`
}

// decodeSend reads the params of a send in version v's wire into the methods' shape; start
// checks them, for both versions alike (a 1.0 part without content has no kind).
func decodeSend(raw json.RawMessage, v version) (sendParams, *RPCError) {
	var p sendParams
	if v == v03 {
		return p, decodeParams(raw, &p)
	}
	var in sendParamsV1
	if rerr := decodeParams(raw, &in); rerr != nil {
		return p, rerr
	}
	p.Metadata = in.Metadata
	if c := in.Configuration; c != nil {
		blocking := !c.ReturnImmediately
		p.Configuration = &sendConfiguration{AcceptedOutputModes: c.AcceptedOutputModes, HistoryLength: c.HistoryLength,
			Blocking: &blocking, PushNotificationConfig: c.TaskPushNotificationConfig}
	}
	if in.Message == nil {
		return p, nil
	}
	m := in.Message
	p.Message = &Message{MessageID: m.MessageID, ContextID: m.ContextID, TaskID: m.TaskID, Role: m.Role, Metadata: m.Metadata}
	for role, name := range rolesV1 {
		if m.Role == name {
			p.Message.Role = role
		}
	}
	for _, part := range m.Parts {
		p.Message.Parts = append(p.Message.Parts, partFromV1(part))
	}
	return p, nil
}

// partFromV1 is a 1.0 part in the endpoint's shape: without a kind when it has no content; a
// data part whose value is not an object keeps a nil Data. The checks refuse both.
func partFromV1(p partV1) Part {
	out := Part{Metadata: p.Metadata}
	switch {
	case p.Text != nil:
		out.Kind, out.Text = KindText, *p.Text
	case p.Raw != nil:
		out.Kind, out.File = KindFile, &FilePart{Name: p.Filename, MimeType: p.MediaType, Bytes: *p.Raw}
	case p.URL != nil:
		out.Kind, out.File = KindFile, &FilePart{Name: p.Filename, MimeType: p.MediaType, URI: *p.URL}
	case len(p.Data) > 0 && !bytes.Equal(bytes.TrimSpace(p.Data), []byte("null")):
		out.Kind = KindData
		_ = json.Unmarshal(p.Data, &out.Data)
	}
	return out
}

// encodeResult is the result of a method in version v's wire: a send's task wrapped as
// SendMessageResponse, tasks and listings in 1.0's shapes.
func encodeResult(result any, op operation, v version) any {
	if v == v03 || result == nil {
		return result
	}
	switch r := result.(type) {
	case Task:
		if op == opSend {
			return map[string]any{"task": taskToV1(r)}
		}
		return taskToV1(r)
	case listResult:
		out := listResultV1{Tasks: make([]taskV1, len(r.Tasks)), NextPageToken: r.NextPageToken, PageSize: r.PageSize, TotalSize: r.TotalSize}
		for i, t := range r.Tasks {
			out.Tasks[i] = taskToV1(t)
		}
		return out
	}
	return result
}

// encodeEvent is a stream event in version v's wire: 1.0 wraps it as a StreamResponse.
func encodeEvent(event any, v version) any {
	if v == v03 || event == nil {
		return event
	}
	switch e := event.(type) {
	case Task:
		return map[string]any{"task": taskToV1(e)}
	case StatusUpdate:
		return map[string]any{"statusUpdate": statusUpdateV1{TaskID: e.TaskID, ContextID: e.ContextID, Status: statusToV1(e.Status)}}
	case ArtifactUpdate:
		return map[string]any{"artifactUpdate": artifactUpdateV1{TaskID: e.TaskID, ContextID: e.ContextID,
			Artifact: artifactToV1(e.Artifact), LastChunk: e.LastChunk}}
	}
	return event
}

// encodeError is an error in version v's wire: 1.0 gives the problems of invalid params as a
// google.rpc.BadRequest detail (each problem a field violation).
func encodeError(e *RPCError, v version) *RPCError {
	if e == nil || v == v03 {
		return e
	}
	ps, ok := e.Data.([]Problem)
	if !ok {
		return e
	}
	violations := make([]map[string]string, len(ps))
	for i, p := range ps {
		loc := p.Loc
		if len(loc) > 0 && loc[0] == "params" {
			loc = loc[1:]
		}
		violations[i] = map[string]string{"field": locString(loc), "description": p.Msg}
	}
	out := *e
	out.Data = []map[string]any{{"@type": "type.googleapis.com/google.rpc.BadRequest", "fieldViolations": violations}}
	return &out
}

func taskToV1(t Task) taskV1 {
	out := taskV1{ID: t.ID, ContextID: t.ContextID, Status: statusToV1(t.Status), Metadata: t.Metadata}
	for _, a := range t.Artifacts {
		out.Artifacts = append(out.Artifacts, artifactToV1(a))
	}
	for _, m := range t.History {
		out.History = append(out.History, messageToV1(m))
	}
	return out
}

func statusToV1(s TaskStatus) statusV1 {
	out := statusV1{State: wireState(s.State, v10), Timestamp: s.Timestamp}
	if s.Message != nil {
		m := messageToV1(*s.Message)
		out.Message = &m
	}
	return out
}

func artifactToV1(a Artifact) artifactV1 {
	return artifactV1{ArtifactID: a.ArtifactID, Name: a.Name, Description: a.Description, Parts: partsToV1(a.Parts), Metadata: a.Metadata}
}

func messageToV1(m Message) messageV1 {
	return messageV1{MessageID: m.MessageID, ContextID: m.ContextID, TaskID: m.TaskID, Role: rolesV1[m.Role],
		Parts: partsToV1(m.Parts), Metadata: m.Metadata}
}

// partsToV1 are parts in 1.0's shape: a data part's data is its object, with its media type.
func partsToV1(parts []Part) []partV1 {
	out := make([]partV1, 0, len(parts))
	for _, p := range parts {
		q := partV1{Metadata: p.Metadata}
		switch p.Kind {
		case KindText:
			text := p.Text
			q.Text = &text
		case KindData:
			raw, err := json.Marshal(p.Data)
			if err != nil {
				raw = []byte(fmt.Sprintf("%q", err.Error()))
			}
			q.Data, q.MediaType = raw, "application/json"
		case KindFile:
			if p.File != nil {
				q.Filename, q.MediaType = p.File.Name, p.File.MimeType
				if p.File.URI != "" {
					uri := p.File.URI
					q.URL = &uri
				} else {
					raw := p.File.Bytes
					q.Raw = &raw
				}
			}
		}
		out = append(out, q)
	}
	return out
}

// roleNames lists the roles as version v spells them, for an error message.
func roleNames(v version) string {
	if v == v10 {
		return strings.Join([]string{rolesV1[RoleUser], rolesV1[RoleAgent]}, " or ")
	}
	return `"user" or "agent"`
}
