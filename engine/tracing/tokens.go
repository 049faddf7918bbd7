package tracing

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/tracing/trace"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/projections/traces"
)

// Presigned feedback tokens are what the clients' createPresignedFeedbackToken and
// create_presigned_feedback_token(s) ask for: a URL that a browser calls without an API key to
// leave feedback of one key on one run. The token's id is random (122 bits), so holding it is
// the permission.

// DefaultTokenLife is how long a token lasts when the request says nothing (the clients' default).
const DefaultTokenLife = 3 * time.Hour

// TokenRequest asks for a token.
type TokenRequest struct {
	RunID      string
	Key        string
	FeedbackID string // the feedback the token writes; "": a new one each use
	Config     map[string]any
	ExpiresAt  time.Time
}

// CreateFeedbackTokens records tokens, one event each on the trace of its run, and returns them
// once the projection has them.
func (s *Service) CreateFeedbackTokens(ctx context.Context, reqs []TokenRequest) ([]trace.FeedbackToken, error) {
	const op = "tracing.create_feedback_token"
	tenant := engine.TenantFrom(ctx)
	out := make([]trace.FeedbackToken, 0, len(reqs))
	for _, r := range reqs {
		tok := trace.FeedbackToken{ID: uuid.NewString(), Tenant: tenant, RunID: strings.ToLower(r.RunID), Key: r.Key,
			FeedbackID: strings.ToLower(r.FeedbackID), Config: r.Config, ExpiresAt: engine.At(r.ExpiresAt)}
		e, err := eventlog.New(traceAggregate(tenant, s.traceOfRun(tenant, tok.RunID)), traces.FeedbackTokenCreated, tok)
		if err != nil {
			return nil, engine.E(engine.Op(op), err)
		}
		if err := s.commit(ctx, op, e); err != nil {
			return nil, err
		}
		out = append(out, tok)
	}
	return out, nil
}

// traceOfRun is the trace of a run the projection has, else the run's id (the trace of a root
// run): where feedback on a run goes.
func (s *Service) traceOfRun(tenant, runID string) string {
	traceID := runID
	_ = s.read("tracing.trace_of_run", func(v *traces.TraceView) error {
		if t, ok, _ := v.TraceOf(tenant, runID); ok {
			traceID = t
		}
		return nil
	})
	return traceID
}

// FeedbackWithToken records feedback through a token: fields are those a token's user may set
// (score, value, correction, comment), and metadata for its source. An unknown or expired token
// is NotFound.
func (s *Service) FeedbackWithToken(ctx context.Context, tokenID string, fields map[string]any, metadata map[string]any) (trace.Feedback, error) {
	const op = "tracing.feedback_with_token"
	tokenID = strings.ToLower(tokenID)
	find := func() (tok trace.FeedbackToken, ok bool, err error) {
		err = s.read(op, func(v *traces.TraceView) error {
			tok, ok, err = v.FeedbackToken(tokenID)
			return err
		})
		return tok, ok, err
	}
	tok, ok, err := find()
	if err == nil && !ok {
		if err = s.catchUp(ctx, op); err == nil {
			tok, ok, err = find()
		}
	}
	if err != nil {
		return trace.Feedback{}, err
	}
	if !ok || !s.clock().Before(tok.ExpiresAt.Time) {
		return trace.Feedback{}, engine.E(engine.Op(op), engine.NotFound, fmt.Sprintf("Feedback token %s not found or expired", tokenID))
	}
	if metadata == nil {
		metadata = map[string]any{}
	}
	obj := map[string]any{"run_id": tok.RunID, "key": tok.Key, "feedback_source": map[string]any{"type": "app", "metadata": metadata}}
	if tok.FeedbackID != "" {
		obj["id"] = tok.FeedbackID
	}
	if tok.Config != nil {
		obj["feedback_config"] = tok.Config
	}
	for _, name := range []string{"score", "value", "correction", "comment"} {
		if v, ok := fields[name]; ok {
			obj[name] = v
		}
	}
	return s.CreateFeedback(engine.WithTenant(ctx, tok.Tenant), obj)
}
