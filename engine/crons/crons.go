// Package crons is the write and read side of crons, and the scheduler that fires them.
//
// A cron is an aggregate of its own on the log (cron.<tenant>.<id>.*): its creation, changes
// and deletion are events, and so is every tick it fires. Every process runs the scheduler; a
// tick is fired exactly once whatever the number of processes sharing the log:
//
//   - Claiming a tick is appending a CronFired event that expects the cron's version the tick was
//     decided on (JetStream's expected-last-subject-sequence). Of the processes that saw the tick
//     due, one append is stored; the others conflict, catch up, and find the tick gone (the event
//     moved next_run_date past it). The event records the run id (a UUIDv7) and thread id the
//     tick's run is created with.
//   - The run is created with that recorded id (runs.Create.RunID), which makes its creation
//     idempotent: a run of that id already on its thread is not created again. A CronFireDone
//     event then closes the fire. A process that dies between the two appends leaves the fire
//     pending in the projection: any process completes it (its own at once, another's after
//     pendingGrace), and no tick of the cron fires while one is pending, so ticks' runs are made
//     in order.
//   - A stateless cron's tick makes a thread of the recorded id; a thread of that id that existed
//     and is gone (its run ended and on_run_completed deleted it) is never made again.
//
// Catch-up: a tick is due once its time has come. Ticks missed by up to CatchUpWindow (10 s: a
// fire left pending by a process that died, a slow scan) all fire, in order, as soon as a
// process is up; a cron whose next tick is older than that (no process was up) fires the most
// recent missed tick once and skips the older ones (counted in the fire's `skipped`). A disabled cron fires nothing and catches nothing up:
// enabling it again fires from the next tick on.
package crons

import (
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"time"

	"github.com/google/uuid"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/assistants"
	"github.com/jetgraph/jetgraph/engine/command"
	"github.com/jetgraph/jetgraph/engine/runs"
	"github.com/jetgraph/jetgraph/engine/threads"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/projections"
)

// Runs is what the scheduler needs of the run service: creating a run (engine/runs does the
// scheduling; a cron only decides when).
type Runs interface {
	Create(ctx context.Context, c runs.Create) (engine.RunRecord, error)
}

// Service manages crons and fires them.
type Service struct {
	cmd        *command.Runner
	view       *projections.Crons
	assistants *assistants.Service
	threads    *threads.Service
	runs       Runs
	log        *slog.Logger
	now        func() time.Time
}

// New returns the cron service writing through cmd and reading view.
func New(cmd *command.Runner, view *projections.Crons, as *assistants.Service, th *threads.Service, rs Runs, log *slog.Logger) *Service {
	if log == nil {
		log = slog.Default()
	}
	return &Service{cmd: cmd, view: view, assistants: as, threads: th, runs: rs, log: log, now: time.Now}
}

// Aggregate names cron id of the context's tenant in the log.
func Aggregate(ctx context.Context, id string) eventlog.Aggregate {
	return eventlog.Aggregate{Kind: "cron", Tenant: engine.TenantFrom(ctx), ID: id}
}

// NotFound is the error for a cron that does not exist.
func NotFound(op string) error { return engine.E(engine.Op(op), engine.NotFound, "Cron not found") }

// Create is a request to create a cron.
type Create struct {
	ThreadID       string // "" for a stateless cron
	Schedule       string
	Timezone       string
	EndTime        *engine.Time
	Enabled        *bool  // nil: enabled
	OnRunCompleted string // stateless crons: engine.OnCompletionDelete (default) or Keep
	Metadata       map[string]any
	Payload        engine.CronPayload
}

// Create validates and records a cron. Every problem of the request is listed in one 422; an
// unknown assistant or thread is a 404.
func (s *Service) Create(ctx context.Context, c Create) (engine.Cron, error) {
	const op = "crons.create"
	enabled := c.Enabled == nil || *c.Enabled
	if c.OnRunCompleted == "" {
		c.OnRunCompleted = engine.OnCompletionDelete
	}
	spec := engine.CronSpec{AssistantID: c.Payload.AssistantID, ThreadID: c.ThreadID, Schedule: c.Schedule,
		Timezone: c.Timezone, EndTime: c.EndTime, Enabled: enabled, OnRunCompleted: c.OnRunCompleted,
		Metadata: c.Metadata, Payload: c.Payload}
	id := uuid.NewString()
	value, _, err := engine.Authorize(ctx, engine.ResourceCrons, engine.ActionCreate, func() map[string]any {
		v := map[string]any{"payload": payloadValue(c.Payload), "schedule": c.Schedule, "cron_id": id,
			"thread_id": engine.StringValue(c.ThreadID), "user_id": nil, "end_time": c.EndTime, "metadata": engine.ObjectValue(c.Metadata)}
		if u, ok := engine.UserFrom(ctx); ok {
			v["user_id"] = u.Identity
		}
		return v
	})
	if err != nil {
		return engine.Cron{}, err
	}
	if spec.Metadata, err = engine.ValueMap(op, value, "metadata", spec.Metadata); err != nil {
		return engine.Cron{}, err
	}
	next, err := s.check(ctx, op, &spec, nil)
	if err != nil {
		return engine.Cron{}, err
	}
	agg := Aggregate(ctx, id)
	_, err = s.cmd.Run(ctx, op, func() (command.Decision, error) {
		return s.decide(op, agg, engine.CronCreated, engine.CronCreatedData{CronSpec: spec, NextRunDate: next})
	})
	if err != nil {
		return engine.Cron{}, err
	}
	st, err := s.state(ctx, op, agg.ID) // what the user made or changed: no need to ask again
	return st.Cron, err
}

// check validates spec (stored is the cron's stored payload, for secrets sent back masked),
// resolves its assistant to an id, and returns its next tick from now.
func (s *Service) check(ctx context.Context, op string, spec *engine.CronSpec, stored *engine.CronPayload) (*engine.Time, error) {
	var v engine.Violations
	sched, err := ParseSchedule(spec.Schedule, spec.Timezone)
	if err != nil {
		loc := "schedule"
		if spec.Timezone != "" && !validZone(spec.Timezone) {
			loc = "timezone"
		}
		v.Add("value_error", "Invalid cron schedule: "+err.Error(), "body", loc)
	}
	var storedConfig, storedContext map[string]any
	if stored != nil {
		storedConfig, storedContext = stored.Config, stored.Context
	}
	p := &spec.Payload
	p.Config = engine.KeepSecretsMap(&v, p.Config, storedConfig, "body", "config")
	p.Context = engine.KeepSecretsMap(&v, p.Context, storedContext, "body", "context")
	p.Config = withAuth(ctx, p.Config)
	var storedWebhook any
	if stored != nil {
		storedWebhook = stored.Webhook
	}
	p.Webhook = engine.KeepSecretURL(&v, p.Webhook, storedWebhook, "body", "webhook")
	if err := v.Err(op); err != nil {
		return nil, err
	}
	a, err := s.assistants.Resolve(ctx, p.AssistantID)
	if engine.Is(engine.NotFound, err) {
		return nil, assistants.NoAssistant(op, p.AssistantID)
	} else if err != nil {
		return nil, err
	}
	p.AssistantID, spec.AssistantID = a.AssistantID, a.AssistantID
	if spec.ThreadID != "" {
		if err := s.readableThread(ctx, op, spec.ThreadID); err != nil {
			return nil, err
		}
	}
	return nextTick(sched, spec.EndTime, s.now()), nil
}

// readableThread checks that the thread exists and the user's rules let them read it: a cron
// makes runs on it as its owner, so it needs no less than reading it. The threads service asks
// the rules (threads.read) and answers one they may not read NotFound, as if it did not exist.
func (s *Service) readableThread(ctx context.Context, op, id string) error {
	if _, err := s.threads.Info(ctx, id); err != nil {
		return engine.E(engine.Op(op), err)
	}
	return nil
}

// payloadValue is p as a rule's value shows it: the JSON object the request sent.
func payloadValue(p engine.CronPayload) map[string]any {
	var m map[string]any
	if b, err := json.Marshal(p); err == nil {
		_ = json.Unmarshal(b, &m) // a payload marshalled a moment ago decodes
	}
	return m
}

// authorize asks the user's rules about action on the record id and returns the filter it must
// match; extra adds the fields of the action to the value.
func authorize(ctx context.Context, action engine.AuthAction, id string, extra map[string]any) (map[string]any, engine.Filter, error) {
	return engine.AuthorizeRecord(ctx, engine.ResourceCrons, action, "cron_id", id, extra)
}

// validZone reports whether tz names a time zone.
func validZone(tz string) bool {
	_, err := time.LoadLocation(tz)
	return err == nil
}

// nextTick is the first tick of sched after t, nil when there is none before end.
func nextTick(sched Schedule, end *engine.Time, t time.Time) *engine.Time {
	n, ok := sched.Next(t)
	if !ok || end != nil && n.After(end.Time) {
		return nil
	}
	at := engine.At(n)
	return &at
}

// decide is the one-event decision of a command on agg.
func (s *Service) decide(op string, agg eventlog.Aggregate, typ string, data any) (command.Decision, error) {
	return s.cmd.One(op, agg, typ, data)
}

// Get returns the cron, catching up with the log once before it says NotFound; one the user's
// rules do not let them read is NotFound too.
func (s *Service) Get(ctx context.Context, id string) (engine.Cron, error) {
	const op = "crons.get"
	_, filter, err := authorize(ctx, engine.ActionRead, id, nil)
	if err != nil {
		return engine.Cron{}, err
	}
	st, err := s.stateFiltered(ctx, op, id, filter)
	return st.Cron, err
}

// stateFiltered is state for a user whose rules filter crons with f: a cron that does not match
// is NotFound.
func (s *Service) stateFiltered(ctx context.Context, op, id string, f engine.Filter) (engine.CronState, error) {
	st, err := s.state(ctx, op, id)
	if err == nil && !f.Match(st.Metadata) {
		return engine.CronState{}, NotFound(op)
	}
	return st, err
}

func (s *Service) state(ctx context.Context, op, id string) (engine.CronState, error) {
	tenant := engine.TenantFrom(ctx)
	st, ok, err := s.view.Get(tenant, id)
	if err == nil && !ok {
		if cerr := s.cmd.Projector.CatchUp(ctx); cerr == nil {
			st, ok, err = s.view.Get(tenant, id)
		}
	}
	if err != nil {
		return st, engine.E(engine.Op(op), err)
	}
	if !ok {
		return st, NotFound(op)
	}
	return st, nil
}

// Patch is a change to a cron: nil fields keep their value; metadata is merged over the old;
// payload fields given replace the old ones (PayloadSet names them).
type Patch struct {
	Schedule       *string
	Timezone       *string
	EndTime        *engine.Time
	EndTimeSet     bool // end_time given (null clears it)
	Enabled        *bool
	OnRunCompleted *string
	Metadata       map[string]any
	Payload        engine.CronPayload
	PayloadSet     map[string]bool // the payload fields given, by their JSON name
}

// Patch changes a cron. A change of schedule, time zone, end time or enabled computes the next
// tick again from now.
func (s *Service) Patch(ctx context.Context, id string, p Patch) (engine.Cron, error) {
	const op = "crons.patch"
	value, filter, err := authorize(ctx, engine.ActionUpdate, id, p.value())
	if err != nil {
		return engine.Cron{}, err
	}
	if p.Metadata, err = engine.ValueMap(op, value, "metadata", p.Metadata); err != nil {
		return engine.Cron{}, err
	}
	st, err := s.stateFiltered(ctx, op, id, filter)
	if err != nil {
		return engine.Cron{}, err
	}
	spec := specOf(st.Cron)
	retime := false
	if p.Schedule != nil {
		spec.Schedule, retime = *p.Schedule, true
	}
	if p.Timezone != nil {
		spec.Timezone, retime = *p.Timezone, true
	}
	if p.EndTimeSet {
		spec.EndTime, retime = p.EndTime, true
	}
	if p.Enabled != nil {
		retime = retime || *p.Enabled != spec.Enabled
		spec.Enabled = *p.Enabled
	}
	if p.OnRunCompleted != nil {
		spec.OnRunCompleted = *p.OnRunCompleted
	}
	if p.Metadata != nil {
		spec.Metadata = maps.Clone(spec.Metadata)
		if spec.Metadata == nil {
			spec.Metadata = map[string]any{}
		}
		maps.Copy(spec.Metadata, p.Metadata)
	}
	mergePayload(&spec.Payload, p.Payload, p.PayloadSet)
	stored := st.Payload
	next, err := s.check(ctx, op, &spec, &stored)
	if err != nil {
		return engine.Cron{}, err
	}
	agg := Aggregate(ctx, id)
	_, err = s.cmd.Run(ctx, op, func() (command.Decision, error) {
		cur, ok, err := s.view.Get(agg.Tenant, id)
		if err != nil {
			return nil, engine.E(engine.Op(op), err)
		}
		if !ok || !filter.Match(cur.Metadata) {
			return nil, NotFound(op)
		}
		n := next
		if !retime {
			n = cur.NextRunDate // a fire since the read moved it on
		}
		return s.decide(op, agg, engine.CronUpdated, engine.CronUpdatedData{CronSpec: spec, NextRunDate: n})
	})
	if err != nil {
		return engine.Cron{}, err
	}
	st, err = s.state(ctx, op, id)
	return st.Cron, err
}

// value is p as a rule's value shows it (the reference's CronsUpdate): the fields given, null
// for the others; metadata only when given.
func (p Patch) value() map[string]any {
	v := map[string]any{"schedule": nil, "end_time": nil, "enabled": nil, "on_run_completed": nil, "payload": nil}
	if p.Schedule != nil {
		v["schedule"] = *p.Schedule
	}
	if p.EndTimeSet {
		v["end_time"] = p.EndTime
	}
	if p.Enabled != nil {
		v["enabled"] = *p.Enabled
	}
	if p.OnRunCompleted != nil {
		v["on_run_completed"] = *p.OnRunCompleted
	}
	if len(p.PayloadSet) > 0 {
		full := payloadValue(p.Payload)
		given := map[string]any{}
		for k := range p.PayloadSet {
			given[k] = full[k]
		}
		v["payload"] = given
	}
	if p.Metadata != nil {
		v["metadata"] = p.Metadata
	}
	return v
}

// specOf is the definition of a cron record.
func specOf(c engine.Cron) engine.CronSpec {
	spec := engine.CronSpec{AssistantID: c.AssistantID, Schedule: c.Schedule, EndTime: c.EndTime, Enabled: c.Enabled,
		OnRunCompleted: c.OnRunCompleted, Metadata: c.Metadata, Payload: c.Payload}
	if c.ThreadID != nil {
		spec.ThreadID = *c.ThreadID
	}
	if c.Timezone != nil {
		spec.Timezone = *c.Timezone
	}
	return spec
}

// mergePayload replaces the fields of dst that set names with those of src.
func mergePayload(dst *engine.CronPayload, src engine.CronPayload, set map[string]bool) {
	if set["input"] {
		dst.Input = src.Input
	}
	if set["config"] {
		dst.Config = src.Config
	}
	if set["context"] {
		dst.Context = src.Context
	}
	if set["metadata"] {
		dst.Metadata = src.Metadata
	}
	if set["interrupt_before"] {
		dst.InterruptBefore = src.InterruptBefore
	}
	if set["interrupt_after"] {
		dst.InterruptAfter = src.InterruptAfter
	}
	if set["webhook"] {
		dst.Webhook = src.Webhook
	}
	if set["stream_mode"] {
		dst.StreamMode = src.StreamMode
	}
	if set["durability"] {
		dst.Durability = src.Durability
	}
}

// Delete deletes a cron; a fire of it not completed yet makes no run.
func (s *Service) Delete(ctx context.Context, id string) error {
	const op = "crons.delete"
	_, filter, err := authorize(ctx, engine.ActionDelete, id, nil)
	if err != nil {
		return err
	}
	if _, err := s.stateFiltered(ctx, op, id, filter); err != nil {
		return err
	}
	agg := Aggregate(ctx, id)
	_, err = s.cmd.Run(ctx, op, func() (command.Decision, error) {
		cur, ok, err := s.view.Get(agg.Tenant, id)
		if err != nil {
			return nil, engine.E(engine.Op(op), err)
		}
		if !ok || !filter.Match(cur.Metadata) {
			return nil, NotFound(op)
		}
		return s.decide(op, agg, engine.CronDeleted, struct{}{})
	})
	return err
}

// Search returns one page of the crons matching q that the user's rules let them read, and how
// many match in all.
func (s *Service) Search(ctx context.Context, q engine.CronQuery) ([]engine.Cron, int, error) {
	const op = "crons.search"
	value, filter, err := engine.Authorize(ctx, engine.ResourceCrons, engine.ActionSearch, func() map[string]any {
		return map[string]any{"assistant_id": engine.StringValue(q.AssistantID), "thread_id": engine.StringValue(q.ThreadID),
			"limit": q.Limit, "offset": q.Offset, "metadata": engine.ObjectValue(q.Metadata)}
	})
	if err != nil {
		return nil, 0, err
	}
	if q.Metadata, err = engine.ValueMap(op, value, "metadata", q.Metadata); err != nil {
		return nil, 0, err
	}
	q.Auth = q.Auth.And(filter)
	cs, n, err := s.view.Search(engine.TenantFrom(ctx), q)
	if err != nil {
		return nil, 0, engine.E(engine.Op(op), err)
	}
	return cs, n, nil
}

// withAuth is config with the user of ctx in its configurable, so that the cron's runs fire as
// the user who created or last changed it (they have no request of their own). An anonymous ctx
// removes a user the body named; a configurable that is no object (refused elsewhere) stays.
func withAuth(ctx context.Context, config map[string]any) map[string]any {
	if _, ok := engine.UserFrom(ctx); !ok {
		if cf, ok := config["configurable"].(map[string]any); ok {
			engine.SetAuthConfigurable(ctx, cf)
		}
		return config
	}
	if config == nil {
		config = map[string]any{}
	}
	cf, isMap := config["configurable"].(map[string]any)
	if config["configurable"] != nil && !isMap {
		return config
	}
	if cf == nil {
		cf = map[string]any{}
		config["configurable"] = cf
	}
	engine.SetAuthConfigurable(ctx, cf)
	return config
}
