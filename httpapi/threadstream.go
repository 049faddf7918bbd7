package httpapi

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/labstack/echo/v4"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/streaming"
	"github.com/jetgraph/jetgraph/engine/threadstream"
)

// OutputService reads a thread's output, unshaped, for the thread-centric protocol
// (*streaming.Streamer is one).
type OutputService interface {
	FollowOutput(ctx context.Context, thread string, since uint64, resume bool) (*streaming.OutputFollower, error)
}

// threadStreamHeartbeat is how long an event stream stays silent before a comment (SSE) or a
// ping (WebSocket) keeps it alive; the JS SDK reconnects a stream idle for long.
const threadStreamHeartbeat = 5 * time.Second

// threadStreamRoutes serves the thread-centric protocol (engine/threadstream): commands posted
// to a thread, and its events over SSE (POST) or a WebSocket (GET with Upgrade).
func (s *Server) threadStreamRoutes() {
	s.echo.POST("/threads/:thread_id/commands", s.threadCommand)
	s.echo.POST("/threads/:thread_id/stream/events", s.threadEvents)
	s.echo.GET("/threads/:thread_id/stream/events", s.threadSocket)
}

// protocol returns the protocol's commands and the output bus, or the error of a server built
// without them.
func (s *Server) protocol(op string) (*threadstream.Commands, OutputService, error) {
	if s.deps.Outputs == nil || s.deps.Runs == nil {
		return nil, nil, engine.E(engine.Op(op), engine.Unavailable, "Streaming is not configured on this server.")
	}
	cmds := &threadstream.Commands{Runs: s.deps.Runs}
	if s.deps.Runner != nil {
		cmds.States = s.deps.Runner
	}
	return cmds, s.deps.Outputs, nil
}

// threadCommand executes one command: 200 with the protocol's response (a success or an error
// with its code); 422 for a body that is not a command.
func (s *Server) threadCommand(c echo.Context) error {
	var errs engine.Violations
	id := PathUUID(c, "thread_id", &errs)
	f, err := ReadBody(c, &errs)
	if err != nil {
		return err
	}
	var cmdID uint64
	if f.Require("id") && !f.decode("id", &cmdID) {
		f.Add("type_error", "id must be a non-negative integer", "id")
	}
	method := ""
	if f.Require("method") {
		method = f.String("method")
	}
	if err := errs.Err("threads.commands"); err != nil {
		return err
	}
	cmds, _, err := s.protocol("threads.commands")
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, cmds.Do(c.Request().Context(), id, cmdID, method, f.Raw()["params"]))
}

// eventsFilter reads a subscription's filter from the body.
func eventsFilter(c echo.Context, errs *engine.Violations) (threadstream.Filter, error) {
	var filter threadstream.Filter
	body, err := ReadJSON(c, errs)
	if err != nil || len(*errs) > 0 {
		return filter, err
	}
	if err := json.Unmarshal(body, &filter); err != nil {
		errs.Add("type_error", "the body must be {channels, namespaces?, depth?, since?}: "+err.Error(), "body")
		return filter, nil
	}
	filter.Validate(errs, "body")
	return filter, nil
}

// threadEvents streams a thread's events over SSE: those of the filter, from the start of the
// active (or latest) run, or after since.
func (s *Server) threadEvents(c echo.Context) error {
	var errs engine.Violations
	id := PathUUID(c, "thread_id", &errs)
	filter, err := eventsFilter(c, &errs)
	if err != nil {
		return err
	}
	if err := errs.Err("threads.stream_events"); err != nil {
		return err
	}
	_, outputs, err := s.protocol("threads.stream_events")
	if err != nil {
		return err
	}
	// A thread that does not exist yet is not refused: the stream waits for the run.start that
	// creates it (the SDKs subscribe before starting a run), as a WebSocket's subscription does.
	// Its output is read in the caller's tenant, so no other tenant's thread is ever seen.
	ctx := c.Request().Context()
	if err := s.mayFollowThread(ctx, id); err != nil {
		return err
	}
	var since uint64
	if filter.Since != nil {
		since = *filter.Since
	}
	src, err := outputs.FollowOutput(ctx, id, since, filter.Since != nil)
	if err != nil {
		return err
	}
	defer src.Close()
	sse, err := openSSE(c)
	if err != nil {
		return nil
	}
	sink := &lockedSink{sink: sse}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	go every(ctx, threadStreamHeartbeat, sink.heartbeat)
	var buf []byte
	err = threadstream.Pump(ctx, src, filter, func(e *threadstream.Event) error {
		buf, _ = json.Marshal(e)
		return sink.WriteFrame(streaming.Frame{Event: e.Method, Data: buf, ID: e.EventID})
	}, sink.Flush)
	// Pump only returns with an error; it is news when neither the client nor the server ended it.
	if ctx.Err() == nil && !sink.sink.failed {
		s.log.Warn("thread event stream failed", "thread_id", id, "err", err)
	}
	return nil
}

// lockedSink is an SSE sink written by the stream and its heartbeat.
type lockedSink struct {
	mu    sync.Mutex
	sink  *sseSink
	wrote bool
}

func (l *lockedSink) WriteFrame(f streaming.Frame) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.wrote = true
	return l.sink.WriteFrame(f)
}

func (l *lockedSink) Flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.sink.Flush()
}

// heartbeat sends a comment when nothing else was sent since the last call.
func (l *lockedSink) heartbeat(context.Context) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.wrote {
		_ = l.sink.WriteFrame(streaming.Frame{Comment: "heartbeat"})
		_ = l.sink.Flush()
	}
	l.wrote = false
}

// every calls f every period until ctx ends.
func every(ctx context.Context, period time.Duration, f func(context.Context)) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			f(ctx)
		}
	}
}

// threadSocket serves the protocol over a WebSocket: commands and their responses, and the
// events of each subscription.subscribe (from the start of the active or latest run, as a new
// SSE stream), on one connection.
func (s *Server) threadSocket(c echo.Context) error {
	var errs engine.Violations
	id := PathUUID(c, "thread_id", &errs)
	if err := errs.Err("threads.stream_socket"); err != nil {
		return err
	}
	cmds, outputs, err := s.protocol("threads.stream_socket")
	if err != nil {
		return err
	}
	if err := s.mayFollowThread(c.Request().Context(), id); err != nil {
		return err // before the upgrade: a plain 404 (or the rules' refusal)
	}
	conn, err := websocket.Accept(c.Response(), c.Request(), &websocket.AcceptOptions{OriginPatterns: s.deps.CORSOrigins})
	if err != nil {
		return nil // Accept answered the request
	}
	conn.SetReadLimit(engine.MaxStateBodyBytes)
	ws := &socket{conn: conn, thread: id, subs: map[string]threadstream.Filter{}}
	ctx, stop := context.WithCancel(c.Request().Context())
	defer func() {
		stop()
		ws.wg.Wait()
		_ = conn.CloseNow()
	}()
	go every(ctx, threadStreamHeartbeat, ws.ping)
	for {
		_, data, err := conn.Read(ctx)
		if err != nil {
			return nil
		}
		var cmd threadstream.Command
		if json.Unmarshal(data, &cmd) != nil || cmd.ID == nil {
			_ = ws.send(ctx, map[string]any{"type": threadstream.TypeError, "id": nil,
				"error": threadstream.ErrInvalidArgument, "message": "a command is {id, method, params}"})
			continue
		}
		var resp threadstream.Response
		switch cmd.Method {
		case threadstream.MethodSubscribe:
			resp = ws.subscribe(ctx, outputs, *cmd.ID, cmd.Params)
		case threadstream.MethodUnsubscribe:
			resp = ws.unsubscribe(*cmd.ID, cmd.Params)
		default:
			resp = cmds.Do(ctx, id, *cmd.ID, cmd.Method, cmd.Params)
		}
		if ws.send(ctx, resp) != nil {
			return nil
		}
	}
}

// socket is one WebSocket connection of the protocol and its subscriptions. The events of
// every subscription go out of one ordered reading of the thread's output, each event once: a
// client that sees a run's end has seen all that came before it on any of its subscriptions.
type socket struct {
	conn   *websocket.Conn
	thread string
	wmu    sync.Mutex // one writer at a time
	wg     sync.WaitGroup

	mu      sync.Mutex
	subs    map[string]threadstream.Filter
	filters []threadstream.Filter // of subs, replaced whole on every change
	next    int
	pump    context.CancelFunc // stops the reading in progress
	done    chan struct{}      // closed when it stopped
	// sent is the seq of the last event sent, and sentBy the subscriptions it was sent for:
	// a new reading skips what they were already sent.
	sent   uint64
	sentBy []threadstream.Filter
}

// send writes v as one text message.
func (w *socket) send(ctx context.Context, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	w.wmu.Lock()
	defer w.wmu.Unlock()
	return w.conn.Write(ctx, websocket.MessageText, data)
}

// ping keeps the connection alive through proxies.
func (w *socket) ping(ctx context.Context) {
	pctx, cancel := context.WithTimeout(ctx, threadStreamHeartbeat)
	defer cancel()
	_ = w.conn.Ping(pctx)
}

// anyMatches reports whether one of filters asks for e.
func anyMatches(filters []threadstream.Filter, e *threadstream.Event) bool {
	for _, f := range filters {
		if f.Matches(e) {
			return true
		}
	}
	return false
}

// restart replaces the reading of the thread's output by one for the current subscriptions,
// from the start of the thread's active (or latest) run: the added subscription gets that run's
// events so far, and the others nothing twice that it does not ask for.
func (w *socket) restart(ctx context.Context, outputs OutputService, added threadstream.Filter) error {
	w.mu.Lock()
	stop, done := w.pump, w.done
	w.mu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pump, w.done = nil, nil
	if len(w.filters) == 0 {
		return nil
	}
	src, err := outputs.FollowOutput(ctx, w.thread, 0, false)
	if err != nil {
		return err
	}
	pctx, cancel := context.WithCancel(ctx)
	w.pump, w.done = cancel, make(chan struct{})
	sent, sentBy, done := w.sent, w.sentBy, w.done
	all := threadstream.Filter{Channels: threadstream.Channels}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		defer close(done)
		defer src.Close()
		_ = threadstream.Pump(pctx, src, all, func(e *threadstream.Event) error {
			w.mu.Lock()
			filters := w.filters
			w.mu.Unlock()
			// What the new subscription asks for is sent again: the client hands it to the
			// new subscription (and drops it, by event_id, for the others).
			if !anyMatches(filters, e) || e.Seq <= sent && anyMatches(sentBy, e) && !added.Matches(e) {
				return nil
			}
			if pctx.Err() != nil {
				return pctx.Err()
			}
			// Written under the connection's context: cancelling a write closes the connection.
			if err := w.send(ctx, e); err != nil {
				return err
			}
			w.mu.Lock()
			w.sent, w.sentBy = e.Seq, filters
			w.mu.Unlock()
			return nil
		}, func() error { return nil })
	}()
	return nil
}

// subscribe adds a subscription and restarts the reading for it.
func (w *socket) subscribe(ctx context.Context, outputs OutputService, cmdID uint64, params json.RawMessage) threadstream.Response {
	var filter threadstream.Filter
	if len(params) > 0 {
		if err := json.Unmarshal(params, &filter); err != nil {
			return threadstream.Failure(cmdID, threadstream.ErrInvalidArgument, "params: "+err.Error())
		}
	}
	var errs engine.Violations
	filter.Validate(&errs, "params")
	if len(errs) > 0 {
		return threadstream.Failure(cmdID, threadstream.ErrInvalidArgument, errs[0].Msg)
	}
	filter.Since = nil // a subscription starts at the run's start; the client drops what it has
	w.mu.Lock()
	w.next++
	subID := "sub-" + strconv.Itoa(w.next)
	w.subs[subID] = filter
	w.filters = append(slices.Clone(w.filters), filter)
	w.mu.Unlock()
	if err := w.restart(ctx, outputs, filter); err != nil {
		return threadstream.Failure(cmdID, threadstream.ErrUnknownError, "the thread's output cannot be read")
	}
	return threadstream.Success(cmdID, threadstream.SubscribeResult{SubscriptionID: subID})
}

// unsubscribe removes a subscription: its events stop with the next one read.
func (w *socket) unsubscribe(cmdID uint64, params json.RawMessage) threadstream.Response {
	var p threadstream.UnsubscribeParams
	_ = json.Unmarshal(params, &p)
	w.mu.Lock()
	_, ok := w.subs[p.SubscriptionID]
	delete(w.subs, p.SubscriptionID)
	w.filters = slices.Collect(maps.Values(w.subs))
	w.mu.Unlock()
	if !ok {
		return threadstream.Failure(cmdID, threadstream.ErrNoSuchSubscription, "no subscription "+p.SubscriptionID)
	}
	return threadstream.Success(cmdID, nil)
}
