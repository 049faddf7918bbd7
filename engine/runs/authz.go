package runs

import (
	"context"

	"github.com/google/uuid"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/assistants"
	"github.com/jetgraph/jetgraph/engine/threads"
)

// access asks the user's rules for action on the thread of run (threads.read to read, join or
// stream it, update with its action to cancel it, delete to delete it): a thread they hide is a
// run not found, as a missing one. It returns the context the operation goes on with.
func (s *Service) access(ctx context.Context, op string, action engine.AuthAction, thread, run string, value map[string]any) (context.Context, error) {
	if engine.AuthorizerFrom(ctx) == nil {
		return ctx, nil
	}
	if value == nil {
		value = map[string]any{}
	}
	if run != "" {
		value["run_id"] = run
	}
	ctx, _, err := s.threads.Access(ctx, action, thread, value)
	if engine.Is(engine.NotFound, err) && run != "" {
		return ctx, NotFound(op)
	}
	return ctx, err
}

// createRunValue is the reference's value of threads.create_run for c.
func createRunValue(c Create, a engine.Assistant) map[string]any {
	var thread any
	if c.ThreadID != "" {
		thread = c.ThreadID
	}
	md := map[string]any{}
	for k, v := range c.Metadata {
		md[k] = v
	}
	return map[string]any{
		"thread_id": thread, "assistant_id": a.AssistantID, "run_id": c.RunID, "status": engine.RunPending,
		"metadata": md, "prevent_insert_if_inflight": c.MultitaskStrategy == engine.MultitaskReject,
		"multitask_strategy": c.MultitaskStrategy, "if_not_exists": orReject(c.IfNotExists),
		"after_seconds": c.AfterSeconds,
		"kwargs": map[string]any{
			"input": c.Input, "command": nilIfEmpty(c.Command), "config": orEmpty(c.Config), "context": orEmpty(c.Context),
			"stream_mode": c.StreamMode, "interrupt_before": c.InterruptBefore, "interrupt_after": c.InterruptAfter,
			"webhook": engine.OptString(c.Webhook), "feedback_keys": c.FeedbackKeys,
		},
	}
}

// newRunID is a new run's id: time-ordered, as threads' are.
func newRunID() string { return uuid.Must(uuid.NewV7()).String() }

func orReject(ifNotExists string) string {
	if ifNotExists == "" {
		return engine.IfNotExistsReject
	}
	return ifNotExists
}

// authorizeCreate asks the user's rules for threads.create_run, takes the metadata they left for
// the run (and the thread it may create), and checks the user may read the assistant: a system
// assistant (one made for a graph) every user may, another only when the rules' assistants.read
// filter matches its metadata; one they hide is missing. It returns the filter the run's thread
// must match.
func (s *Service) authorizeCreate(ctx context.Context, op string, c *Create, a engine.Assistant) (engine.Filter, error) {
	if engine.AuthorizerFrom(ctx) == nil {
		return engine.Filter{}, nil
	}
	if c.RunID == "" {
		c.RunID = newRunID() // the rules see the id the run gets
	}
	value, filter, err := engine.Authorize(ctx, engine.ResourceThreads, engine.ActionCreateRun, func() map[string]any {
		return createRunValue(*c, a)
	})
	if err != nil {
		return filter, err
	}
	if md, ok := threads.Metadata(value); ok {
		c.Metadata = md
	}
	if err := assistants.Readable(ctx, a); err != nil {
		if engine.Is(engine.NotFound, err) {
			return filter, assistants.NoAssistant(op, c.AssistantID)
		}
		return filter, err
	}
	return filter, nil
}
