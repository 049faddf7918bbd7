package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/runs"
)

// Stateless runs execute on a temporary thread that the scheduler creates; with on_completion
// "delete" (the default) the thread and its runs are deleted once the run has ended.

// orphanWait bounds how long a departed client's stateless wait keeps watching its run to delete
// its temporary thread.
const orphanWait = time.Hour

// createStatelessRun creates a run on a new temporary thread and answers with it (pending).
func (s *Server) createStatelessRun(c echo.Context) error {
	var errs engine.Violations
	in, err := s.parseRun(c, "runs.create", "", &errs)
	if err != nil {
		return err
	}
	in.create.OnCompletion = in.onCompletion
	rec, err := s.deps.Runs.Create(c.Request().Context(), in.create)
	if err != nil {
		return err
	}
	runLocation(c, rec, true)
	return OK(c, rec.Run)
}

// waitStatelessRun creates a run on a temporary thread, waits for its end and answers with the
// thread's values. The thread is kept until those are read, then deleted unless on_completion
// is "keep". Its Content-Location names the thread, as the reference server's does: the Python
// SDK's on_run_created hands it over, the one way to find a kept thread.
func (s *Server) waitStatelessRun(c echo.Context) error {
	var errs engine.Violations
	in, err := s.parseRun(c, "runs.wait", "", &errs)
	if err != nil {
		return err
	}
	_, out, err := s.waitStateless(c.Request().Context(), in.create, in.onCompletion == engine.OnCompletionDelete,
		in.onDisconnect == engine.OnDisconnectCancel, func(rec engine.RunRecord) { runLocation(c, rec, false) })
	if err != nil {
		return err
	}
	return OK(c, out)
}

// waitStateless creates create as a run on a temporary thread, waits for its end and returns it
// with its answer (runResult); created, when not nil, is told of the run once it is recorded.
// The thread is kept until the values are read, then deleted when deleteThread is set (also
// once the run ends if the caller leaves first). /runs/wait and MCP tool calls run through it.
func (s *Server) waitStateless(ctx context.Context, create runs.Create, deleteThread, cancelOnDisconnect bool, created func(engine.RunRecord)) (engine.RunRecord, map[string]any, error) {
	create.ThreadID = ""
	create.OnCompletion = engine.OnCompletionKeep // the worker must not delete the thread before it is read
	create.Await = true
	rec, err := s.deps.Runs.Create(ctx, create)
	if err != nil {
		return engine.RunRecord{}, nil, err
	}
	// The user's rules allowed the run: reading its answer and deleting its temporary thread
	// are the platform's steps of it.
	ctx = engine.Asked(ctx)
	if created != nil {
		created(rec)
	}
	done, values, err := s.awaitRun(ctx, rec, true, cancelOnDisconnect)
	if err != nil {
		if ctx.Err() != nil && deleteThread {
			go s.deleteWhenDone(context.WithoutCancel(ctx), rec)
		}
		return rec, nil, err
	}
	out, err := s.runResult(ctx, done, values)
	if deleteThread {
		if derr := s.deps.Threads.Delete(ctx, rec.ThreadID); derr != nil && !engine.Is(engine.NotFound, derr) {
			s.log.Warn("runs: deleting a stateless run's thread", "thread_id", rec.ThreadID, "err", derr)
		}
	}
	return done, out, err
}

// deleteWhenDone deletes the temporary thread of a stateless wait whose client left, once its
// run has ended.
func (s *Server) deleteWhenDone(ctx context.Context, rec engine.RunRecord) {
	ctx, cancel := context.WithTimeout(ctx, orphanWait)
	defer cancel()
	if _, err := s.deps.Runs.Wait(ctx, rec.ThreadID, rec.RunID); err != nil && !engine.Is(engine.NotFound, err) {
		s.log.Warn("runs: a departed client's stateless run did not end", "run_id", rec.RunID, "err", err)
		return
	}
	if err := s.deps.Threads.Delete(ctx, rec.ThreadID); err != nil && !engine.Is(engine.NotFound, err) {
		s.log.Warn("runs: deleting a stateless run's thread", "thread_id", rec.ThreadID, "err", err)
	}
}

// createRunBatch creates stateless runs from a list of run bodies and answers with them, in
// order. Every body is checked first: one bad body creates none (422 listing every problem at
// ["body", <index>, ...], or 404 for an unknown assistant).
func (s *Server) createRunBatch(c echo.Context) error {
	const op = "runs.batch"
	var errs engine.Violations
	items, err := readBatch(c, &errs)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	ins := make([]runInput, len(items))
	var notFound error
	for i, raw := range items {
		var itemErrs engine.Violations
		f := &Fields{loc: "body", raw: raw, errs: &itemErrs}
		if err := stateWithin(f, op, "input", "command"); err != nil {
			return err
		}
		ins[i] = readRun(f, true)
		s.headerConfig(f, c.Request().Header, &ins[i].create)
		if err := s.resolveRun(ctx, ins[i].create); err != nil && notFound == nil {
			notFound = err
		}
		for _, e := range itemErrs {
			if len(e.Loc) > 0 && e.Loc[0] == "body" {
				e.Loc = append([]any{"body", i}, e.Loc[1:]...)
			}
			errs = append(errs, e)
		}
	}
	if err := errs.Err(op); err != nil {
		return err
	}
	if notFound != nil {
		return notFound
	}
	out := make([]engine.Run, 0, len(ins))
	for _, in := range ins {
		in.create.OnCompletion = in.onCompletion
		rec, err := s.deps.Runs.Create(ctx, in.create)
		if err != nil {
			return err
		}
		out = append(out, rec.Run)
	}
	return OK(c, out)
}

// readBatch reads a body that is a list of JSON objects.
func readBatch(c echo.Context, errs *engine.Violations) ([]map[string]json.RawMessage, error) {
	data, err := ReadJSON(c, errs)
	if err != nil || data == nil {
		return nil, err
	}
	var list []json.RawMessage
	if err := json.Unmarshal(data, &list); err != nil || list == nil {
		errs.Add("list_type", "Input should be a valid list of run bodies", "body")
		return nil, nil
	}
	if len(list) > engine.MaxBatchRuns {
		errs.Add("too_long", fmt.Sprintf("A batch holds at most %d runs (MaxBatchRuns); this one has %d", engine.MaxBatchRuns, len(list)), "body")
		return nil, nil
	}
	out := make([]map[string]json.RawMessage, len(list))
	for i, raw := range list {
		if err := json.Unmarshal(raw, &out[i]); err != nil || out[i] == nil {
			errs.Add("model_attributes_type", "Input should be a valid dictionary or object to extract fields from", "body", i)
			out[i] = map[string]json.RawMessage{}
		}
	}
	return out, nil
}

// cancelRuns cancels runs: {thread_id, run_ids} names them (run_ids alone finds their
// threads), {thread_id, status} takes every active run of the thread with that status
// (pending, running or all), and {status} alone every active run of every thread. ?action is interrupt (default) or rollback. 204.
func (s *Server) cancelRuns(c echo.Context) error {
	const op = "runs.cancel"
	var errs engine.Violations
	action := QueryFields(c, &errs).Enum("action", runs.ActionInterrupt, runs.ActionInterrupt, runs.ActionRollback)
	f, err := ReadBody(c, &errs)
	if err != nil {
		return err
	}
	thread := f.UUID("thread_id")
	var runIDs []string
	if ids := f.Strings("run_ids"); len(ids) > engine.MaxBatchRuns {
		f.Add("too_long", fmt.Sprintf("At most %d run_ids (MaxBatchRuns); %d given", engine.MaxBatchRuns, len(ids)), "run_ids")
	}
	for i, id := range f.Strings("run_ids") {
		if canonical, err := ParseUUID(id); err != nil {
			errs.Add("uuid_parsing", "Input should be a valid UUID", "body", "run_ids", i)
		} else {
			runIDs = append(runIDs, canonical)
		}
	}
	status := f.Enum("status", "", engine.RunPending, engine.RunRunning, "all")
	switch {
	case !f.Present("run_ids") && !f.Present("status"):
		f.Add("missing", "Give run_ids, or thread_id and status", "run_ids")
	}
	if err := errs.Err(op); err != nil {
		return err
	}
	ctx := c.Request().Context()
	if thread == "" && len(runIDs) == 0 {
		if err := s.deps.Runs.CancelAll(ctx, status, action); err != nil {
			return err
		}
		return c.NoContent(http.StatusNoContent)
	}
	if thread != "" {
		if err := s.deps.Runs.CancelMany(ctx, thread, runIDs, status, action); err != nil {
			return err
		}
		return c.NoContent(http.StatusNoContent)
	}
	byThread := map[string][]string{}
	var order []string
	for _, id := range runIDs {
		rec, err := s.deps.Runs.GetByID(ctx, id)
		if err != nil {
			return err
		}
		if byThread[rec.ThreadID] == nil {
			order = append(order, rec.ThreadID)
		}
		byThread[rec.ThreadID] = append(byThread[rec.ThreadID], id)
	}
	for _, th := range order {
		if err := s.deps.Runs.CancelMany(ctx, th, byThread[th], "", action); err != nil {
			return err
		}
	}
	return c.NoContent(http.StatusNoContent)
}
