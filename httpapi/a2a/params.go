package a2a

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/jetgraph/jetgraph/httpapi"
)

// The checks of params: each method's params decode into typed structs, and what is wrong is
// listed in full in one invalid-params error (data: the problems, each with its location).

// invalidParams is the error of params with problems.
func invalidParams(problems []Problem) *RPCError {
	msgs := make([]string, len(problems))
	for i, p := range problems {
		msgs[i] = locString(p.Loc) + ": " + p.Msg
	}
	return &RPCError{Code: CodeInvalidParams, Message: "Invalid params: " + strings.Join(msgs, "; "), Data: problems}
}

// locString is a location as a dotted path ("message.parts[0].text").
func locString(loc []any) string {
	var b strings.Builder
	for i, l := range loc {
		switch v := l.(type) {
		case int:
			fmt.Fprintf(&b, "[%d]", v)
		default:
			if i > 0 {
				b.WriteByte('.')
			}
			fmt.Fprint(&b, v)
		}
	}
	return b.String()
}

// decodeParams decodes raw params (an object: readRequest checked it) into v, strictly typed:
// a field of the wrong type is a problem named by its field.
func decodeParams(raw json.RawMessage, v any) *RPCError {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return invalidParams([]Problem{{Loc: []any{"params"}, Msg: "params are required"}})
	}
	if err := json.Unmarshal(raw, v); err != nil {
		loc := []any{"params"}
		var te *json.UnmarshalTypeError
		msg := "params do not decode"
		if asType(err, &te) {
			if te.Field != "" {
				for _, f := range strings.Split(te.Field, ".") {
					loc = append(loc, f)
				}
			}
			msg = "must be of type " + te.Type.String() + ", not " + te.Value
		}
		return invalidParams([]Problem{{Loc: loc, Msg: msg}})
	}
	return nil
}

// asType is errors.As for the one error type json.Unmarshal reports about types.
func asType(err error, target **json.UnmarshalTypeError) bool {
	te, ok := err.(*json.UnmarshalTypeError)
	if ok {
		*target = te
	}
	return ok
}

// checkMessage lists what is wrong with the message of a send: its messageId, role and parts
// (each a text, data or file part with its content), and its ids (contextId and taskId are
// thread and run ids: UUIDs).
func checkMessage(m *Message, v version) []Problem {
	if m == nil {
		return []Problem{{Loc: []any{"params", "message"}, Msg: "message is required"}}
	}
	at := func(rest ...any) []any { return append([]any{"params", "message"}, rest...) }
	var ps []Problem
	if m.Kind != "" && m.Kind != KindMessage {
		ps = append(ps, Problem{Loc: at("kind"), Msg: `kind must be "message"`})
	}
	if strings.TrimSpace(m.MessageID) == "" {
		ps = append(ps, Problem{Loc: at("messageId"), Msg: "messageId is required"})
	}
	if m.Role != RoleUser && m.Role != RoleAgent {
		ps = append(ps, Problem{Loc: at("role"), Msg: "role must be " + roleNames(v)})
	}
	if len(m.Parts) == 0 {
		ps = append(ps, Problem{Loc: at("parts"), Msg: "parts must hold at least one part"})
	}
	for i, p := range m.Parts {
		switch p.Kind {
		case KindText:
			if p.Text == "" {
				ps = append(ps, Problem{Loc: at("parts", i, "text"), Msg: "a text part needs a non-empty text"})
			}
		case KindData:
			if p.Data == nil {
				ps = append(ps, Problem{Loc: at("parts", i, "data"), Msg: "a data part needs a data object"})
			}
		case KindFile:
			if p.File == nil || (p.File.Bytes == "" && p.File.URI == "") {
				ps = append(ps, Problem{Loc: at("parts", i, "file"), Msg: "a file part needs a file with bytes or uri"})
			}
		default:
			if v == v10 {
				ps = append(ps, Problem{Loc: at("parts", i), Msg: "a part needs one of text, raw, url or data"})
				continue
			}
			ps = append(ps, Problem{Loc: at("parts", i, "kind"), Msg: `kind must be "text", "data" or "file"`})
		}
	}
	for _, f := range []struct {
		name string
		v    *string
	}{{"contextId", &m.ContextID}, {"taskId", &m.TaskID}} {
		if *f.v == "" {
			continue
		}
		id, err := httpapi.ParseUUID(*f.v)
		if err != nil {
			ps = append(ps, Problem{Loc: at(f.name), Msg: f.name + " must be a UUID (one this agent returned)"})
		}
		*f.v = id
	}
	return ps
}

// checkTaskID lists what is wrong with the task id of tasks/get and tasks/cancel, and makes
// it canonical.
func checkTaskID(id *string) []Problem {
	if *id == "" {
		return []Problem{{Loc: []any{"params", "id"}, Msg: "id is required"}}
	}
	canon, err := httpapi.ParseUUID(*id)
	if err != nil {
		return []Problem{{Loc: []any{"params", "id"}, Msg: "id must be a task id (a UUID)"}}
	}
	*id = canon
	return nil
}

// checkHistoryLength lists what is wrong with a historyLength.
func checkHistoryLength(n *int, loc ...any) []Problem {
	if n != nil && *n < 0 {
		return []Problem{{Loc: loc, Msg: "historyLength must be 0 or more"}}
	}
	return nil
}
