package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/eventlog"
)

// EventTailer reads the raw log of one aggregate from a stream sequence on; *eventlog.Log is one.
type EventTailer interface {
	TailFrom(ctx context.Context, agg eventlog.Aggregate, from uint64, follow bool, emit func(eventlog.Event) error) error
}

// maxEventTypes bounds the type filter of one request.
const maxEventTypes = 32

// eventType is what an event type may be: a lowercase token (engine.ThreadCheckpoint, …).
var eventType = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

func (s *Server) eventRoutes() {
	s.echo.GET("/events/:kind/:id", s.tailEvents)
	s.echo.GET("/threads/:thread_id/events", s.threadLog)
}

// eventsQuery is a request for a page of one aggregate's raw log.
type eventsQuery struct {
	agg    eventlog.Aggregate
	since  uint64   // only events after this stream sequence
	types  []string // only these event types; all when empty
	limit  int      // stop after this many events (the last message whole); 0: no limit
	follow bool
}

// tailEvents streams an aggregate's events as JSON lines, each written and flushed as it is read
// from the log (never the whole history held at once): what `jetgraph events` prints, for a
// data folder a running server holds. The id must be one of an aggregate (engine.AggregateID):
// a pattern never reaches a subject.
func (s *Server) tailEvents(c echo.Context) error {
	var errs engine.Violations
	kind := c.Param("kind")
	id, err := engine.AggregateID(kind, c.Param("id"))
	switch {
	case kind != "thread" && kind != "assistant" && kind != "store" && kind != "cron":
		errs.Add("literal_error", "Input should be 'thread', 'assistant', 'cron' or 'store'", "path", "kind")
	case err != nil:
		errs.Add("value_error", "Invalid id: "+err.Error(), "path", "id")
	}
	return s.streamEvents(c, kind, id, &errs)
}

// threadLog is GET /threads/{thread_id}/events: the raw log of one thread, for tools that
// want it without a NATS client. A page is ?since=<the seq of the last event seen>&limit=N; an
// empty page is the end.
func (s *Server) threadLog(c echo.Context) error {
	var errs engine.Violations
	id, err := ParseUUID(c.Param("thread_id"))
	if err != nil {
		errs.Add("uuid_parsing", "Input should be a valid UUID", "path", "thread_id")
	}
	return s.streamEvents(c, "thread", id, &errs)
}

// streamEvents reads the query (since, type, limit, follow) and writes the page. An aggregate
// without any event is a 404 (the header waits for the first event); one whose events all
// precede since, or match no type, is an empty 200.
func (s *Server) streamEvents(c echo.Context, kind, id string, errs *engine.Violations) error {
	q := QueryFields(c, errs)
	eq := eventsQuery{follow: q.Bool("follow", false), since: uint64(q.Int("since", 0, 0)), limit: q.Int("limit", 0, 0)}
	for _, v := range c.QueryParams()["type"] {
		for t := range strings.SplitSeq(v, ",") {
			if !eventType.MatchString(t) {
				errs.Add("string_pattern_mismatch", "Each type should match "+eventType.String(), "query", "type")
			} else {
				eq.types = append(eq.types, t)
			}
		}
	}
	if len(eq.types) > maxEventTypes {
		errs.Add("too_long", "At most 32 types (maxEventTypes)", "query", "type")
	}
	if err := errs.Err("events.tail"); err != nil {
		return err
	}
	ctx := c.Request().Context()
	if err := s.mayReadLog(ctx, kind, id); err != nil {
		return err
	}
	ctx = engine.Asked(ctx)
	eq.agg = eventlog.Aggregate{Kind: kind, Tenant: engine.TenantFrom(ctx), ID: id}
	if eq.follow || eq.since > 0 { // an unknown aggregate is refused, not followed
		if exists, err := s.hasEvents(ctx, eq.agg); err != nil {
			return err
		} else if !exists {
			return engine.E(engine.Op("events.tail"), engine.NotFound, "No events of "+kind+" "+id)
		}
	}
	w := c.Response()
	enc := json.NewEncoder(w)
	n, stop := 0, errors.New("page full")
	var lastSeq uint64
	start := func() {
		if !w.Committed {
			w.Header().Set(echo.HeaderContentType, "application/x-ndjson")
			w.WriteHeader(http.StatusOK)
		}
	}
	if eq.follow || eq.since > 0 {
		start()
		w.Flush()
	}
	err := s.deps.Events.TailFrom(ctx, eq.agg, eq.since+1, eq.follow, func(e eventlog.Event) error {
		if eq.limit > 0 && n >= eq.limit && e.Seq != lastSeq { // a packed message is never split
			return stop
		}
		lastSeq = e.Seq
		start() // the aggregate exists: its first event says so, even one the types filter out
		if len(eq.types) > 0 && !slices.Contains(eq.types, e.Type) {
			return nil
		}
		n++
		e.Data = engine.MaskEventData(e.Aggregate.Kind, e.Type, e.Data) // shown as every answer shows it
		if err := enc.Encode(e); err != nil {
			return err
		}
		w.Flush()
		return nil
	})
	if errors.Is(err, stop) {
		err = nil
	}
	if err != nil && !w.Committed {
		return engine.E(engine.Op("events.tail"), err)
	}
	if err != nil && ctx.Err() == nil {
		s.log.Error("events: tail failed", "aggregate", eq.agg, "err", err)
	}
	if !w.Committed {
		return engine.E(engine.Op("events.tail"), engine.NotFound, "No events of "+kind+" "+id)
	}
	return nil
}

// hasEvents reports whether agg has at least one event.
func (s *Server) hasEvents(ctx context.Context, agg eventlog.Aggregate) (bool, error) {
	found := errors.New("found")
	switch err := s.deps.Events.TailFrom(ctx, agg, 1, false, func(eventlog.Event) error { return found }); {
	case err == nil:
		return false, nil
	case errors.Is(err, found):
		return true, nil
	default:
		return false, engine.E(engine.Op("events.tail"), err)
	}
}

// mayReadLog asks the user's rules whether they may read the raw log of aggregate kind id: a
// thread's as threads.read (runs included), an assistant's as assistants.read, each filter
// matched against the record's metadata. A cron's log is shown only when the rules' crons.read
// filters nothing, and a store namespace's never (the rules rewrite namespaces, which a log's id
// cannot follow). Whatever the rules hide is missing, as an aggregate without events is.
func (s *Server) mayReadLog(ctx context.Context, kind, id string) error {
	if engine.AuthorizerFrom(ctx) == nil {
		return nil
	}
	hidden := func(err error) error {
		if err == nil || engine.Is(engine.NotFound, err) {
			return engine.E(engine.Op("events.tail"), engine.NotFound, "No events of "+kind+" "+id)
		}
		return err
	}
	switch kind {
	case "thread":
		if _, err := s.deps.Threads.Get(ctx, id); err != nil {
			return hidden(err)
		}
		return nil
	case "assistant":
		_, f, err := engine.Authorize(ctx, engine.ResourceAssistants, engine.ActionRead, func() map[string]any {
			return map[string]any{"assistant_id": id}
		})
		if err != nil {
			return err
		}
		a, err := s.deps.Assistants.Get(engine.Asked(ctx), id)
		if err != nil || !f.Match(a.Metadata) {
			return hidden(err)
		}
		return nil
	case "cron":
		_, f, err := engine.Authorize(ctx, engine.ResourceCrons, engine.ActionRead, func() map[string]any {
			return map[string]any{"cron_id": id}
		})
		if err != nil || f.IsZero() {
			return err
		}
	}
	return hidden(nil)
}
