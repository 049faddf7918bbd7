package tracingapi

import (
	"context"
	"encoding/base64"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/tracing"
	"github.com/jetgraph/jetgraph/engine/tracing/trace"
	"github.com/jetgraph/jetgraph/httpapi"
)

// A thread is the conversation a project's traces belong to: the roots whose metadata names the
// same session_id, conversation_id or thread_id (runThreadID), each root one turn.

// tracingV2ThreadRoutes mounts the v2 thread reads (JS client.threads.query() and listTraces()).
func (s *Handlers) tracingV2ThreadRoutes(g *echo.Group) {
	g.POST("/api/v2/threads/query", s.queryThreadsV2)
	g.GET("/api/v2/threads/:thread_id/traces", s.listThreadTracesV2)
}

// threadTurns returns the roots of q (all pages) grouped by thread, each thread's turns oldest
// first.
func (s *Handlers) threadTurns(ctx context.Context, q tracing.Query) (map[string][]*trace.Run, error) {
	isRoot := true
	q.IsRoot = &isRoot
	out := map[string][]*trace.Run{}
	for {
		page, err := s.runs.QueryRuns(ctx, q)
		if err != nil {
			return nil, err
		}
		for _, r := range page.Runs {
			if id, ok := runThreadID(r, nil).(string); ok {
				out[id] = append(out[id], r)
			}
		}
		if page.Next == "" {
			break
		}
		q.Cursor = page.Next
	}
	// Turns that started in the same millisecond (the JS client's clock) keep a stable order by
	// id: the clients' UUIDv7s carry the millisecond but no order within it.
	for _, turns := range out {
		slices.SortFunc(turns, func(a, b *trace.Run) int {
			if c := a.StartTime.Compare(b.StartTime); c != 0 {
				return c
			}
			return strings.Compare(a.ID, b.ID)
		})
	}
	return out, nil
}

// threadJSON summarises a thread's turns as the v2 Thread.
func threadJSON(id string, turns []*trace.Run) map[string]any {
	first, last := turns[0], turns[len(turns)-1]
	st := trace.ComputeStats(turns)
	errored := 0
	var lastError *string
	for _, r := range turns {
		if r.Status == trace.StatusError {
			errored++
			lastError = r.Error
		}
	}
	out := map[string]any{
		"thread_id": id, "count": len(turns), "first_trace_id": first.TraceID, "last_trace_id": last.TraceID,
		"trace_id": last.TraceID, "start_time": first.StartTime.Format(engine.TimeLayout),
		"min_start_time": first.StartTime.Format(engine.TimeLayout), "max_start_time": last.StartTime.Format(engine.TimeLayout),
		"num_errored_turns": errored, "total_tokens": st.TotalTokens,
	}
	set := func(k string, v any) {
		if v != nil {
			out[k] = v
		}
	}
	if st.TotalCost != nil {
		out["total_cost"] = *st.TotalCost
	}
	if st.LatencyP50 != nil {
		out["latency_p50"], out["latency_p99"] = *st.LatencyP50, *st.LatencyP99
	}
	if lastError != nil {
		out["last_error"] = *lastError
	}
	v1First, _ := httpapi.JSONFields(first)
	v1Last, _ := httpapi.JSONFields(last)
	set("first_inputs", preview(v1First["inputs"]))
	set("last_outputs", preview(v1Last["outputs"]))
	return out
}

// queryThreadsV2 answers POST /api/v2/threads/query: the project's threads with a turn in the
// window, the most recently active first, paged by an opaque cursor.
func (s *Handlers) queryThreadsV2(c echo.Context) error {
	var errs engine.Violations
	f, err := httpapi.ReadBody(c, &errs)
	if err != nil {
		return err
	}
	project := f.String("project_id")
	if !f.Require("project_id") {
		project = ""
	} else {
		v2UUIDs([]string{project}, &errs, "body", "project_id")
	}
	for _, name := range []string{"thread_filter", "ai_search"} {
		if f.Present(name) {
			f.Add("value_error", name+" is not served by this server", name)
		}
	}
	q := tracing.Query{Sessions: []string{project}, Filter: f.String("filter"), TraceFilter: f.String("trace_filter"),
		TreeFilter: f.String("tree_filter")}
	v2Window(f, &q, time.Now())
	size := f.Int("page_size", tracing.DefaultQueryLimit, 1)
	offset := v2Offset(f, &errs)
	if len(errs) > 0 {
		tracing.CheckFilters(q, &errs)
	}
	if err := errs.Err("tracing.query_threads_v2"); err != nil {
		return err
	}
	threads, err := s.threadTurns(c.Request().Context(), q)
	if err != nil {
		return err
	}
	ids := make([]string, 0, len(threads))
	for id := range threads {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b string) int {
		ta, tb := threads[a][len(threads[a])-1], threads[b][len(threads[b])-1]
		if c := tb.StartTime.Compare(ta.StartTime); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	items := []map[string]any{}
	for _, id := range ids[min(offset, len(ids)):min(offset+size, len(ids))] {
		items = append(items, threadJSON(id, threads[id]))
	}
	next := ""
	if offset+size < len(ids) {
		next = encodeOffset(offset + size)
	}
	return httpapi.OK(c, map[string]any{"items": items, "next_cursor": next})
}

// v2Offset reads an offset cursor (encodeOffset) from f.
func v2Offset(f *httpapi.Fields, errs *engine.Violations) int {
	cur := f.String("cursor")
	if cur == "" {
		return 0
	}
	raw, err := base64.RawURLEncoding.DecodeString(cur)
	n, err2 := strconv.Atoi(string(raw))
	if err != nil || err2 != nil || n < 0 {
		errs.Add("value_error", "not a cursor this server gave", f.Loc(), "cursor")
		return 0
	}
	return n
}

// encodeOffset is the opaque cursor of a position in a list.
func encodeOffset(n int) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.Itoa(n)))
}

// threadTraceFields answer the ThreadTraceSelectField values from a turn (its root run).
var threadTraceFields = map[string]string{
	"THREAD_ID": "", "TRACE_ID": "trace_id", "NAME": "name", "START_TIME": "start_time", "END_TIME": "end_time",
	"LATENCY": "latency", "FIRST_TOKEN_TIME": "first_token_time", "INPUTS": "inputs", "OUTPUTS": "outputs",
	"ERROR": "error", "PROMPT_TOKENS": "prompt_tokens", "COMPLETION_TOKENS": "completion_tokens",
	"TOTAL_TOKENS": "total_tokens", "PROMPT_COST": "prompt_cost", "COMPLETION_COST": "completion_cost",
	"TOTAL_COST": "total_cost", "INPUTS_PREVIEW": "", "OUTPUTS_PREVIEW": "", "ERROR_PREVIEW": "",
	"PROMPT_TOKEN_DETAILS": "", "COMPLETION_TOKEN_DETAILS": "", "TURN_NUMBER": "", "OP": "",
	"PROMPT_COST_DETAILS": "", "COMPLETION_COST_DETAILS": "",
}

// listThreadTracesV2 answers GET /api/v2/threads/{thread_id}/traces: the thread's turns, oldest
// first, with the selected fields (trace_id always).
func (s *Handlers) listThreadTracesV2(c echo.Context) error {
	var errs engine.Violations
	thread := c.Param("thread_id")
	project := v2Project(c, &errs)
	qf := httpapi.QueryFields(c, &errs)
	q := tracing.Query{Sessions: []string{project}, Filter: qf.String("filter"), TraceFilter: qf.String("trace_filter"),
		TreeFilter: qf.String("tree_filter")}
	// A thread's turns whenever they started.
	q.StartTime = &time.Time{}
	selects := c.QueryParams()["selects"]
	for i, n := range selects {
		if _, ok := threadTraceFields[n]; !ok {
			errs.Add("enum", n+" is not a ThreadTraceSelectField", "query", "selects", i)
		}
	}
	if len(errs) > 0 {
		tracing.CheckFilters(q, &errs)
	}
	if err := errs.Err("tracing.thread_traces_v2"); err != nil {
		return err
	}
	threads, err := s.threadTurns(c.Request().Context(), q)
	if err != nil {
		return err
	}
	items := []map[string]any{}
	for i, r := range threads[thread] {
		v1, err := httpapi.JSONFields(r)
		if err != nil {
			return err
		}
		item := map[string]any{"trace_id": r.TraceID}
		for _, n := range selects {
			var v any
			switch n {
			case "THREAD_ID":
				v = thread
			case "TURN_NUMBER":
				v = i + 1
			case "OP", "PROMPT_COST_DETAILS", "COMPLETION_COST_DETAILS":
				// Not kept by jetgraph.
			default:
				if f, ok := v2RunFields[n]; ok && f.get != nil {
					v = f.get(r, v1)
				} else if raw := v1[threadTraceFields[n]]; len(raw) > 0 && string(raw) != "null" {
					v = raw
				}
			}
			if v != nil {
				item[strings.ToLower(n)] = v
			}
		}
		items = append(items, item)
	}
	return httpapi.OK(c, map[string]any{"items": items, "next_cursor": nil})
}
