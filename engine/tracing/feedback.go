package tracing

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/tracing/trace"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/projections/traces"
)

// Feedback lives on its run's trace aggregate, like the run's posts and patches, so that it
// expires with the trace. Feedback on a run that has not arrived yet is normal (the clients send
// runs in the background): it is accepted, kept on the trace it names (else the trace of its
// run, else the run's id, which is the trace of a root run) and counts in the run's project once
// the run arrives.

// commitWait bounds how long a command waits for the projection to apply its event.
const commitWait = 10 * time.Second

// commit appends e and waits until the local projection has applied it, so that the caller reads
// its own write.
func (s *Service) commit(ctx context.Context, op string, e eventlog.Event) error {
	seq, err := s.log.Append(ctx, e, eventlog.Any)
	if err != nil {
		return engine.E(engine.Op(op), engine.Unavailable, "The event log is unavailable.", err)
	}
	wctx, cancel := context.WithTimeout(ctx, commitWait)
	defer cancel()
	if err := s.proj.WaitFor(wctx, seq); err != nil {
		return engine.E(engine.Op(op), engine.Unavailable, err)
	}
	return nil
}

// catchUp waits until the projection has applied everything on the log: a refusal that rests
// on state (not found, exists) is decided on the state as of now.
func (s *Service) catchUp(ctx context.Context, op string) error {
	cctx, cancel := context.WithTimeout(ctx, commitWait)
	defer cancel()
	if err := s.proj.CatchUp(cctx); err != nil {
		return engine.E(engine.Op(op), engine.Unavailable, "The trace projection is behind; retry.", err)
	}
	return nil
}

// feedbackEvent checks a feedback object and builds its event; fallbackID is its id when it
// carries none (a multipart part's name; "" for a new one). The problems are located by field.
func (s *Service) feedbackEvent(tenant string, obj map[string]any, fallbackID string, now time.Time) (eventlog.Event, trace.Feedback, []engine.FieldError) {
	f, problems := trace.ParseFeedback(obj)
	if len(problems) > 0 {
		return eventlog.Event{}, f, problems
	}
	if f.ID == "" {
		f.ID = strings.ToLower(fallbackID)
		if !trace.IsUUID(f.ID) {
			f.ID = uuid.NewString()
		}
	}
	traceID := ""
	switch {
	case f.TraceID != nil:
		traceID = *f.TraceID
	case f.RunID != nil:
		traceID = s.traceOfRun(tenant, *f.RunID)
	default:
		traceID = f.ID // (feedback on a project: a trace of its own)
	}
	data, err := json.Marshal(traces.FeedbackData{ID: f.ID, Feedback: mustJSON(f)})
	if err != nil {
		return eventlog.Event{}, f, []engine.FieldError{{Msg: err.Error(), Type: "value_error"}}
	}
	f.CreatedAt, f.ModifiedAt = engine.At(now), engine.At(now)
	return eventlog.Event{ID: eventlog.NewID(now), Type: traces.FeedbackCreated, Aggregate: traceAggregate(tenant, traceID),
		Time: now, Version: eventlog.SchemaVersion, Data: data}, f, nil
}

func mustJSON(v any) json.RawMessage {
	raw, _ := json.Marshal(v) // (a trace.Feedback holds decoded JSON values only)
	return raw
}

// CreateFeedback records a feedback object (POST /feedback): a new one, or a new version of one
// with the same id (a retry). It answers once the projection has it.
func (s *Service) CreateFeedback(ctx context.Context, obj map[string]any) (trace.Feedback, error) {
	const op = "tracing.create_feedback"
	e, f, problems := s.feedbackEvent(engine.TenantFrom(ctx), obj, "", s.clock().UTC())
	if len(problems) > 0 {
		v := engine.Violations{}
		for _, p := range problems {
			v = append(v, engine.FieldError{Loc: append([]any{"body"}, p.Loc...), Msg: p.Msg, Type: p.Type})
		}
		return f, v.Err(op)
	}
	if err := s.commit(ctx, op, e); err != nil {
		return f, err
	}
	return s.GetFeedback(ctx, f.ID)
}

// findFeedback returns a feedback and the trace it is kept on (where its later events go),
// catching up with the log before answering that there is none.
func (s *Service) findFeedback(ctx context.Context, op, id string) (*trace.Feedback, string, error) {
	var f *trace.Feedback
	var traceID string
	find := func() error {
		return s.read(op, func(v *traces.TraceView) error {
			got, ok, err := v.FeedbackByID(engine.TenantFrom(ctx), id)
			if ok {
				f = got
				traceID, _ = v.FeedbackTrace(engine.TenantFrom(ctx), id)
			}
			return err
		})
	}
	if err := find(); err != nil || f != nil {
		return f, traceID, err
	}
	if err := s.catchUp(ctx, op); err != nil {
		return nil, "", err
	}
	if err := find(); err != nil {
		return nil, "", err
	}
	if f == nil {
		return nil, "", engine.E(engine.Op(op), engine.NotFound, fmt.Sprintf("Feedback %s not found", id))
	}
	return f, traceID, nil
}

// GetFeedback returns a feedback by id.
func (s *Service) GetFeedback(ctx context.Context, id string) (trace.Feedback, error) {
	f, _, err := s.findFeedback(ctx, "tracing.get_feedback", strings.ToLower(id))
	if err != nil {
		return trace.Feedback{}, err
	}
	return *f, nil
}

// UpdateFeedback changes some of a feedback's fields (trace.FeedbackUpdateFields; null clears
// one) and returns it as it is then.
func (s *Service) UpdateFeedback(ctx context.Context, id string, update map[string]any) (trace.Feedback, error) {
	const op = "tracing.update_feedback"
	id = strings.ToLower(id)
	f, traceID, err := s.findFeedback(ctx, op, id)
	if err != nil {
		return trace.Feedback{}, err
	}
	changes := map[string]any{}
	for _, name := range trace.FeedbackUpdateFields {
		if v, ok := update[name]; ok {
			changes[name] = v
		}
	}
	if problems := trace.ApplyFeedbackUpdate(f, changes, s.clock()); len(problems) > 0 {
		v := engine.Violations{}
		for _, p := range problems {
			v = append(v, engine.FieldError{Loc: append([]any{"body"}, p.Loc...), Msg: p.Msg, Type: p.Type})
		}
		return trace.Feedback{}, v.Err(op)
	}
	e, err := eventlog.New(traceAggregate(engine.TenantFrom(ctx), traceID), traces.FeedbackUpdated,
		traces.FeedbackUpdateData{ID: id, Update: changes})
	if err != nil {
		return trace.Feedback{}, engine.E(engine.Op(op), err)
	}
	if err := s.commit(ctx, op, e); err != nil {
		return trace.Feedback{}, err
	}
	return s.GetFeedback(ctx, id)
}

// DeleteFeedback deletes a feedback.
func (s *Service) DeleteFeedback(ctx context.Context, id string) error {
	const op = "tracing.delete_feedback"
	id = strings.ToLower(id)
	_, traceID, err := s.findFeedback(ctx, op, id)
	if err != nil {
		return err
	}
	e, err := eventlog.New(traceAggregate(engine.TenantFrom(ctx), traceID), traces.FeedbackDeleted, traces.FeedbackRef{ID: id})
	if err != nil {
		return engine.E(engine.Op(op), err)
	}
	return s.commit(ctx, op, e)
}

// FeedbackQuery selects feedback; every list given must match (any of its values).
type FeedbackQuery struct {
	Runs     []string // on these runs
	Keys     []string // of these keys
	Sources  []string // from these source types ("api", "model", ...)
	Sessions []string // counting in these projects
	Limit    int      // 0: all
	Offset   int
}

// ListFeedback returns a page of the feedback matching q, the newest first.
func (s *Service) ListFeedback(ctx context.Context, q FeedbackQuery) ([]trace.Feedback, error) {
	tenant := engine.TenantFrom(ctx)
	var all []trace.Feedback
	err := s.read("tracing.list_feedback", func(v *traces.TraceView) error {
		add := func(fs []trace.Feedback, err error) error {
			all = append(all, fs...)
			return err
		}
		switch {
		case len(q.Runs) > 0:
			for _, r := range q.Runs {
				if err := add(v.RunFeedback(tenant, strings.ToLower(r))); err != nil {
					return err
				}
			}
		case len(q.Sessions) > 0:
			for _, p := range q.Sessions {
				if err := add(v.ProjectFeedback(tenant, strings.ToLower(p))); err != nil {
					return err
				}
			}
		default:
			return add(v.AllFeedback(tenant))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]trace.Feedback, 0, len(all))
	for _, f := range all {
		switch {
		case len(q.Keys) > 0 && !slices.Contains(q.Keys, f.Key),
			len(q.Sources) > 0 && !slices.Contains(q.Sources, f.Source()),
			len(q.Sessions) > 0 && len(q.Runs) > 0 && (f.SessionID == nil || !slices.Contains(q.Sessions, *f.SessionID)):
			continue
		}
		out = append(out, f)
	}
	traces.SortFeedback(out)
	out = slices.CompactFunc(out, func(a, b trace.Feedback) bool { return a.ID == b.ID })
	return page(out, q.Offset, q.Limit), nil
}

// withFeedbackStats sets the feedback statistics of runs.
func (s *Service) withFeedbackStats(tenant string, runs ...*trace.Run) error {
	return s.read("tracing.feedback_stats", func(v *traces.TraceView) error {
		for _, r := range runs {
			fs, err := v.RunFeedback(tenant, r.ID)
			if err != nil {
				return err
			}
			r.FeedbackStats = trace.FeedbackStats(fs)
		}
		return nil
	})
}

// ProjectFeedbackStats summarises the feedback counting in a project: on its posted runs, and
// on the project itself.
func (s *Service) ProjectFeedbackStats(ctx context.Context, id string) (map[string]trace.FeedbackStat, error) {
	var fs []trace.Feedback
	err := s.read("tracing.project_feedback_stats", func(v *traces.TraceView) error {
		var err error
		fs, err = v.ProjectFeedback(engine.TenantFrom(ctx), strings.ToLower(id))
		return err
	})
	return trace.FeedbackStats(fs), err
}
