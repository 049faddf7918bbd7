package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/runs"
	"github.com/jetgraph/jetgraph/engine/streaming"
)

// streamRoutes serves the server-sent event streams: a run created and streamed at once, a run
// joined (or resumed with Last-Event-ID), and a thread followed across its runs. The events come
// from the output bus (engine/streaming), so any process serves any run.
func (s *Server) streamRoutes() {
	s.echo.POST("/threads/:thread_id/runs/stream", s.streamRun)
	s.echo.POST("/runs/stream", s.streamStatelessRun)
	s.echo.GET("/threads/:thread_id/runs/:run_id/stream", s.joinRunStream)
	s.echo.GET("/runs/:run_id/stream", s.joinStatelessRunStream)
	s.echo.GET("/threads/:thread_id/stream", s.threadStream)
}

// streamer returns the output bus, or the error of a server built without it.
func (s *Server) streamer() (StreamService, error) {
	if s.deps.Streams == nil || s.deps.Runs == nil {
		return nil, engine.E(engine.Op("runs.stream"), engine.Unavailable, "Streaming is not configured on this server.")
	}
	return s.deps.Streams, nil
}

// streamRun creates a run on a thread and streams it.
func (s *Server) streamRun(c echo.Context) error {
	var errs engine.Violations
	return s.createAndStream(c, PathUUID(c, "thread_id", &errs), &errs)
}

// streamStatelessRun creates a run on a temporary thread and streams it.
func (s *Server) streamStatelessRun(c echo.Context) error {
	var errs engine.Violations
	return s.createAndStream(c, "", &errs)
}

// createAndStream creates the run of the request body through the scheduler and streams it
// from its start in the modes the body names. Content-Location names the run and Location the
// join stream both SDKs reconnect to (with Last-Event-ID).
func (s *Server) createAndStream(c echo.Context, threadID string, errs *engine.Violations) error {
	streams, err := s.streamer()
	if err != nil {
		return err
	}
	stateless := c.Param("thread_id") == ""
	in, err := s.parseRun(c, "runs.stream", threadID, errs)
	if err != nil {
		return err
	}
	if stateless {
		in.create.OnCompletion = in.onCompletion
	}
	ctx := c.Request().Context()
	rec, err := s.deps.Runs.Create(ctx, in.create)
	if err != nil {
		return err
	}
	runLocation(c, rec, stateless)
	loc := "/threads/" + rec.ThreadID + "/runs/" + rec.RunID + "/stream"
	if stateless {
		loc = "/runs/" + rec.RunID + "/stream"
	}
	c.Response().Header().Set("Location", loc)
	f, err := streams.FollowRun(ctx, streaming.RunRequest{ThreadID: rec.ThreadID, RunID: rec.RunID,
		Modes: rec.Kwargs.StreamMode, Subgraphs: rec.Kwargs.Subgraphs})
	if err != nil {
		if in.onDisconnect == engine.OnDisconnectCancel {
			s.cancelDeparted(ctx, rec)
		}
		return err
	}
	return s.serveStream(c, f, &rec, in.onDisconnect == engine.OnDisconnectCancel)
}

// joinRunStream joins the stream of a run of a thread.
func (s *Server) joinRunStream(c echo.Context) error {
	var errs engine.Violations
	thread, run := runPath(c, &errs)
	return s.joinStream(c, thread, run, &errs)
}

// joinStatelessRunStream joins the stream of a run named by its id alone.
func (s *Server) joinStatelessRunStream(c echo.Context) error {
	var errs engine.Violations
	return s.joinStream(c, "", PathUUID(c, "run_id", &errs), &errs)
}

// joinStream streams a run from its start, in the modes of ?stream_mode (default: those of the
// run) and with its subgraphs' events as ?stream_subgraphs says (default: as the run was
// created), or after Last-Event-ID. The SDKs reconnect a dropped stream with neither query: it
// goes on as it began. ?cancel_on_disconnect cancels the run when the client leaves first. A run the scheduler no longer knows is still streamed while its output is kept.
func (s *Server) joinStream(c echo.Context, thread, run string, errs *engine.Violations) error {
	cancel := boolQuery(c, "cancel_on_disconnect", errs)
	subgraphs := boolQuery(c, "stream_subgraphs", errs)
	modes := queryModes(c, errs, engine.RunStreamModes, "stream_mode")
	after, resume := lastEventID(c, errs)
	if err := errs.Err("runs.stream"); err != nil {
		return err
	}
	streams, err := s.streamer()
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	var rec engine.RunRecord
	if thread == "" {
		rec, err = s.deps.Runs.GetByID(ctx, run)
	} else {
		rec, err = s.deps.Runs.Get(ctx, thread, run)
	}
	if engine.Is(engine.NotFound, err) && engine.AuthorizerFrom(ctx) == nil {
		// Ended and deleted (a stateless run's thread goes with it): its output may be kept.
		// Not under the user's rules: a deleted run's thread no longer tells whose it was, and
		// a run their filter hides is NotFound too.
		if kept, ok := streams.Retained(ctx, thread, run); ok {
			rec, err = engine.RunRecord{Run: engine.Run{RunID: run, ThreadID: kept}}, nil
		}
	}
	if err != nil {
		return err
	}
	if !c.QueryParams().Has("stream_subgraphs") {
		subgraphs = rec.Kwargs.Subgraphs
	}
	c.Response().Header().Set("Location", c.Request().URL.Path)
	f, err := streams.FollowRun(ctx, streaming.RunRequest{ThreadID: rec.ThreadID, RunID: run, Modes: modes,
		Subgraphs: subgraphs, After: after, Resume: resume})
	if err != nil {
		return err
	}
	return s.serveStream(c, f, &rec, cancel)
}

// threadStream follows a thread until the client leaves: ?stream_mode (or stream_modes) is
// run_modes (default), lifecycle and/or state_update.
func (s *Server) threadStream(c echo.Context) error {
	var errs engine.Violations
	id := PathUUID(c, "thread_id", &errs)
	modes := queryModes(c, &errs, engine.ThreadStreamModes, "stream_mode", "stream_modes")
	after, resume := lastEventID(c, &errs)
	if err := errs.Err("threads.stream"); err != nil {
		return err
	}
	streams, err := s.streamer()
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	if _, err := s.deps.Threads.Get(ctx, id); err != nil {
		return err
	}
	f, err := streams.FollowThread(ctx, streaming.ThreadRequest{ThreadID: id, Modes: modes, After: after, Resume: resume})
	if err != nil {
		return err
	}
	c.Response().Header().Set("Location", c.Request().URL.Path)
	return s.serveStream(c, f, nil, false)
}

// queryModes reads the stream modes of the query (the first of names given): repeated, comma
// separated or a JSON list. Unknown modes are recorded in errs.
func queryModes(c echo.Context, errs *engine.Violations, allowed []engine.StreamMode, names ...string) []engine.StreamMode {
	var name string
	var values []string
	for _, n := range names {
		if values = c.QueryParams()[n]; len(values) > 0 {
			name = n
			break
		}
	}
	var modes []string
	for _, v := range values {
		if strings.HasPrefix(strings.TrimSpace(v), "[") {
			var list []string
			if err := json.Unmarshal([]byte(v), &list); err != nil {
				errs.Add("list_type", "Input should be a stream mode, a list of them, or that list as JSON", "query", name)
				return nil
			}
			modes = append(modes, list...)
			continue
		}
		modes = append(modes, SplitComma(v)...)
	}
	return modesIn(modes, allowed, func(i int) {
		errs.Add("literal_error", "Input should be "+quoteList(allowed), "query", name, i)
	})
}

// lastEventID reads the Last-Event-ID header: the stream sequence to resume after.
func lastEventID(c echo.Context, errs *engine.Violations) (uint64, bool) {
	seq, ok, err := streaming.ParseEventID(c.Request().Header.Get("Last-Event-ID"))
	if err != nil {
		errs.Add("value_error", err.Error(), "header", "last-event-id")
	}
	return seq, ok
}

// serveStream answers with the follower's events (200, text/event-stream, one flush per
// event). When the client leaves first and cancel is set, the run is cancelled (interrupt).
func (s *Server) serveStream(c echo.Context, f Follower, rec *engine.RunRecord, cancel bool) error {
	defer f.Close()
	ctx := c.Request().Context()
	sink, err := openSSE(c)
	if err != nil {
		return nil
	}
	err = f.Serve(ctx, sink)
	switch {
	case err == nil:
	case ctx.Err() != nil || sink.failed:
		if cancel && rec != nil {
			s.cancelDeparted(ctx, *rec)
		}
	default:
		// The bus failed under a client that is still there: say so in the stream.
		s.log.Warn("stream failed", "path", c.Request().URL.Path, "err", err)
		data, _ := json.Marshal(map[string]any{"error": "StreamError", "message": streaming.Sanitize(err.Error())})
		_ = sink.WriteFrame(streaming.Frame{Event: "error", Data: data})
		_ = sink.WriteFrame(streaming.Frame{Event: "end", Data: []byte("null")})
		_ = sink.Flush()
	}
	return nil
}

// cancelDeparted cancels (interrupt) the run of a client that left.
func (s *Server) cancelDeparted(ctx context.Context, rec engine.RunRecord) {
	cctx, stop := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer stop()
	err := s.deps.Runs.Cancel(cctx, rec.ThreadID, rec.RunID, runs.ActionInterrupt, false)
	if err != nil && !engine.Is(engine.NotFound, err) {
		s.log.Warn("runs: cancelling the run of a departed client", "thread_id", rec.ThreadID, "run_id", rec.RunID, "err", err)
	}
}

// openSSE starts an event stream in answer to c: the headers, sent at once. The stream lasts
// as long as its client or its run, past the server's write timeout.
func openSSE(c echo.Context) (*sseSink, error) {
	resp := c.Response()
	h := resp.Header()
	h.Set(echo.HeaderContentType, "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	resp.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(resp.Writer)
	_ = rc.SetWriteDeadline(time.Time{})
	sink := &sseSink{resp: resp, rc: rc}
	return sink, sink.Flush()
}

// sseSink writes frames to a response.
type sseSink struct {
	resp   *echo.Response
	rc     *http.ResponseController
	buf    []byte
	failed bool
}

func (s *sseSink) WriteFrame(f streaming.Frame) error {
	s.buf = streaming.AppendFrame(s.buf[:0], f)
	if _, err := s.resp.Write(s.buf); err != nil {
		s.failed = true
		return err
	}
	return nil
}

func (s *sseSink) Flush() error {
	if err := s.rc.Flush(); err != nil {
		s.failed = !errors.Is(err, http.ErrNotSupported)
		return err
	}
	return nil
}
