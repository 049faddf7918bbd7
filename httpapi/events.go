package httpapi

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/eventlog"
)

// EventTailer reads the raw log of one aggregate; *eventlog.Log is one.
type EventTailer interface {
	Tail(ctx context.Context, agg eventlog.Aggregate, follow bool, emit func(eventlog.Event) error) error
}

func (s *Server) eventRoutes() {
	s.echo.GET("/events/:kind/:id", s.tailEvents)
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
	q := QueryFields(c, &errs)
	follow := q.Bool("follow", false)
	if err := errs.Err("events.tail"); err != nil {
		return err
	}
	ctx := c.Request().Context()
	agg := eventlog.Aggregate{Kind: kind, Tenant: engine.TenantFrom(ctx), ID: id}
	w := c.Response()
	w.Header().Set(echo.HeaderContentType, "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	enc := json.NewEncoder(w)
	err = s.deps.Events.Tail(ctx, agg, follow, func(e eventlog.Event) error {
		if err := enc.Encode(e); err != nil {
			return err
		}
		w.Flush()
		return nil
	})
	if err != nil && ctx.Err() == nil {
		s.log.Error("events: tail failed", "aggregate", agg, "err", err)
	}
	return nil
}
