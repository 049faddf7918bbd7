package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/assistants"
	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/engine/runs"
	"github.com/jetgraph/jetgraph/engine/webhooks"
)

// runRoutes serves the run API over the durable scheduler (Deps.Runs): runs on threads, and
// stateless runs on temporary threads (runs_stateless.go).
func (s *Server) runRoutes() {
	r := s.needRuns
	s.echo.POST("/threads/:thread_id/runs", r(s.createRun))
	s.echo.GET("/threads/:thread_id/runs", r(s.listRuns))
	s.echo.POST("/threads/:thread_id/runs/wait", r(s.waitRun))
	s.echo.GET("/threads/:thread_id/runs/:run_id", r(s.getRun))
	s.echo.GET("/runs/:run_id", r(s.getRunByID))
	s.echo.DELETE("/threads/:thread_id/runs/:run_id", r(s.deleteRun))
	s.echo.GET("/threads/:thread_id/runs/:run_id/join", r(s.joinRun))
	s.echo.POST("/threads/:thread_id/runs/:run_id/cancel", r(s.cancelRun))
	s.echo.POST("/runs", r(s.createStatelessRun))
	s.echo.POST("/runs/wait", r(s.waitStatelessRun))
	s.echo.POST("/runs/batch", r(s.createRunBatch))
	s.echo.POST("/runs/cancel", r(s.cancelRuns))
}

// needRuns answers 503 instead of calling h when the server has no run scheduler.
func (s *Server) needRuns(h echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if s.deps.Runs == nil {
			return engine.E(engine.Op("runs"), engine.Unavailable, "Runs are not served: no run scheduler is configured.")
		}
		return h(c)
	}
}

// Values of the run-creation fields that the scheduler does not check itself.
var (
	durabilities = names(engine.Durabilities)
	// runFields are the fields a run list may select.
	runFields = []string{"run_id", "thread_id", "assistant_id", "created_at", "updated_at", "status",
		"metadata", "kwargs", "multitask_strategy"}
)

// runInput is a parsed run-creation body: what the scheduler records, and what the HTTP layer
// acts on itself.
type runInput struct {
	create       runs.Create
	onDisconnect string // engine.OnDisconnectCancel or Continue: what a waiting request's departure does
	onCompletion string // stateless runs: engine.OnCompletionDelete or Keep the temporary thread
}

// readRun reads a run-creation body, recording every problem of its shape in f's violations.
// stateless sets the default of on_disconnect (cancel for stateless runs, continue otherwise).
func readRun(f *Fields, stateless bool) runInput {
	f.Require("assistant_id")
	return readRunFields(f, stateless)
}

// readRunFields is readRun without the check that assistant_id is given (a cron's patch may
// change some run fields only).
func readRunFields(f *Fields, stateless bool) runInput {
	disconnect := engine.OnDisconnectContinue
	if stateless {
		disconnect = engine.OnDisconnectCancel
	}
	in := runInput{
		create: runs.Create{
			AssistantID:       f.String("assistant_id"),
			Input:             f.Any("input"),
			Command:           commandMap(f),
			Config:            f.Object("config"),
			Context:           f.Object("context"),
			Metadata:          f.Object("metadata"),
			StreamMode:        streamModes(f),
			InterruptBefore:   interruptList(f, "interrupt_before"),
			InterruptAfter:    interruptList(f, "interrupt_after"),
			CheckpointID:      f.UUID("checkpoint_id"),
			FeedbackKeys:      f.Strings("feedback_keys"),
			Durability:        engine.Durability(f.Enum("durability", "", durabilities...)),
			MultitaskStrategy: f.Enum("multitask_strategy", engine.MultitaskEnqueue, engine.MultitaskStrategies...),
			IfNotExists:       f.Enum("if_not_exists", engine.IfNotExistsReject, engine.IfNotExistsReject, engine.IfNotExistsCreate),
		},
		onDisconnect: f.Enum("on_disconnect", disconnect, engine.OnDisconnectCancel, engine.OnDisconnectContinue),
		onCompletion: f.Enum("on_completion", engine.OnCompletionDelete, engine.OnCompletionDelete, engine.OnCompletionKeep),
	}
	c := &in.create
	if ref := readCheckpointRef(f, "checkpoint", ""); ref.ID != "" || ref.NS != "" {
		if c.CheckpointID == "" {
			c.CheckpointID = ref.ID
		}
		if ref.NS != "" {
			configurable(f, c)["checkpoint_ns"] = ref.NS
		}
	}
	if n, ok := f.Number("after_seconds"); ok {
		if n < 0 {
			f.Add("greater_than_equal", "Input should be greater than or equal to 0", "after_seconds")
		} else {
			c.AfterSeconds = n
		}
	}
	if f.Present("webhook") {
		before := len(*f.errs)
		if c.Webhook = f.String("webhook"); len(*f.errs) == before {
			if err := webhooks.ValidateURL(c.Webhook); err != nil {
				var ee *engine.Error
				if errors.As(err, &ee) && len(ee.Fields) > 0 {
					*f.errs = append(*f.errs, ee.Fields...)
				} else {
					f.Add("url_parsing", err.Error(), "webhook")
				}
			}
		}
	}
	c.StreamSubgraphs = f.Bool("stream_subgraphs", false)
	// Accepted for the clients' sake; their checks are type checks only.
	for _, name := range []string{"stream_resumable", "checkpoint_during"} {
		f.Bool(name, false)
	}
	return in
}

// commandMap reads a run's command ({update, resume, goto}) as the scheduler records it.
func commandMap(f *Fields) map[string]any {
	if decodeCommand(f) == nil {
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal(f.raw["command"], &m); err != nil {
		f.Add("dict_type", "Input should be a valid dictionary", "command")
	}
	return m
}

// configurable returns the run's config.configurable, creating both as needed.
func configurable(f *Fields, c *runs.Create) map[string]any {
	if c.Config == nil {
		c.Config = map[string]any{}
	}
	switch m := c.Config["configurable"].(type) {
	case map[string]any:
		return m
	case nil:
	default:
		f.errs.Add("dict_type", "Input should be a valid dictionary", f.loc, "config", "configurable")
	}
	m := map[string]any{}
	c.Config["configurable"] = m
	return m
}

// streamModes reads stream_mode: a mode, a list of modes, or a list as a JSON string.
func streamModes(f *Fields) []engine.StreamMode {
	if !f.Present("stream_mode") {
		return nil
	}
	var modes []string
	switch v := f.Any("stream_mode").(type) {
	case string:
		if strings.HasPrefix(strings.TrimSpace(v), "[") {
			if err := json.Unmarshal([]byte(v), &modes); err != nil {
				f.Add("list_type", "Input should be a stream mode, a list of them, or that list as JSON", "stream_mode")
				return nil
			}
		} else {
			modes = []string{v}
		}
	case []any:
		for i, m := range v {
			if s, ok := m.(string); ok {
				modes = append(modes, s)
			} else {
				f.errs.Add("string_type", "Input should be a valid string", f.loc, "stream_mode", i)
			}
		}
	default:
		f.Add("list_type", "Input should be a stream mode, a list of them, or that list as JSON", "stream_mode")
		return nil
	}
	return modesIn(modes, engine.RunStreamModes, func(i int) {
		f.errs.Add("literal_error", "Input should be "+quoteList(engine.RunStreamModes), f.loc, "stream_mode", i)
	})
}

// modesIn is modes as stream modes; it calls bad with the index of each that allowed lacks.
func modesIn(modes []string, allowed []engine.StreamMode, bad func(i int)) []engine.StreamMode {
	if modes == nil {
		return nil
	}
	out := make([]engine.StreamMode, len(modes))
	for i, m := range modes {
		if out[i] = engine.StreamMode(m); !slices.Contains(allowed, out[i]) {
			bad(i)
		}
	}
	return out
}

// names are the strings of a list of wire values.
func names[T ~string](values []T) []string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = string(v)
	}
	return out
}

// interruptList reads interrupt_before/after: "*" or a list of node names.
func interruptList(f *Fields, name string) []string {
	if !f.Present(name) {
		return nil
	}
	if s, ok := f.Any(name).(string); ok {
		if s != "*" {
			f.Add("literal_error", `Input should be "*" or a list of node names`, name)
		}
		return []string{"*"}
	}
	return f.Strings(name)
}

// headerConfig copies the request headers that Deps.ConfigurableHeaders allows into the run's
// config.configurable under their lower-case names, over the body's values for them as the
// reference servers do (the deployment opted the header in); credentials never are.
func (s *Server) headerConfig(f *Fields, h http.Header, c *runs.Create) {
	if s.deps.ConfigurableHeaders.Empty() {
		return
	}
	for name, values := range h {
		key := strings.ToLower(name)
		if len(values) == 0 || !s.deps.ConfigurableHeaders.Allows(key) {
			continue
		}
		configurable(f, c)[key] = values[len(values)-1]
	}
}

// resolveRun resolves the run's assistant: an unknown assistant is a NotFound error with the
// reference servers' text. The node names of interrupt_before/after are not checked: LangGraph
// does not check a run's own lists, which apply to the nodes of its root graph (a name of a
// subgraph's node, or of no node, is accepted and never matches).
func (s *Server) resolveRun(ctx context.Context, c runs.Create) error {
	if c.AssistantID == "" {
		return nil
	}
	// Whether the user may run it is the run's creation's to ask (runs.Service.Create), which
	// lets everyone run a system assistant their assistants.read filter would hide.
	_, err := s.deps.Assistants.Resolve(engine.Asked(ctx), c.AssistantID)
	if engine.Is(engine.NotFound, err) {
		return assistants.NoAssistant("runs.create", c.AssistantID)
	}
	return err
}

// parseRun reads and checks the run-creation request of c: the body, the configurable headers,
// the assistant. threadID is "" for a stateless run. Problems of the body come first (422,
// every one listed); an unknown assistant in a well-formed body is a 404; nothing is recorded
// before both checks pass.
func (s *Server) parseRun(c echo.Context, op, threadID string, errs *engine.Violations) (runInput, error) {
	f, err := ReadBody(c, errs)
	if err != nil {
		return runInput{}, err
	}
	if err := stateWithin(f, op, "input", "command"); err != nil {
		return runInput{}, err
	}
	in := readRun(f, threadID == "")
	in.create.ThreadID = threadID
	s.headerConfig(f, c.Request().Header, &in.create)
	if err := s.resolveRun(c.Request().Context(), in.create); err != nil && len(*errs) == 0 {
		return runInput{}, err
	}
	return in, errs.Err(op)
}

// runLocation sets the Content-Location of a response that created rec (the JS SDK reads the
// run id from it).
func runLocation(c echo.Context, rec engine.RunRecord, stateless bool) {
	loc := "/threads/" + rec.ThreadID + "/runs/" + rec.RunID
	if stateless {
		loc = "/runs/" + rec.RunID
	}
	c.Response().Header().Set("Content-Location", loc)
}

// createRun creates a run on a thread and answers with it (pending).
func (s *Server) createRun(c echo.Context) error {
	var errs engine.Violations
	id := PathUUID(c, "thread_id", &errs)
	in, err := s.parseRun(c, "runs.create", id, &errs)
	if err != nil {
		return err
	}
	rec, err := s.deps.Runs.Create(c.Request().Context(), in.create)
	if err != nil {
		return err
	}
	runLocation(c, rec, false)
	return OK(c, rec.Run)
}

// waitRun creates a run on a thread, waits for its end and answers with the thread's values.
func (s *Server) waitRun(c echo.Context) error {
	var errs engine.Violations
	id := PathUUID(c, "thread_id", &errs)
	in, err := s.parseRun(c, "runs.wait", id, &errs)
	if err != nil {
		return err
	}
	in.create.Await = true
	rec, err := s.deps.Runs.Create(c.Request().Context(), in.create)
	if err != nil {
		return err
	}
	runLocation(c, rec, false)
	rec, values, err := s.awaitRun(c.Request().Context(), rec, true, in.onDisconnect == engine.OnDisconnectCancel)
	if err != nil {
		return err
	}
	out, err := s.runResult(c.Request().Context(), rec, values)
	if err != nil {
		return err
	}
	return OK(c, out)
}

// awaitRun waits for the end of the run rec names. created says rec is the run as created (this
// request created it): then only its state is read. When the client leaves first and
// cancelOnDisconnect is set, the run is cancelled (interrupt).
//
// It returns the run as it ended and, when this process executed it and it succeeded, the values
// it ended with (see runs.Service.WaitEnd; nil otherwise).
func (s *Server) awaitRun(ctx context.Context, rec engine.RunRecord, created, cancelOnDisconnect bool) (engine.RunRecord, graph.State, error) {
	thread, run := rec.ThreadID, rec.RunID
	var values graph.State
	var err error
	if created {
		rec, values, err = s.deps.Runs.WaitEnd(ctx, rec)
	} else {
		rec, err = s.deps.Runs.Wait(ctx, thread, run)
	}
	if err != nil && ctx.Err() != nil && cancelOnDisconnect {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if cerr := s.deps.Runs.Cancel(cctx, thread, run, runs.ActionInterrupt, false); cerr != nil {
			s.log.Warn("runs: cancelling the run of a departed client", "thread_id", thread, "run_id", run, "err", cerr)
		}
	}
	return rec, values, err
}

// runResult is the answer of a waited run: the thread's values (with "__interrupt__" when
// interrupts are pending), or for a failed run {"__error__": {"error", "message"}}; with
// feedback keys, "__feedback__" maps each to its feedback URL. ended, when not nil, is the
// values a successful run ended with (awaitRun): the thread's values then, without reading them.
func (s *Server) runResult(ctx context.Context, rec engine.RunRecord, ended graph.State) (map[string]any, error) {
	var out map[string]any
	switch {
	case rec.Error != nil:
		out = map[string]any{"__error__": rec.Error}
	case ended != nil && len(rec.Kwargs.FeedbackKeys) == 0:
		return ended, nil // answered as they are: the answer adds nothing to them, and encoding only reads
	case ended != nil:
		out, _ = waitJSON(ended, nil, nil).(map[string]any)
	default:
		snap, err := s.deps.Runner.State(ctx, graph.Ref{ThreadID: rec.ThreadID}, false)
		if err != nil {
			return nil, err
		}
		var values graph.State
		var interrupts []graph.InterruptValue
		if snap != nil {
			values, interrupts = snap.Values, snap.Interrupts
		}
		out, _ = waitJSON(values, interrupts, nil).(map[string]any)
	}
	if keys := rec.Kwargs.FeedbackKeys; len(keys) > 0 {
		fb := make(map[string]any, len(keys))
		for _, k := range keys {
			fb[k] = "/runs/" + rec.RunID + "/feedback?key=" + url.QueryEscape(k)
		}
		out["__feedback__"] = fb
	}
	return out, nil
}

// runPath reads the thread and run ids of a run's path.
func runPath(c echo.Context, errs *engine.Violations) (thread, run string) {
	return PathUUID(c, "thread_id", errs), PathUUID(c, "run_id", errs)
}

// listRuns answers a thread's runs, newest first.
func (s *Server) listRuns(c echo.Context) error {
	var errs engine.Violations
	id := PathUUID(c, "thread_id", &errs)
	q := QueryFields(c, &errs)
	limit, offset := q.Limit(10, 1), q.Int("offset", 0, 0)
	status := q.Enum("status", "", engine.RunStatuses...)
	var sel []string
	switch v := q.Any("select").(type) {
	case string:
		sel = SplitComma(v)
	case []any:
		sel = engine.StringList(v)
	}
	for i, name := range sel {
		if !slices.Contains(runFields, name) {
			errs.Add("literal_error", "Input should be one of "+quoteList(runFields), "query", "select", i)
		}
	}
	if err := errs.Err("runs.list"); err != nil {
		return err
	}
	recs, err := s.deps.Runs.List(c.Request().Context(), id, status, limit, offset)
	if err != nil {
		return err
	}
	list := make([]engine.Run, len(recs))
	for i, r := range recs {
		list[i] = r.Run
	}
	out, err := SelectFields(list, sel)
	if err != nil {
		return err
	}
	return OK(c, out)
}

// getRun answers a run of a thread.
func (s *Server) getRun(c echo.Context) error {
	var errs engine.Violations
	thread, run := runPath(c, &errs)
	if err := errs.Err("runs.get"); err != nil {
		return err
	}
	rec, err := s.deps.Runs.Get(c.Request().Context(), thread, run)
	if err != nil {
		return err
	}
	return OK(c, rec.Run)
}

// getRunByID finds a run without its thread (a jetgraph extension: the run's thread_id is in the
// answer), for tools that know only a run id, such as `jetgraph replay run`.
func (s *Server) getRunByID(c echo.Context) error {
	var errs engine.Violations
	run := PathUUID(c, "run_id", &errs)
	if err := errs.Err("runs.get"); err != nil {
		return err
	}
	rec, err := s.deps.Runs.GetByID(c.Request().Context(), run)
	if err != nil {
		return err
	}
	return OK(c, rec.Run)
}

// deleteRun deletes an ended run: 204; an active run is a 409.
func (s *Server) deleteRun(c echo.Context) error {
	var errs engine.Violations
	thread, run := runPath(c, &errs)
	if err := errs.Err("runs.delete"); err != nil {
		return err
	}
	if err := s.deps.Runs.Delete(c.Request().Context(), thread, run); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// joinRun waits for a run's end and answers like /runs/wait. With ?cancel_on_disconnect the
// run is cancelled if the client leaves first.
func (s *Server) joinRun(c echo.Context) error {
	var errs engine.Violations
	thread, run := runPath(c, &errs)
	cancelOnDisconnect := boolQuery(c, "cancel_on_disconnect", &errs)
	if err := errs.Err("runs.join"); err != nil {
		return err
	}
	rec, _, err := s.awaitRun(c.Request().Context(), engine.RunRecord{Run: engine.Run{ThreadID: thread, RunID: run}}, false, cancelOnDisconnect)
	if err != nil {
		return err
	}
	out, err := s.runResult(c.Request().Context(), rec, nil)
	if err != nil {
		return err
	}
	return OK(c, out)
}

// cancelRun cancels a run (?action=interrupt|rollback). Without ?wait it answers 202 at once;
// with it, 204 once the run has ended (as the reference servers).
func (s *Server) cancelRun(c echo.Context) error {
	var errs engine.Violations
	thread, run := runPath(c, &errs)
	wait := boolQuery(c, "wait", &errs)
	action := QueryFields(c, &errs).Enum("action", runs.ActionInterrupt, runs.ActionInterrupt, runs.ActionRollback)
	if err := errs.Err("runs.cancel"); err != nil {
		return err
	}
	if err := s.deps.Runs.Cancel(c.Request().Context(), thread, run, action, wait); err != nil {
		return err
	}
	if wait {
		return c.NoContent(http.StatusNoContent)
	}
	return c.NoContent(http.StatusAccepted)
}
