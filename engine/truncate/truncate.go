// Package truncate empties the runtime's data between the blocks of a client test suite, as the
// reference dev server's POST /internal/truncate does. jetgraph serves it only with
// `jetgraph serve --dev`.
//
// Truncation is an event like any other: one "truncated" event on the system aggregate, which
// every projection folds by emptying what the flags name, in the same transaction as its cursor.
// It is applied whole or not at all, by every process that folds the log, and a rebuild replays
// it at the same place. The events before it stay in the log (`jetgraph events` still shows
// them); only the projections forget them.
package truncate

import (
	"context"
	"fmt"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/command"
	"github.com/jetgraph/jetgraph/engine/runs"
	"github.com/jetgraph/jetgraph/eventlog"
)

// Service truncates.
type Service struct {
	cmd  *command.Runner
	runs *runs.Service
	keep func() []string
}

// New returns the truncation service: it appends through cmd, stops the active runs through rs,
// and keeps the assistants whose ids keep returns (the system assistants of the served graphs).
func New(cmd *command.Runner, rs *runs.Service, keep func() []string) *Service {
	return &Service{cmd: cmd, runs: rs, keep: keep}
}

// drainTimeout bounds how long Truncate waits for cancelled runs to end.
const drainTimeout = 30 * time.Second

// Truncate empties what f names. With runs or threads, the active runs are cancelled first and
// waited for, so that no run goes on writing on what was emptied.
func (s *Service) Truncate(ctx context.Context, f engine.TruncatedData) error {
	const op = "truncate"
	if f.Runs || f.Threads {
		if err := s.drain(ctx); err != nil {
			return err
		}
	}
	if f.Assistants {
		f.KeepAssistants = s.keep()
	}
	agg := eventlog.Aggregate{Kind: engine.SystemKind, Tenant: engine.TenantFrom(ctx), ID: engine.SystemID}
	_, err := s.cmd.Run(ctx, op, func() (command.Decision, error) {
		expect, err := s.cmd.Version(agg)
		if err != nil {
			return nil, err
		}
		e, err := eventlog.New(agg, engine.Truncated, f)
		if err != nil {
			return nil, engine.E(engine.Op(op), err)
		}
		return command.Decision{{Event: e, Expect: expect}}, nil
	})
	return err
}

// drain cancels every active run of the tenant and waits until they have ended.
func (s *Service) drain(ctx context.Context) error {
	const op = "truncate"
	active, err := s.runs.Active(ctx)
	if err != nil || len(active) == 0 {
		return err
	}
	if err := s.runs.CancelAll(ctx, "", runs.ActionInterrupt); err != nil {
		return err
	}
	wait, cancel := context.WithTimeout(ctx, drainTimeout)
	defer cancel()
	for _, r := range active {
		if _, err := s.runs.Wait(wait, r.ThreadID, r.RunID); err != nil && !engine.Is(engine.NotFound, err) {
			return engine.E(engine.Op(op), engine.Conflict, fmt.Sprintf("Run %s did not stop within %s of its cancellation", r.RunID, drainTimeout), err)
		}
	}
	return nil
}
