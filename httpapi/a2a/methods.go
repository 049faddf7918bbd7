package a2a

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/runs"
	"github.com/jetgraph/jetgraph/httpapi"
)

// Page sizes of tasks/list.
const (
	defaultPageSize = 50
	maxPageSize     = 100
	// maxListedThreads bounds the threads tasks/list reads the runs of without a contextId.
	maxListedThreads = engine.MaxListLimit
)

// newID is the id of a new context (thread): a UUIDv7, as the server's thread ids are.
func newID() string { return uuid.Must(uuid.NewV7()).String() }

// send answers message/send: the task, once its run has ended (or at once, submitted, when the
// configuration says blocking false).
func (h *Handlers) send(ctx context.Context, a engine.Assistant, raw json.RawMessage) (any, *RPCError) {
	var p sendParams
	_ = json.Unmarshal(raw, &p) // start decodes and checks it
	blocking := p.Configuration == nil || p.Configuration.Blocking == nil || *p.Configuration.Blocking
	rec, rerr := h.start(ctx, a, raw, blocking)
	if rerr != nil {
		return nil, rerr
	}
	if blocking {
		ended, _, err := h.d.Runs.WaitEnd(ctx, rec)
		if err != nil {
			return nil, h.serviceError(ctx, "a2a.send", err)
		}
		rec = ended
	}
	var history *int
	if p.Configuration != nil {
		history = p.Configuration.HistoryLength
	}
	t, err := h.task(ctx, rec, taskOptions{history: history, artifacts: true})
	if err != nil {
		return nil, h.serviceError(ctx, "a2a.send", err)
	}
	return t, nil
}

// stream answers message/stream with server-sent events, each a JSON-RPC response: the task
// (submitted), a status update (working), then at the run's end its artifact (the answer, or
// the interrupt as an artifact of its own) and the final status update. An error before the
// run exists is the stream's one event.
func (h *Handlers) stream(c echo.Context, a engine.Assistant, req request) error {
	ctx := c.Request().Context()
	w := c.Response()
	w.Header().Set(echo.HeaderContentType, "text/event-stream")
	w.Header().Set(echo.HeaderCacheControl, "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	send := func(result any, rerr *RPCError) error {
		data, err := json.Marshal(response{JSONRPC: "2.0", ID: req.ID, Result: result, Error: rerr})
		if err != nil {
			return err
		}
		buf := make([]byte, 0, len(data)+8)
		buf = append(append(append(buf, "data: "...), data...), "\n\n"...)
		if _, err := w.Write(buf); err != nil {
			return err
		}
		w.Flush()
		return nil
	}
	rec, rerr := h.start(ctx, a, req.Params, true)
	if rerr != nil {
		return send(nil, rerr)
	}
	submitted, err := h.task(ctx, rec, taskOptions{artifacts: false})
	if err != nil {
		return send(nil, h.serviceError(ctx, "a2a.stream", err))
	}
	submitted.Status.State = StateSubmitted
	if err := send(submitted, nil); err != nil {
		return nil // the client left
	}
	working := StatusUpdate{Kind: KindStatusUpdate, TaskID: rec.RunID, ContextID: rec.ThreadID, Status: TaskStatus{State: StateWorking}}
	if err := send(working, nil); err != nil {
		return nil
	}
	ended, _, err := h.d.Runs.WaitEnd(ctx, rec)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return send(nil, h.serviceError(ctx, "a2a.stream", err))
	}
	t, err := h.task(ctx, ended, taskOptions{artifacts: true, history: new(int)})
	if err != nil {
		return send(nil, h.serviceError(ctx, "a2a.stream", err))
	}
	for _, art := range t.Artifacts {
		if err := send(ArtifactUpdate{Kind: KindArtifactUpdate, TaskID: t.ID, ContextID: t.ContextID, Artifact: art, LastChunk: true}, nil); err != nil {
			return nil
		}
	}
	_ = send(StatusUpdate{Kind: KindStatusUpdate, TaskID: t.ID, ContextID: t.ContextID, Status: t.Status, Final: true}, nil)
	return nil
}

// getTask answers tasks/get.
func (h *Handlers) getTask(ctx context.Context, a engine.Assistant, raw json.RawMessage) (any, *RPCError) {
	var q taskQuery
	if rerr := decodeParams(raw, &q); rerr != nil {
		return nil, rerr
	}
	if ps := append(checkTaskID(&q.ID), checkHistoryLength(q.HistoryLength, "params", "historyLength")...); len(ps) > 0 {
		return nil, invalidParams(ps)
	}
	rec, rerr := h.findTask(ctx, a, q.ID)
	if rerr != nil {
		return nil, rerr
	}
	t, err := h.task(ctx, rec, taskOptions{history: q.HistoryLength, artifacts: true})
	if err != nil {
		return nil, h.serviceError(ctx, "a2a.get", err)
	}
	return t, nil
}

// findTask is the run of task id, which must be one of assistant a's.
func (h *Handlers) findTask(ctx context.Context, a engine.Assistant, id string) (engine.RunRecord, *RPCError) {
	rec, err := h.d.Runs.GetByID(ctx, id)
	if err != nil && !engine.Is(engine.NotFound, err) {
		return engine.RunRecord{}, h.serviceError(ctx, "a2a.task", err)
	}
	if err != nil || rec.AssistantID != a.AssistantID {
		return engine.RunRecord{}, &RPCError{Code: CodeTaskNotFound, Message: "Task not found: " + id}
	}
	return rec, nil
}

// cancel answers tasks/cancel: a task whose run has not ended is cancelled (the run
// interrupted) and answered canceled; one that has ended cannot be.
func (h *Handlers) cancel(ctx context.Context, a engine.Assistant, raw json.RawMessage) (any, *RPCError) {
	var q taskQuery
	if rerr := decodeParams(raw, &q); rerr != nil {
		return nil, rerr
	}
	if ps := checkTaskID(&q.ID); len(ps) > 0 {
		return nil, invalidParams(ps)
	}
	rec, rerr := h.findTask(ctx, a, q.ID)
	if rerr != nil {
		return nil, rerr
	}
	if !rec.Active() {
		return nil, &RPCError{Code: CodeTaskNotCancelable, Message: "Task cannot be canceled: it is " + string(stateOf(rec))}
	}
	if err := h.d.Runs.Cancel(ctx, rec.ThreadID, rec.RunID, runs.ActionInterrupt, true); err != nil {
		return nil, h.serviceError(ctx, "a2a.cancel", err)
	}
	rec, err := h.d.Runs.Get(ctx, rec.ThreadID, rec.RunID)
	if err != nil {
		return nil, h.serviceError(ctx, "a2a.cancel", err)
	}
	t, err := h.task(ctx, rec, taskOptions{artifacts: true})
	if err != nil {
		return nil, h.serviceError(ctx, "a2a.cancel", err)
	}
	return t, nil
}

// list answers tasks/list: the assistant's tasks, newest first, in a context or in all of
// its contexts (the newest maxListedThreads threads), with a state filter and pages.
func (h *Handlers) list(ctx context.Context, a engine.Assistant, raw json.RawMessage) (any, *RPCError) {
	var p listParams
	if len(raw) > 0 && string(raw) != "null" {
		if rerr := decodeParams(raw, &p); rerr != nil {
			return nil, rerr
		}
	}
	var ps []Problem
	if p.ContextID != "" {
		id, err := httpapi.ParseUUID(p.ContextID)
		if err != nil {
			ps = append(ps, Problem{Loc: []any{"params", "contextId"}, Msg: "contextId must be a UUID"})
		}
		p.ContextID = id
	}
	if p.Status != "" && runStatuses(p.Status) == nil {
		ps = append(ps, Problem{Loc: []any{"params", "status"}, Msg: "status must be a task state: submitted, working, input-required, completed, canceled or failed"})
	}
	size := defaultPageSize
	if p.PageSize != nil {
		size = *p.PageSize
		if size < 1 || size > maxPageSize {
			ps = append(ps, Problem{Loc: []any{"params", "pageSize"}, Msg: "pageSize must be between 1 and " + strconv.Itoa(maxPageSize)})
		}
	}
	offset := 0
	if p.PageToken != "" {
		n, err := strconv.Atoi(p.PageToken)
		if err != nil || n < 0 {
			ps = append(ps, Problem{Loc: []any{"params", "pageToken"}, Msg: "pageToken must be a token a previous page returned"})
		}
		offset = n
	}
	ps = append(ps, checkHistoryLength(p.HistoryLength, "params", "historyLength")...)
	if len(ps) > 0 {
		return nil, invalidParams(ps)
	}
	threads := []string{p.ContextID}
	if p.ContextID == "" {
		found, _, err := h.d.Threads.Search(ctx, engine.ThreadQuery{Metadata: map[string]any{"assistant_id": a.AssistantID},
			SortBy: "updated_at", SortOrder: "desc", Limit: maxListedThreads})
		if err != nil {
			return nil, h.serviceError(ctx, "a2a.list", err)
		}
		threads = threads[:0]
		for _, th := range found {
			threads = append(threads, th.ThreadID)
		}
	}
	var recs []engine.RunRecord
	for _, th := range threads {
		rs, err := h.d.Runs.List(ctx, th, "", engine.MaxListLimit, 0)
		if engine.Is(engine.NotFound, err) {
			continue
		}
		if err != nil {
			return nil, h.serviceError(ctx, "a2a.list", err)
		}
		for _, r := range rs {
			if r.AssistantID == a.AssistantID && (p.Status == "" || stateOf(r) == p.Status) {
				recs = append(recs, r)
			}
		}
	}
	slices.SortStableFunc(recs, func(x, y engine.RunRecord) int { return y.CreatedAt.Compare(x.CreatedAt.Time) })
	out := listResult{Tasks: []Task{}, PageSize: size, TotalSize: len(recs)}
	for i := offset; i < len(recs) && i < offset+size; i++ {
		t, err := h.task(ctx, recs[i], taskOptions{history: p.HistoryLength, artifacts: p.IncludeArtifacts})
		if err != nil {
			return nil, h.serviceError(ctx, "a2a.list", err)
		}
		out.Tasks = append(out.Tasks, t)
	}
	if offset+size < len(recs) {
		out.NextPageToken = strconv.Itoa(offset + size)
	}
	return out, nil
}
