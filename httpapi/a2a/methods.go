package a2a

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"time"

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

// send answers a send: the task, once its run has ended (or at once, submitted, when the
// configuration says not to wait: 0.3's blocking false, 1.0's returnImmediately).
func (h *Handlers) send(ctx context.Context, a engine.Assistant, p sendParams, v version) (any, *RPCError) {
	blocking := p.Configuration == nil || p.Configuration.Blocking == nil || *p.Configuration.Blocking
	tr, rerr := h.start(ctx, a, p, v, blocking)
	if rerr != nil {
		return nil, rerr
	}
	if blocking {
		ended, _, err := h.d.Runs.WaitEnd(ctx, tr.last)
		if err != nil {
			return nil, h.serviceError(ctx, "a2a.send", err)
		}
		tr = withLast(tr, ended)
	}
	var history *int
	if p.Configuration != nil {
		history = p.Configuration.HistoryLength
	}
	t, err := h.task(ctx, tr, taskOptions{history: history, artifacts: true})
	if err != nil {
		return nil, h.serviceError(ctx, "a2a.send", err)
	}
	return t, nil
}

// withLast is tr with its latest run now rec (the head too when the task is that one run).
func withLast(tr taskRuns, rec engine.RunRecord) taskRuns {
	if tr.head.RunID == rec.RunID {
		tr.head = rec
	}
	tr.last = rec
	return tr
}

// eventStream writes the answer of a streaming method: server-sent events, each a JSON-RPC
// response in the wire of the client's version. It answers refusals too, so that a streaming
// client reads them where it reads events.
type eventStream struct {
	c     echo.Context
	id    json.RawMessage
	v     version
	begun bool
}

// send writes one event: a result (a Task, StatusUpdate or ArtifactUpdate) or an error.
func (s *eventStream) send(result any, rerr *RPCError) error {
	w := s.c.Response()
	if !s.begun {
		w.Header().Set(echo.HeaderContentType, "text/event-stream")
		w.Header().Set(echo.HeaderCacheControl, "no-cache")
		w.Header().Set("X-Accel-Buffering", "no")
		w.WriteHeader(http.StatusOK)
		s.begun = true
	}
	data, err := json.Marshal(response{JSONRPC: "2.0", ID: idOrNull(s.id), Result: encodeEvent(result, s.v), Error: encodeError(rerr, s.v)})
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

// stream answers a streaming send with server-sent events: the task (submitted), a status
// update (working), then at the run's end its artifact (the answer, or what the task waits
// for as an artifact of its own) and the final status update. An error before the run exists
// is the stream's one event.
func (h *Handlers) stream(ctx context.Context, es *eventStream, a engine.Assistant, p sendParams) error {
	tr, rerr := h.start(ctx, a, p, es.v, true)
	if rerr != nil {
		return es.send(nil, rerr)
	}
	submitted, err := h.task(ctx, tr, taskOptions{artifacts: false})
	if err != nil {
		return es.send(nil, h.serviceError(ctx, "a2a.stream", err))
	}
	submitted.Status = TaskStatus{State: StateSubmitted, Timestamp: submitted.Status.Timestamp}
	if err := es.send(submitted, nil); err != nil {
		return nil // the client left
	}
	working := StatusUpdate{Kind: KindStatusUpdate, TaskID: submitted.ID, ContextID: submitted.ContextID, Status: TaskStatus{State: StateWorking}}
	if err := es.send(working, nil); err != nil {
		return nil
	}
	ended, _, err := h.d.Runs.WaitEnd(ctx, tr.last)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return es.send(nil, h.serviceError(ctx, "a2a.stream", err))
	}
	t, err := h.task(ctx, withLast(tr, ended), taskOptions{artifacts: true, history: new(int)})
	if err != nil {
		return es.send(nil, h.serviceError(ctx, "a2a.stream", err))
	}
	for _, art := range t.Artifacts {
		if err := es.send(ArtifactUpdate{Kind: KindArtifactUpdate, TaskID: t.ID, ContextID: t.ContextID, Artifact: art, LastChunk: true}, nil); err != nil {
			return nil
		}
	}
	_ = es.send(StatusUpdate{Kind: KindStatusUpdate, TaskID: t.ID, ContextID: t.ContextID, Status: t.Status, Final: true}, nil)
	return nil
}

// subscribe answers a resubscription (0.3's tasks/resubscribe, 1.0's SubscribeToTask) in the
// event stream the client reads: the task is looked up (an unknown one is not found), then the
// operation refused as unsupported; the task is read with the get method instead.
func (h *Handlers) subscribe(ctx context.Context, es *eventStream, a engine.Assistant, raw json.RawMessage) error {
	var q taskQuery
	if rerr := decodeParams(raw, &q); rerr != nil {
		return es.send(nil, rerr)
	}
	if ps := checkTaskID(&q.ID); len(ps) > 0 {
		return es.send(nil, invalidParams(ps))
	}
	if _, rerr := h.findTask(ctx, a, q.ID); rerr != nil {
		return es.send(nil, rerr)
	}
	return es.send(nil, &RPCError{Code: CodeUnsupportedOperation,
		Message: "Resubscribing to a task is not supported: read the task with its get method"})
}

// getTask answers a task read.
func (h *Handlers) getTask(ctx context.Context, a engine.Assistant, raw json.RawMessage) (any, *RPCError) {
	var q taskQuery
	if rerr := decodeParams(raw, &q); rerr != nil {
		return nil, rerr
	}
	if ps := append(checkTaskID(&q.ID), checkHistoryLength(q.HistoryLength, "params", "historyLength")...); len(ps) > 0 {
		return nil, invalidParams(ps)
	}
	tr, rerr := h.findTask(ctx, a, q.ID)
	if rerr != nil {
		return nil, rerr
	}
	t, err := h.task(ctx, tr, taskOptions{history: q.HistoryLength, artifacts: true})
	if err != nil {
		return nil, h.serviceError(ctx, "a2a.get", err)
	}
	return t, nil
}

// findTask is task id of assistant a: the run it began with, and its latest run (a message
// that answered its interrupt made a run of the same task). The id of a run that continues a
// task is no task's.
func (h *Handlers) findTask(ctx context.Context, a engine.Assistant, id string) (taskRuns, *RPCError) {
	rec, err := h.d.Runs.GetByID(ctx, id)
	if err != nil && !engine.Is(engine.NotFound, err) {
		return taskRuns{}, h.serviceError(ctx, "a2a.task", err)
	}
	if err != nil || rec.AssistantID != a.AssistantID || taskIDOf(rec) != rec.RunID {
		return taskRuns{}, &RPCError{Code: CodeTaskNotFound, Message: "Task not found: " + id}
	}
	rs, err := h.d.Runs.List(ctx, rec.ThreadID, "", engine.MaxListLimit, 0)
	if err != nil && !engine.Is(engine.NotFound, err) {
		return taskRuns{}, h.serviceError(ctx, "a2a.task", err)
	}
	tr := taskRuns{head: rec, last: rec}
	newest := rec
	for _, r := range rs {
		if r.RunID == rec.RunID {
			tr.head = r // the listed record may be newer than the one read by id
		}
		if taskIDOf(r) == rec.RunID && newer(r, tr.last) {
			tr.last = r
		}
		if newer(r, newest) {
			newest = r
		}
	}
	if tr.last.RunID == rec.RunID {
		tr.last = tr.head
	}
	tr.superseded = newest.RunID != tr.last.RunID
	return tr, nil
}

// newer reports whether run x was created after run y (run ids, UUIDv7, break ties).
func newer(x, y engine.RunRecord) bool {
	if c := x.CreatedAt.Compare(y.CreatedAt.Time); c != 0 {
		return c > 0
	}
	return x.RunID > y.RunID
}

// cancel answers a task cancellation: a task whose latest run has not ended is cancelled (the
// run interrupted) and answered canceled; one that has ended cannot be.
func (h *Handlers) cancel(ctx context.Context, a engine.Assistant, raw json.RawMessage, v version) (any, *RPCError) {
	var q taskQuery
	if rerr := decodeParams(raw, &q); rerr != nil {
		return nil, rerr
	}
	if ps := checkTaskID(&q.ID); len(ps) > 0 {
		return nil, invalidParams(ps)
	}
	tr, rerr := h.findTask(ctx, a, q.ID)
	if rerr != nil {
		return nil, rerr
	}
	if !tr.last.Active() {
		return nil, &RPCError{Code: CodeTaskNotCancelable, Message: "Task cannot be canceled: it is " + wireState(stateOf(tr.last), v)}
	}
	if err := h.d.Runs.Cancel(ctx, tr.last.ThreadID, tr.last.RunID, runs.ActionInterrupt, true); err != nil {
		return nil, h.serviceError(ctx, "a2a.cancel", err)
	}
	rec, err := h.d.Runs.Get(ctx, tr.last.ThreadID, tr.last.RunID)
	if err != nil {
		return nil, h.serviceError(ctx, "a2a.cancel", err)
	}
	t, err := h.task(ctx, withLast(tr, rec), taskOptions{artifacts: true})
	if err != nil {
		return nil, h.serviceError(ctx, "a2a.cancel", err)
	}
	return t, nil
}

// list answers a task listing: the assistant's tasks, the most recently updated first, in a
// context or in all of its contexts (the newest maxListedThreads threads), with a state filter,
// an updated-after filter and pages.
func (h *Handlers) list(ctx context.Context, a engine.Assistant, raw json.RawMessage, v version) (any, *RPCError) {
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
	if p.Status != "" {
		s, ok := readState(p.Status, v)
		if !ok {
			ps = append(ps, Problem{Loc: []any{"params", "status"}, Msg: "status must be a task state: " + stateNames(v)})
		}
		p.Status = string(s)
	}
	var after time.Time
	if p.StatusTimestampAfter != "" {
		t, err := time.Parse(time.RFC3339Nano, p.StatusTimestampAfter)
		if err != nil {
			ps = append(ps, Problem{Loc: []any{"params", "statusTimestampAfter"}, Msg: "statusTimestampAfter must be an RFC 3339 timestamp"})
		}
		after = t
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
	var tasks []taskRuns
	for _, th := range threads {
		rs, err := h.d.Runs.List(ctx, th, "", engine.MaxListLimit, 0)
		if engine.Is(engine.NotFound, err) {
			continue
		}
		if err != nil {
			return nil, h.serviceError(ctx, "a2a.list", err)
		}
		for _, tr := range groupTasks(rs, a.AssistantID) {
			if (p.Status == "" || string(stateOf(tr.last)) == p.Status) && (after.IsZero() || tr.last.UpdatedAt.After(after)) {
				tasks = append(tasks, tr)
			}
		}
	}
	slices.SortStableFunc(tasks, func(x, y taskRuns) int {
		if c := y.last.UpdatedAt.Compare(x.last.UpdatedAt.Time); c != 0 {
			return c
		}
		return y.head.CreatedAt.Compare(x.head.CreatedAt.Time)
	})
	out := listResult{Tasks: []Task{}, PageSize: size, TotalSize: len(tasks)}
	for i := offset; i < len(tasks) && i < offset+size; i++ {
		t, err := h.task(ctx, tasks[i], taskOptions{history: p.HistoryLength, artifacts: p.IncludeArtifacts})
		if err != nil {
			return nil, h.serviceError(ctx, "a2a.list", err)
		}
		out.Tasks = append(out.Tasks, t)
	}
	if offset+size < len(tasks) {
		out.NextPageToken = strconv.Itoa(offset + size)
	}
	return out, nil
}

// groupTasks gathers a thread's runs of assistant into tasks: each run is its own task's
// first, or continues the task its metadata names.
func groupTasks(rs []engine.RunRecord, assistant string) []taskRuns {
	byID := map[string]*taskRuns{}
	var order []string
	for _, r := range rs {
		if r.AssistantID != assistant {
			continue
		}
		id := taskIDOf(r)
		tr, ok := byID[id]
		if !ok {
			tr = &taskRuns{head: r, last: r}
			byID[id] = tr
			order = append(order, id)
		}
		if r.RunID == id {
			tr.head = r
		}
		if newer(r, tr.last) {
			tr.last = r
		}
	}
	out := make([]taskRuns, 0, len(order))
	for _, id := range order {
		out = append(out, *byID[id])
	}
	return out
}
