package threadstream

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/engine/runs"
)

// Runs is what the commands need of the run scheduler (*runs.Service is one).
type Runs interface {
	Create(ctx context.Context, c runs.Create) (engine.RunRecord, error)
	List(ctx context.Context, thread, status string, limit, offset int) ([]engine.RunRecord, error)
}

// States reads a thread's state (*runner.Runner is one).
type States interface {
	State(ctx context.Context, ref graph.Ref, subgraphs bool) (*graph.Snapshot, error)
}

// RunModes are the stream modes of the runs the protocol starts: what its channels are
// translated from (the run publishes nothing else).
var RunModes = []engine.StreamMode{engine.StreamValues, engine.StreamUpdates, engine.StreamMessagesTuple,
	engine.StreamTasks, engine.StreamCheckpoints, engine.StreamCustom, engine.StreamTools}

// Commands executes the commands posted to a thread.
type Commands struct {
	Runs   Runs
	States States // nil: state.get is not supported
}

// Do executes cmd on thread and returns its response. Subscriptions are the transport's: a
// WebSocket handles them before calling Do.
func (c *Commands) Do(ctx context.Context, thread string, id uint64, method Method, params json.RawMessage) Response {
	switch method {
	case MethodRunStart:
		var p RunStartParams
		if err := decodeParams(params, &p); err != nil {
			return Failure(id, ErrInvalidArgument, err.Error())
		}
		if p.AssistantID == "" {
			return Failure(id, ErrInvalidArgument, "run.start: assistant_id is required")
		}
		if p.MultitaskStrategy != "" && !slices.Contains(engine.MultitaskStrategies, p.MultitaskStrategy) {
			return Failure(id, ErrInvalidArgument, "run.start: multitask_strategy must be one of "+strings.Join(engine.MultitaskStrategies, ", "))
		}
		rec, err := c.Runs.Create(ctx, runs.Create{ThreadID: thread, IfNotExists: engine.IfNotExistsCreate,
			AssistantID: p.AssistantID, Input: p.Input, Config: p.Config, Metadata: p.Metadata,
			StreamMode: RunModes, MultitaskStrategy: p.MultitaskStrategy})
		if err != nil {
			return failure(id, err)
		}
		return Success(id, RunResult{RunID: rec.RunID})
	case MethodInputRespond:
		return c.respond(ctx, thread, id, params)
	case MethodStateGet:
		if c.States == nil {
			break
		}
		var p StateGetParams
		if err := decodeParams(params, &p); err != nil {
			return Failure(id, ErrInvalidArgument, err.Error())
		}
		snap, err := c.state(ctx, thread)
		if err != nil {
			return failure(id, err)
		}
		res := StateGetResult{Values: map[string]any{}}
		for k, v := range snap.Values {
			if len(p.Keys) == 0 || slices.Contains(p.Keys, k) {
				res.Values[k] = v
			}
		}
		if snap.Ref.ID != "" {
			res.Checkpoint = &CheckpointRef{ID: snap.Ref.ID, NS: snap.Ref.NS}
		}
		return Success(id, res)
	case MethodSubscribe, MethodUnsubscribe:
		return Failure(id, ErrNotSupported, method+" is for WebSocket connections: over HTTP, open POST /threads/{thread_id}/stream/events")
	case "":
		return Failure(id, ErrInvalidArgument, "method is required")
	default:
		if !strings.Contains(method, ".") {
			return Failure(id, ErrUnknownCommand, "unknown command "+method)
		}
	}
	return Failure(id, ErrNotSupported, method+" is not supported by this server")
}

// respond answers interrupts: a run of the thread's latest assistant resumed with
// {interrupt_id: response} for each interrupt answered.
func (c *Commands) respond(ctx context.Context, thread string, id uint64, params json.RawMessage) Response {
	var p InputRespondParams
	if err := decodeParams(params, &p); err != nil {
		return Failure(id, ErrInvalidArgument, err.Error())
	}
	answers := p.Responses
	if p.InterruptID != "" {
		answers = append(answers, p.InputResponse)
	}
	if len(answers) == 0 {
		return Failure(id, ErrInvalidArgument, "input.respond: interrupt_id (or responses) is required")
	}
	resume := map[string]any{}
	for _, a := range answers {
		if a.InterruptID == "" {
			return Failure(id, ErrInvalidArgument, "input.respond: every response needs its interrupt_id")
		}
		resume[a.InterruptID] = a.Response
	}
	latest, err := c.Runs.List(ctx, thread, "", 1, 0)
	if err != nil {
		return failure(id, err)
	}
	if len(latest) == 0 {
		return Failure(id, ErrNoSuchInterrupt, "input.respond: the thread has no run to resume")
	}
	if c.States != nil {
		snap, err := c.state(ctx, thread)
		if err != nil {
			return failure(id, err)
		}
		pending := map[string]bool{}
		for _, iv := range snap.Interrupts {
			pending[iv.ID] = true
		}
		for _, task := range snap.Tasks {
			for _, iv := range task.Interrupts {
				pending[iv.ID] = true
			}
		}
		// A run stopped by a static interrupt left tasks to run and nothing to answer: it was
		// announced with an id of its own, whose response is dropped (the run continues as
		// one without input, as after command.resume on such a thread).
		if last := latest[0]; len(pending) == 0 && len(snap.Next) > 0 && last.Status == engine.RunInterrupted && last.Cancel == "" {
			pending[StaticInterruptID(last.RunID)] = true
		}
		for iid := range resume {
			if !pending[iid] {
				return Failure(id, ErrNoSuchInterrupt, "input.respond: the thread has no pending interrupt "+iid)
			}
		}
	}
	cmd := map[string]any{"resume": resume}
	if p.Update != nil {
		cmd["update"] = p.Update
	}
	if p.Goto != nil {
		cmd["goto"] = p.Goto
	}
	rec, err := c.Runs.Create(ctx, runs.Create{ThreadID: thread, AssistantID: latest[0].AssistantID, Command: cmd,
		Config: p.Config, Metadata: p.Metadata, StreamMode: RunModes})
	if err != nil {
		return failure(id, err)
	}
	return Success(id, RunResult{RunID: rec.RunID})
}

// state is the thread's current state; empty for a thread without checkpoints.
func (c *Commands) state(ctx context.Context, thread string) (*graph.Snapshot, error) {
	snap, err := c.States.State(ctx, graph.Ref{ThreadID: thread}, false)
	if snap == nil && err == nil {
		snap = &graph.Snapshot{}
	}
	return snap, err
}

// decodeParams reads a command's params into v (absent params are an empty object).
func decodeParams(params json.RawMessage, v any) error {
	if len(params) == 0 || string(params) == "null" {
		return nil
	}
	if err := json.Unmarshal(params, v); err != nil {
		return errors.New("params: " + err.Error())
	}
	return nil
}

// failure is the response to a command the engine refused: its kind is the code, its detail
// (and every field's problem) the message.
func failure(id uint64, err error) Response {
	code := ErrUnknownError
	switch engine.KindOf(err) {
	case engine.Invalid, engine.TooLarge, engine.BadRequest, engine.Conflict, engine.Exists, engine.NotFound:
		code = ErrInvalidArgument // the protocol has no code of its own for a missing assistant or thread
	}
	msg := "internal error"
	var e *engine.Error
	if errors.As(err, &e) {
		parts := []string{}
		if e.Detail != "" {
			parts = append(parts, e.Detail)
		}
		for _, f := range e.Fields {
			parts = append(parts, f.Msg)
		}
		if len(parts) > 0 {
			msg = strings.Join(parts, "; ")
		}
	}
	return Failure(id, code, msg)
}
