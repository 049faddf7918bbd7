// Package a2a serves every assistant as an agent of the Agent2Agent protocol (A2A) at
// /a2a/{assistant_id}: JSON-RPC 2.0 message/send, message/stream (server-sent events),
// tasks/get, tasks/cancel and tasks/list, and the agent card at
// /a2a/{assistant_id}/.well-known/agent-card.json. As on LangGraph's Agent Server, a context is a
// thread (made on its first message), a task is a run, the message becomes the graph's input
// (its messages list), the run's output messages the task's artifact, and an interrupt the
// task state input-required, which the next message on the task (or a command) resumes.
//
// The handlers hold no business rules: they translate between A2A and the runtime's services,
// reached through the small interfaces below.
package a2a

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/engine/runs"
)

// Assistants finds the assistant an endpoint serves (*assistants.Service is one).
type Assistants interface {
	// Get returns the assistant idOrGraph names (an assistant id, or a graph id for its system
	// assistant).
	Get(ctx context.Context, idOrGraph string) (engine.Assistant, error)
}

// Runs creates, waits for, reads and cancels runs (*runs.Service is one).
type Runs interface {
	Create(ctx context.Context, c runs.Create) (engine.RunRecord, error)
	WaitEnd(ctx context.Context, rec engine.RunRecord) (engine.RunRecord, graph.State, error)
	Get(ctx context.Context, thread, run string) (engine.RunRecord, error)
	GetByID(ctx context.Context, run string) (engine.RunRecord, error)
	List(ctx context.Context, thread, status string, limit, offset int) ([]engine.RunRecord, error)
	Cancel(ctx context.Context, thread, run, action string, wait bool) error
}

// States reads a thread's state (*runner.Runner is one): a task's artifacts and interrupts.
type States interface {
	State(ctx context.Context, ref graph.Ref, subgraphs bool) (*graph.Snapshot, error)
}

// Threads finds the threads of an assistant, for tasks/list (*threads.Service is one).
type Threads interface {
	Search(ctx context.Context, q engine.ThreadQuery) ([]engine.Thread, int, error)
}

// Deps are the services the A2A endpoint drives.
type Deps struct {
	Assistants Assistants
	Runs       Runs
	States     States
	Threads    Threads
	Logger     *slog.Logger
}

// Handlers serve A2A; Mount registers them on the server (httpapi.Deps.A2A).
type Handlers struct {
	d Deps
}

// New returns the A2A handlers over d.
func New(d Deps) *Handlers {
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	return &Handlers{d: d}
}

// Mount registers /a2a/{assistant_id} and its agent card on e.
func (h *Handlers) Mount(e *echo.Echo) {
	e.POST("/a2a/:assistant_id", h.rpc)
	e.GET("/a2a/:assistant_id/.well-known/agent-card.json", h.card)
}

// card answers the agent card of the assistant the path names, in the version the client asks
// for (A2A-Version: 1.0 gets the 1.0 card; none, 0.3). Its url is the endpoint as the client
// reached it: https when a proxy in front says so (x-forwarded-proto).
func (h *Handlers) card(c echo.Context) error {
	a, err := h.d.Assistants.Get(c.Request().Context(), c.Param("assistant_id"))
	if err != nil {
		return err
	}
	desc := "An agent served by jetgraph (graph " + a.GraphID + ")"
	if a.Description != nil && *a.Description != "" {
		desc = *a.Description
	}
	name := a.Name
	if name == "" {
		name = a.GraphID
	}
	url := endpointURL(c.Request(), c.Param("assistant_id"))
	no := false
	card := AgentCard{
		Name:                name,
		Description:         desc,
		SupportedInterfaces: interfaces(url),
		Version:             versionOf(a),
		Capabilities:        Capabilities{Streaming: true, ExtendedAgentCard: &no},
		DefaultInputModes:   contentModes,
		DefaultOutputModes:  contentModes,
		Skills: []Skill{{ID: a.GraphID, Name: name, Description: desc,
			Tags: []string{"langgraph", a.GraphID}}},
	}
	if v, _ := parseVersion(askedVersion(c.Request())); v == v03 {
		card.ProtocolVersion, card.URL, card.PreferredTransport = ProtocolVersion, url, bindingJSONRPC
		card.Capabilities = Capabilities{Streaming: true, StateTransitionHistory: &no}
	}
	return c.JSON(http.StatusOK, card)
}

// versionOf is the assistant's version as the card's version string.
func versionOf(a engine.Assistant) string {
	b, _ := json.Marshal(a.Version)
	return string(b)
}

// endpointURL is the URL of the A2A endpoint of assistant id as the client reached the server.
func endpointURL(r *http.Request, id string) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if p := r.Header.Get("X-Forwarded-Proto"); p != "" {
		scheme = strings.ToLower(strings.TrimSpace(strings.Split(p, ",")[0]))
	}
	host := r.Host
	if fh := r.Header.Get("X-Forwarded-Host"); fh != "" {
		host = strings.TrimSpace(strings.Split(fh, ",")[0])
	}
	return scheme + "://" + host + "/a2a/" + id
}

// rpc answers one JSON-RPC request, in the version of A2A whose method it calls. Protocol
// errors are JSON-RPC errors in a 200 answer; a streaming method answers them as its stream's
// one event, so that a streaming client reads them where it reads events (so does a request
// that could not be read, from a client that accepts only an event stream). Only an assistant
// that does not exist is an HTTP error (404), as for every other route.
func (h *Handlers) rpc(c echo.Context) error {
	ctx := c.Request().Context()
	a, err := h.d.Assistants.Get(ctx, c.Param("assistant_id"))
	if err != nil {
		return err
	}
	data, err := io.ReadAll(io.LimitReader(c.Request().Body, engine.MaxStateBodyBytes+1))
	if err != nil {
		return engine.E(engine.Op("a2a.read"), engine.BadRequest, "The request body could not be read", err)
	}
	if len(data) > engine.MaxStateBodyBytes {
		return engine.E(engine.Op("a2a.read"), engine.TooLarge,
			"The request body is over the limit of "+engine.MaxStateText+" of input (and 4 MiB for the rest)")
	}
	req, rerr := readRequest(data)
	m, known := methods[req.Method]
	asked := askedVersion(c.Request())
	v, supported := parseVersion(asked)
	if known {
		v = m.v
	}
	switch {
	case rerr != nil:
	case !known:
		rerr = &RPCError{Code: CodeMethodNotFound, Message: "Method not found: " + req.Method}
	case !supported:
		rerr = versionNotSupported(asked)
	}
	if rerr != nil {
		if known && m.op.streaming() || !known && onlyEventStream(c.Request()) {
			return (&eventStream{c: c, id: req.ID, v: v}).send(nil, rerr)
		}
		return c.JSON(http.StatusOK, response{JSONRPC: "2.0", ID: idOrNull(req.ID), Error: encodeError(rerr, v)})
	}
	switch m.op {
	case opStream:
		es := &eventStream{c: c, id: req.ID, v: v}
		p, rerr := decodeSend(req.Params, v)
		if rerr != nil {
			return es.send(nil, rerr)
		}
		return h.stream(ctx, es, a, p)
	case opSubscribe:
		return h.subscribe(ctx, &eventStream{c: c, id: req.ID, v: v}, a, req.Params)
	}
	var result any
	switch m.op {
	case opSend:
		var p sendParams
		if p, rerr = decodeSend(req.Params, v); rerr == nil {
			result, rerr = h.send(ctx, a, p, v)
		}
	case opGet:
		result, rerr = h.getTask(ctx, a, req.Params)
	case opCancel:
		result, rerr = h.cancel(ctx, a, req.Params, v)
	case opList:
		result, rerr = h.list(ctx, a, req.Params, v)
	case opPushConfig:
		rerr = &RPCError{Code: CodePushNotSupported, Message: "Push notifications are not supported: " + req.Method}
	default:
		rerr = &RPCError{Code: CodeUnsupportedOperation, Message: "This operation is not supported: " + req.Method}
	}
	if rerr != nil {
		return c.JSON(http.StatusOK, response{JSONRPC: "2.0", ID: req.ID, Error: encodeError(rerr, v)})
	}
	return c.JSON(http.StatusOK, response{JSONRPC: "2.0", ID: req.ID, Result: encodeResult(result, m.op, v)})
}

// onlyEventStream reports whether the client of r accepts an event stream and not JSON.
func onlyEventStream(r *http.Request) bool {
	accept := strings.ToLower(r.Header.Get(echo.HeaderAccept))
	return strings.Contains(accept, "text/event-stream") && !strings.Contains(accept, "application/json") &&
		!strings.Contains(accept, "*/*")
}

// idOrNull is id, or JSON null when the request's id could not be read.
func idOrNull(id json.RawMessage) json.RawMessage {
	if len(id) == 0 {
		return json.RawMessage("null")
	}
	return id
}

// readRequest checks a JSON-RPC request envelope: a parse error for what is not JSON, invalid
// request for what is not a JSON-RPC 2.0 request object (batches included: A2A sends none).
func readRequest(data []byte) (request, *RPCError) {
	var req request
	if !json.Valid(data) {
		return req, &RPCError{Code: CodeParseError, Message: "Parse error: the body is not valid JSON"}
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return req, &RPCError{Code: CodeInvalidRequest, Message: "Invalid Request: the body must be a JSON-RPC request object"}
	}
	req.ID = fields["id"]
	var problems []string
	if id := strings.TrimSpace(string(req.ID)); id != "" && id != "null" && id[0] != '"' && !isNumber(id) {
		problems = append(problems, "id must be a string, a number or null")
		req.ID = nil
	}
	if err := json.Unmarshal(fields["jsonrpc"], &req.JSONRPC); err != nil || req.JSONRPC != "2.0" {
		problems = append(problems, `jsonrpc must be "2.0"`)
	}
	if err := json.Unmarshal(fields["method"], &req.Method); err != nil || req.Method == "" {
		problems = append(problems, "method must be a non-empty string")
	}
	req.Params = fields["params"]
	if p := strings.TrimSpace(string(req.Params)); p != "" && p != "null" && p[0] != '{' {
		problems = append(problems, "params must be an object")
	}
	if len(problems) > 0 {
		return req, &RPCError{Code: CodeInvalidRequest, Message: "Invalid Request: " + strings.Join(problems, "; ")}
	}
	return req, nil
}

// isNumber reports whether raw is a JSON number.
func isNumber(raw string) bool {
	var n json.Number
	return json.Unmarshal([]byte(raw), &n) == nil
}

// serviceError turns an error of the runtime into a JSON-RPC error whose message is safe to
// show: what the client got wrong is said (sanitised); an unexpected failure is logged and
// answered as an internal error without its text.
func (h *Handlers) serviceError(ctx context.Context, op string, err error) *RPCError {
	var ee *engine.Error
	detail := ""
	if errors.As(err, &ee) {
		detail = ee.Detail
	}
	switch engine.KindOf(err) {
	case engine.NotFound:
		return &RPCError{Code: CodeTaskNotFound, Message: "Task not found"}
	case engine.Invalid, engine.BadRequest, engine.TooLarge, engine.Conflict, engine.Exists:
		if detail == "" {
			detail = "Invalid parameters"
		}
		return &RPCError{Code: CodeInvalidParams, Message: Sanitize(detail)}
	}
	h.d.Logger.ErrorContext(ctx, "a2a: request failed", "op", op, "err", err)
	return &RPCError{Code: CodeInternal, Message: "Internal error"}
}
