package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/crons"
)

// CronService creates, changes, deletes and searches crons (*crons.Service is one).
type CronService interface {
	Create(ctx context.Context, c crons.Create) (engine.Cron, error)
	Patch(ctx context.Context, id string, p crons.Patch) (engine.Cron, error)
	Delete(ctx context.Context, id string) error
	Search(ctx context.Context, q engine.CronQuery) ([]engine.Cron, int, error)
}

func (s *Server) cronRoutes() {
	r := s.needCrons
	s.echo.POST("/runs/crons", r(s.createCron))
	s.echo.POST("/threads/:thread_id/runs/crons", r(s.createCron))
	s.echo.PATCH("/runs/crons/:cron_id", r(s.patchCron))
	s.echo.DELETE("/runs/crons/:cron_id", r(s.deleteCron))
	s.echo.POST("/runs/crons/search", r(s.searchCrons))
	s.echo.POST("/runs/crons/count", r(s.countCrons))
}

// needCrons answers 503 instead of calling h when the server has no cron service.
func (s *Server) needCrons(h echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if s.deps.Crons == nil {
			return engine.E(engine.Op("crons"), engine.Unavailable, "Crons are not served: no cron service is configured.")
		}
		return h(c)
	}
}

// cronFields are the fields a cron search may select (the SDKs' CronSelectField).
var cronFields = []string{"cron_id", "assistant_id", "thread_id", "end_time", "schedule", "created_at", "updated_at",
	"user_id", "payload", "next_run_date", "metadata", "timezone", "enabled", "on_run_completed"}

// cronPayloadFields are the run fields of a cron's payload, by their JSON name.
var cronPayloadFields = []string{"input", "config", "context", "metadata", "interrupt_before", "interrupt_after",
	"webhook", "stream_mode", "durability"}

// cronPayload reads the run fields of a cron body with the checks of a run's body.
func cronPayload(f *Fields) engine.CronPayload {
	c := readRunFields(f, false).create
	return engine.CronPayload{
		AssistantID: c.AssistantID, Input: c.Input, Config: c.Config, Context: c.Context, Metadata: c.Metadata,
		InterruptBefore: c.InterruptBefore, InterruptAfter: c.InterruptAfter, Webhook: c.Webhook,
		MultitaskStrategy: c.MultitaskStrategy, StreamMode: c.StreamMode, Durability: c.Durability,
	}
}

// endTime reads end_time: an ISO 8601 date-time, or null.
func endTime(f *Fields) *engine.Time {
	if !f.Present("end_time") {
		return nil
	}
	var t engine.Time
	if json.Unmarshal(f.raw["end_time"], &t) == nil && !t.IsZero() {
		return &t
	}
	// Python's isoformat() of a naive datetime has no offset: it is taken as UTC.
	var s string
	if json.Unmarshal(f.raw["end_time"], &s) == nil {
		if naive, err := time.Parse("2006-01-02T15:04:05.999999999", s); err == nil {
			t = engine.At(naive)
			return &t
		}
	}
	f.Add("datetime_parsing", "Input should be a valid datetime", "end_time")
	return nil
}

// enabledField reads enabled, or is_enabled as some clients name it.
func enabledField(f *Fields) *bool {
	for _, name := range []string{"enabled", "is_enabled"} {
		if f.Present(name) {
			b := f.Bool(name, true)
			return &b
		}
	}
	return nil
}

func (s *Server) createCron(c echo.Context) error {
	const op = "crons.create"
	var errs engine.Violations
	thread := ""
	if c.Param("thread_id") != "" {
		thread = PathUUID(c, "thread_id", &errs)
	}
	f, err := ReadBody(c, &errs)
	if err != nil {
		return err
	}
	if err := stateWithin(f, op, "input"); err != nil {
		return err
	}
	f.Require("assistant_id")
	f.Require("schedule")
	req := crons.Create{
		ThreadID:       thread,
		Schedule:       f.String("schedule"),
		Timezone:       f.String("timezone"),
		EndTime:        endTime(f),
		Enabled:        enabledField(f),
		OnRunCompleted: f.Enum("on_run_completed", engine.OnCompletionDelete, engine.OnCompletionDelete, engine.OnCompletionKeep),
		Metadata:       f.Object("metadata"),
		Payload:        cronPayload(f),
	}
	if err := errs.Err(op); err != nil {
		return err
	}
	cr, err := s.deps.Crons.Create(c.Request().Context(), req)
	if err != nil {
		return err
	}
	return OK(c, cr.Masked())
}

func (s *Server) patchCron(c echo.Context) error {
	const op = "crons.patch"
	var errs engine.Violations
	id := PathUUID(c, "cron_id", &errs)
	f, err := ReadBody(c, &errs)
	if err != nil {
		return err
	}
	if err := stateWithin(f, op, "input"); err != nil {
		return err
	}
	p := crons.Patch{
		Schedule:   optString(f, "schedule"),
		Timezone:   optString(f, "timezone"),
		EndTime:    endTime(f),
		EndTimeSet: f.raw["end_time"] != nil,
		Enabled:    enabledField(f),
		Metadata:   f.Object("metadata"),
		Payload:    cronPayload(f),
		PayloadSet: map[string]bool{},
	}
	if f.Present("on_run_completed") {
		v := f.Enum("on_run_completed", "", engine.OnCompletionDelete, engine.OnCompletionKeep)
		p.OnRunCompleted = &v
	}
	for _, name := range cronPayloadFields {
		p.PayloadSet[name] = f.raw[name] != nil
	}
	// metadata is the cron's own; a run's metadata comes only with the cron's creation.
	p.PayloadSet["metadata"] = false
	if err := errs.Err(op); err != nil {
		return err
	}
	cr, err := s.deps.Crons.Patch(c.Request().Context(), id, p)
	if err != nil {
		return err
	}
	return OK(c, cr.Masked())
}

func (s *Server) deleteCron(c echo.Context) error {
	var errs engine.Violations
	id := PathUUID(c, "cron_id", &errs)
	if err := errs.Err("crons.delete"); err != nil {
		return err
	}
	if err := s.deps.Crons.Delete(c.Request().Context(), id); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// cronQuery reads the filters shared by search and count.
func (s *Server) cronQuery(f *Fields) engine.CronQuery {
	q := engine.CronQuery{ThreadID: f.UUID("thread_id"), Metadata: f.Object("metadata")}
	if f.Present("assistant_id") {
		raw := f.String("assistant_id")
		if id, ok := s.deps.Assistants.ID(raw); ok {
			q.AssistantID = id
		} else if raw != "" {
			f.Add("uuid_parsing", "Input should be a valid UUID or a registered graph id", "assistant_id")
		}
	}
	if f.Present("enabled") {
		b := f.Bool("enabled", true)
		q.Enabled = &b
	}
	return q
}

func (s *Server) searchCrons(c echo.Context) error {
	var errs engine.Violations
	f, err := ReadBody(c, &errs)
	if err != nil {
		return err
	}
	q := s.cronQuery(f)
	q.Limit = f.Limit(10, 1)
	q.Offset = f.Int("offset", 0, 0)
	q.SortBy = f.Enum("sort_by", "created_at", engine.CronSortFields...)
	q.SortOrder = f.Enum("sort_order", "desc", "asc", "desc")
	sel := f.Strings("select")
	for i, name := range sel {
		if !slices.Contains(cronFields, name) {
			errs.Add("literal_error", "Input should be one of "+quoteList(cronFields), "body", "select", i)
		}
	}
	if err := errs.Err("crons.search"); err != nil {
		return err
	}
	cs, total, err := s.deps.Crons.Search(c.Request().Context(), q)
	if err != nil {
		return err
	}
	paginate(c, total, q.Offset, len(cs))
	out, err := SelectFields(maskAll(cs), sel)
	if err != nil {
		return err
	}
	return OK(c, out)
}

func (s *Server) countCrons(c echo.Context) error {
	var errs engine.Violations
	f, err := ReadBody(c, &errs)
	if err != nil {
		return err
	}
	q := s.cronQuery(f)
	if err := errs.Err("crons.count"); err != nil {
		return err
	}
	_, total, err := s.deps.Crons.Search(c.Request().Context(), q)
	if err != nil {
		return err
	}
	return OK(c, total)
}
