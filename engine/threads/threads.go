// Package threads is the write and read side of threads: create, patch, delete, search, and the
// sweeper that deletes threads whose time to live has passed.
package threads

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/command"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/projections"
)

// Service manages threads.
type Service struct {
	cmd   *command.Runner
	view  *projections.Threads
	log   *slog.Logger
	clock func() time.Time
	// blob fetches a value the projection keeps as a reference (projections.ValueRef).
	blob func(ctx context.Context, digest string) ([]byte, error)
	// defaultTTL is the time to live of a thread created without one (nil: none).
	defaultTTL *engine.TTLSpec
}

// SetDefaultTTL gives every thread created without a time to live this one (langgraph.json's
// checkpointer.ttl.default_ttl, as the reference servers apply it); nil gives none. It is
// recorded in the thread's creation event, so a replay of the log keeps it.
func (s *Service) SetDefaultTTL(ttl *engine.TTLSpec) { s.defaultTTL = ttl }

// ResolveValuesWith sets how the values of a thread kept in the object store are fetched
// (checkpoints.Saver.Blob): without it, they are left out of the thread.
func (s *Service) ResolveValuesWith(blob func(ctx context.Context, digest string) ([]byte, error)) {
	s.blob = blob
}

// resolveValues replaces the references among th's values by the values they name.
func (s *Service) resolveValues(ctx context.Context, th *engine.Thread) error {
	values, _ := th.Values.(map[string]any)
	for ch, v := range values {
		ref, ok := v.(projections.ValueRef)
		if !ok {
			continue
		}
		if s.blob == nil {
			delete(values, ch)
			continue
		}
		raw, err := s.blob(ctx, string(ref))
		if err != nil {
			return err
		}
		var x any
		if err := json.Unmarshal(raw, &x); err != nil {
			return fmt.Errorf("threads: value of channel %s: %w", ch, err)
		}
		values[ch] = x
	}
	return nil
}

// New returns the thread service writing through cmd and reading view.
func New(cmd *command.Runner, view *projections.Threads, log *slog.Logger) *Service {
	if log == nil {
		log = slog.Default()
	}
	return &Service{cmd: cmd, view: view, log: log, clock: time.Now}
}

// Aggregate names thread id of the context's tenant in the log.
func Aggregate(ctx context.Context, id string) eventlog.Aggregate {
	return eventlog.Aggregate{Kind: "thread", Tenant: engine.TenantFrom(ctx), ID: id}
}

// NotFound is the error for a thread that does not exist, with the reference servers' text.
func NotFound(op, id string) error {
	return engine.E(engine.Op(op), engine.NotFound, fmt.Sprintf("Thread with ID %s not found", id))
}

// Create is a request to create a thread.
type Create struct {
	ThreadID string // empty: a new UUID
	Metadata map[string]any
	IfExists string // engine.IfExistsRaise (default) or engine.IfExistsDoNothing
	TTL      *engine.TTLSpec
}

// Create makes a thread, or returns the existing one when IfExists is do_nothing.
func (s *Service) Create(ctx context.Context, c Create) (engine.Thread, error) {
	const op = "threads.create"
	if c.ThreadID == "" {
		// Time-ordered: a new thread's records land at the end of the projections' key
		// ranges, so the writes of a batch share pages instead of touching a random page each.
		c.ThreadID = uuid.Must(uuid.NewV7()).String()
	}
	if c.TTL == nil && s.defaultTTL != nil {
		ttl := *s.defaultTTL
		c.TTL = &ttl
	}
	if c.TTL != nil {
		if err := engine.CheckTTL(op, c.TTL.Minutes, "body", "ttl"); err != nil {
			return engine.Thread{}, err
		}
	}
	value, filter, err := s.ask(ctx, engine.ActionCreate, c.ThreadID, map[string]any{
		"metadata": orEmpty(c.Metadata), "if_exists": orRaise(c.IfExists), "ttl": ttlValue(c.TTL)})
	if err != nil {
		return engine.Thread{}, err
	}
	if md, ok := Metadata(value); ok {
		c.Metadata = md // the rules' additions (an owner) are the thread's
	}
	ctx = engine.Asked(ctx)
	agg := Aggregate(ctx, c.ThreadID)
	_, err = s.cmd.Run(ctx, op, func() (command.Decision, error) {
		old, exists, err := s.view.Get(agg.Tenant, agg.ID)
		if err != nil {
			return nil, engine.E(engine.Op(op), err)
		}
		if exists {
			// One the user's rules hide is refused as the reference refuses it, whatever
			// if_exists: nothing of it shows.
			if c.IfExists == engine.IfExistsDoNothing && filter.Match(old.Metadata) {
				return nil, nil
			}
			return nil, engine.E(engine.Op(op), engine.Exists, "Thread already exists")
		}
		expect, err := s.cmd.Version(agg)
		if err != nil {
			return nil, err
		}
		e, err := eventlog.New(agg, engine.ThreadCreated, engine.ThreadCreatedData{Metadata: c.Metadata, TTL: c.TTL})
		if err != nil {
			return nil, engine.E(engine.Op(op), err)
		}
		return command.Decision{{Event: e, Expect: expect}}, nil
	})
	if err != nil {
		return engine.Thread{}, err
	}
	return s.Get(ctx, c.ThreadID)
}

// Get returns a thread, TTL included. A thread this process does not know yet may have been
// created through another process: Get catches up with the log once before it says NotFound.
func (s *Service) Get(ctx context.Context, id string) (engine.Thread, error) {
	ctx, _, err := s.Access(ctx, engine.ActionRead, id, nil)
	if err != nil {
		return engine.Thread{}, err
	}
	return s.read(ctx, id, s.view.Get)
}

// Info is Get without the thread's values (nil): what the runtime reads of a thread to run on
// it (config, metadata, status), without decoding its state.
func (s *Service) Info(ctx context.Context, id string) (engine.Thread, error) {
	ctx, _, err := s.Access(ctx, engine.ActionRead, id, nil)
	if err != nil {
		return engine.Thread{}, err
	}
	return s.read(ctx, id, s.view.Info)
}

// InfoCaughtUp is Info once the projection has caught up with the log: for a refusal that must
// not rest on a projection behind what a client has already seen (a run's end, streamed before
// it is folded here, or folded by another process).
func (s *Service) InfoCaughtUp(ctx context.Context, id string) (engine.Thread, error) {
	if err := s.cmd.Projector.CatchUp(ctx); err != nil {
		return engine.Thread{}, engine.E(engine.Op("threads.get"), engine.Unavailable, err)
	}
	return s.Info(ctx, id)
}

// read reads a thread with get, catching up with the log once before it says NotFound.
func (s *Service) read(ctx context.Context, id string, get func(tenant, id string) (engine.Thread, bool, error)) (engine.Thread, error) {
	th, ok, err := get(engine.TenantFrom(ctx), id)
	if err == nil && !ok {
		if cerr := s.cmd.Projector.CatchUp(ctx); cerr == nil {
			th, ok, err = get(engine.TenantFrom(ctx), id)
		}
	}
	if err != nil {
		return engine.Thread{}, engine.E(engine.Op("threads.get"), err)
	}
	if !ok {
		return engine.Thread{}, NotFound("threads.get", id)
	}
	if err := s.resolveValues(ctx, &th); err != nil {
		return engine.Thread{}, engine.E(engine.Op("threads.get"), err)
	}
	return th, nil
}

// Patch merges metadata into the thread's and, when ttl is given, restarts its time to live.
func (s *Service) Patch(ctx context.Context, id string, metadata map[string]any, ttl *engine.TTLSpec) (engine.Thread, error) {
	const op = "threads.patch"
	if ttl != nil {
		if err := engine.CheckTTL(op, ttl.Minutes, "body", "ttl"); err != nil {
			return engine.Thread{}, err
		}
	}
	value, filter, err := s.ask(ctx, engine.ActionUpdate, id, map[string]any{"metadata": orEmpty(metadata), "ttl": ttlValue(ttl)})
	if err != nil {
		return engine.Thread{}, err
	}
	if md, ok := Metadata(value); ok && metadata != nil {
		metadata = md
	}
	ctx = engine.Asked(ctx)
	err = s.appendTo(ctx, op, Aggregate(ctx, id), filter, func(agg eventlog.Aggregate) (eventlog.Event, error) {
		return eventlog.New(agg, engine.ThreadPatched, engine.ThreadPatchedData{Metadata: metadata, TTL: ttl})
	})
	if err != nil {
		return engine.Thread{}, err
	}
	return s.Get(ctx, id)
}

// Delete removes a thread. Deleting a missing thread is a NotFound error.
func (s *Service) Delete(ctx context.Context, id string) error {
	_, filter, err := s.ask(ctx, engine.ActionDelete, id, nil)
	if err != nil {
		return err
	}
	return s.delete(engine.Asked(ctx), Aggregate(ctx, id), filter, "")
}

func (s *Service) delete(ctx context.Context, agg eventlog.Aggregate, filter engine.Filter, reason string) error {
	return s.appendTo(ctx, "threads.delete", agg, filter, func(agg eventlog.Aggregate) (eventlog.Event, error) {
		return DeleteEvent(agg, reason)
	})
}

// appendTo appends the event mk makes to thread agg, which must exist and match filter, the
// user's rules' (NotFound otherwise, alike).
func (s *Service) appendTo(ctx context.Context, op string, agg eventlog.Aggregate, filter engine.Filter, mk func(eventlog.Aggregate) (eventlog.Event, error)) error {
	_, err := s.cmd.Run(ctx, op, func() (command.Decision, error) {
		if th, ok, err := s.view.Get(agg.Tenant, agg.ID); err != nil || !ok || !filter.Match(th.Metadata) {
			return nil, orNotFound(op, agg.ID, err)
		}
		expect, err := s.cmd.Version(agg)
		if err != nil {
			return nil, err
		}
		e, err := mk(agg)
		if err != nil {
			return nil, engine.E(engine.Op(op), err)
		}
		return command.Decision{{Event: e, Expect: expect}}, nil
	})
	return err
}

// DeleteEvent is the event that deletes thread agg; other commands (assistant deletion) put it in
// their own batches.
func DeleteEvent(agg eventlog.Aggregate, reason string) (eventlog.Event, error) {
	return eventlog.New(agg, engine.ThreadDeleted, engine.ThreadDeletedData{Reason: reason})
}

// Prune prunes the threads ids (each on its own; one that does not exist is skipped) and returns
// how many it pruned: with engine.PruneDelete it deletes them, with engine.PruneKeepLatest it keeps
// them and their state but drops every older checkpoint.
//
// With the user's rules, pruning is their delete of all the threads named; as in the reference,
// a filter any of them does not match (or one that does not exist) refuses the whole request
// with a NotFound.
func (s *Service) Prune(ctx context.Context, ids []string, strategy string) (int, error) {
	_, filter, err := engine.Authorize(ctx, engine.ResourceThreads, engine.ActionDelete, func() map[string]any {
		return map[string]any{"thread_ids": ids}
	})
	if err != nil {
		return 0, err
	}
	ctx = engine.Asked(ctx)
	aggs := make([]eventlog.Aggregate, len(ids))
	for i, id := range ids {
		aggs[i] = Aggregate(ctx, id)
		if filter.IsZero() {
			continue
		}
		if th, err := s.read(ctx, id, s.view.Info); err != nil || !filter.Match(th.Metadata) {
			if err != nil && !engine.Is(engine.NotFound, err) {
				return 0, err
			}
			return 0, engine.E(engine.Op("threads.prune"), engine.NotFound, "At least one thread not found or not authorized")
		}
	}
	return countDone(aggs, func(agg eventlog.Aggregate) error {
		if strategy == engine.PruneKeepLatest {
			return s.appendTo(ctx, "threads.prune", agg, filter, func(agg eventlog.Aggregate) (eventlog.Event, error) {
				return eventlog.New(agg, engine.ThreadCheckpointsPruned, struct{}{})
			})
		}
		return s.delete(ctx, agg, filter, "prune")
	})
}

// countDone calls f for each thread of aggs in turn and returns how many it did: a thread gone
// is skipped, any other failure stops it.
func countDone(aggs []eventlog.Aggregate, f func(eventlog.Aggregate) error) (int, error) {
	n := 0
	for _, agg := range aggs {
		err := f(agg)
		switch {
		case err == nil:
			n++
		case engine.Is(engine.NotFound, err):
		default:
			return n, err
		}
	}
	return n, nil
}

// Search returns a page of the tenant's threads matching q and the total count.
//
// The user's rules (threads.search) restrict it to the threads their filter matches, pages and
// total alike.
func (s *Service) Search(ctx context.Context, q engine.ThreadQuery) ([]engine.Thread, int, error) {
	_, filter, err := engine.Authorize(ctx, engine.ResourceThreads, engine.ActionSearch, func() map[string]any {
		v := map[string]any{"metadata": orEmpty(q.Metadata), "values": orEmpty(q.Values), "status": nilIfEmpty(q.Status),
			"limit": q.Limit, "offset": q.Offset}
		if len(q.IDs) > 0 {
			v["ids"] = q.IDs
		}
		return v
	})
	if err != nil {
		return nil, 0, err
	}
	q.Auth = q.Auth.And(filter)
	ts, total, err := s.view.Search(engine.TenantFrom(ctx), q)
	if err != nil {
		return nil, 0, engine.E(engine.Op("threads.search"), err)
	}
	for i := range ts {
		if err := s.resolveValues(ctx, &ts[i]); err != nil {
			return nil, 0, engine.E(engine.Op("threads.search"), err)
		}
	}
	return ts, total, nil
}

// Sweep deletes the threads whose TTL has passed and returns how many it deleted. Several
// processes may sweep at once: the loser of a race finds the thread gone and moves on.
func (s *Service) Sweep(ctx context.Context) (int, error) {
	expired, err := s.view.Expired(s.clock(), 500)
	if err != nil {
		return 0, engine.E(engine.Op("threads.sweep"), err)
	}
	return countDone(expired, func(agg eventlog.Aggregate) error {
		return s.delete(engine.WithTenant(ctx, agg.Tenant), agg, engine.Filter{}, "ttl")
	})
}

// RunSweeper sweeps every interval until ctx ends.
func (s *Service) RunSweeper(ctx context.Context, interval time.Duration) {
	command.Sweep(ctx, interval, s.log, "threads", s.Sweep)
}

func orNotFound(op, id string, err error) error {
	if err != nil {
		return engine.E(engine.Op(op), err)
	}
	return NotFound(op, id)
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// orRaise is an if_exists as the rules see it: raise when none was given.
func orRaise(ifExists string) string {
	if ifExists == "" {
		return engine.IfExistsRaise
	}
	return ifExists
}

// nilIfEmpty is s, or nil for "": a filter the request did not give.
func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}
