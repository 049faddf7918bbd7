package crons_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/crons"
	"github.com/jetgraph/jetgraph/engine/graphs"
	"github.com/jetgraph/jetgraph/engine/platform"
	"github.com/jetgraph/jetgraph/engine/platform/platformtest"
	"github.com/jetgraph/jetgraph/engine/threads"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
)

func config(scan time.Duration) platform.Config {
	return platform.Config{Graphs: graphs.Examples(), CronScanInterval: scan, Logger: slog.New(slog.DiscardHandler)}
}

// eventually polls cond until it holds, failing the test after a bounded wait.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
	}
}

// fires returns the fired and fire_done events of a cron, in log order.
func fires(t *testing.T, l *eventlog.Log, id string) (fired []engine.CronFiredData, done []engine.CronFireDoneData) {
	t.Helper()
	events, err := l.Load(context.Background(), eventlog.Aggregate{Kind: "cron", Tenant: engine.DefaultTenant, ID: id})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events {
		switch e.Type {
		case engine.CronFired:
			var d engine.CronFiredData
			if err := json.Unmarshal(e.Data, &d); err != nil {
				t.Fatal(err)
			}
			fired = append(fired, d)
		case engine.CronFireDone:
			var d engine.CronFireDoneData
			if err := json.Unmarshal(e.Data, &d); err != nil {
				t.Fatal(err)
			}
			done = append(done, d)
		}
	}
	return fired, done
}

func newThread(t *testing.T, p *platform.Platform) string {
	t.Helper()
	th, err := p.Threads.Create(context.Background(), threads.Create{})
	if err != nil {
		t.Fatal(err)
	}
	return th.ThreadID
}

func echoPayload(text string) engine.CronPayload {
	return engine.CronPayload{AssistantID: "echo", Input: map[string]any{"messages": []any{map[string]any{"role": "user", "content": text}}}}
}

// TestTwoProcessesFireEachTickOnce runs two schedulers on one log, both scanning every 10ms so
// that they race for every tick: each tick of every cron is fired once, in order, none missed,
// and makes exactly one run, with the id its fire recorded.
func TestTwoProcessesFireEachTickOnce(t *testing.T) {
	l := eventlogtest.Open(t)
	p1 := platformtest.Start(t, config(10*time.Millisecond), l)
	p2 := platformtest.Start(t, config(10*time.Millisecond), l)
	ctx := context.Background()
	const n, ticks = 4, 3
	ids, threadIDs := make([]string, n), make([]string, n)
	for i := range ids {
		threadIDs[i] = newThread(t, p1)
		svc := []*crons.Service{p1.Crons, p2.Crons}[i%2]
		c, err := svc.Create(ctx, crons.Create{ThreadID: threadIDs[i], Schedule: "* * * * * *", Payload: echoPayload("tick")})
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = c.CronID
	}
	eventually(t, "every cron fired its ticks", func() bool {
		for _, id := range ids {
			if fired, _ := fires(t, l, id); len(fired) < ticks {
				return false
			}
		}
		return true
	})
	for _, id := range ids {
		if err := p1.Crons.Delete(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	for i, id := range ids {
		fired, done := fires(t, l, id)
		for j := 1; j < len(fired); j++ {
			if gap := fired[j].Tick.Sub(fired[j-1].Tick.Time); gap != time.Second || fired[j].Skipped != 0 {
				t.Errorf("cron %d: tick %v after %v (skipped %d): want the next second", i, fired[j].Tick, fired[j-1].Tick, fired[j].Skipped)
			}
		}
		eventually(t, "the runs exist", func() bool {
			runs, err := p1.Runs.List(ctx, threadIDs[i], "", 1000, 0)
			return err == nil && len(runs) >= len(done)
		})
		runs, err := p1.Runs.List(ctx, threadIDs[i], "", 1000, 0)
		if err != nil {
			t.Fatal(err)
		}
		made := map[string]bool{}
		for _, r := range runs {
			made[r.RunID] = true
		}
		if len(runs) != len(done) && len(runs) != len(fired) {
			t.Errorf("cron %d: %d runs for %d fires", i, len(runs), len(fired))
		}
		for j, d := range done {
			if d.Error != "" || !made[fired[j].RunID] {
				t.Errorf("cron %d fire %d: run %s made=%v, error %q", i, j, fired[j].RunID, made[fired[j].RunID], d.Error)
			}
		}
	}
}

// TestPendingFireIsCompletedByAnotherProcess: a process that claimed a tick and died before
// making its run leaves the fire pending; another process makes the run, with the recorded id,
// once.
func TestPendingFireIsCompletedByAnotherProcess(t *testing.T) {
	p := platformtest.Start(t, config(10*time.Millisecond), nil)
	ctx := context.Background()
	thread := newThread(t, p)
	off := false
	c, err := p.Crons.Create(ctx, crons.Create{ThreadID: thread, Schedule: "0 0 1 1 *", Enabled: &off, Payload: echoPayload("late")})
	if err != nil {
		t.Fatal(err)
	}
	// What the dead process appended: the claim of a tick, and nothing after it.
	agg := eventlog.Aggregate{Kind: "cron", Tenant: engine.DefaultTenant, ID: c.CronID}
	runID := uuid.Must(uuid.NewV7()).String()
	claim, err := eventlog.New(agg, engine.CronFired, engine.CronFiredData{Tick: engine.At(time.Now().Truncate(time.Second)), RunID: runID, ThreadID: thread})
	if err != nil {
		t.Fatal(err)
	}
	v, err := p.Runtime.Version(agg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Log.Append(ctx, claim, eventlog.At(v)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the fire was completed", func() bool {
		_, done := fires(t, p.Log, c.CronID)
		return len(done) == 1
	})
	runs, err := p.Runs.List(ctx, thread, "", 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].RunID != runID {
		t.Fatalf("runs %v, want the one run %s", runs, runID)
	}
}

// TestCatchUpFiresTheLatestMissedTickOnce: when no process was up for 30 ticks, the next scan
// fires the latest of them once and skips the others.
func TestCatchUpFiresTheLatestMissedTickOnce(t *testing.T) {
	t0 := time.Date(2026, 3, 10, 12, 0, 0, 500_000_000, time.UTC)
	var clock atomic.Pointer[time.Time]
	clock.Store(&t0)
	p := platformtest.StartWith(t, config(time.Hour), nil, func(p *platform.Platform) {
		p.Crons.SetClock(func() time.Time { return *clock.Load() })
	})
	ctx := context.Background()
	thread := newThread(t, p)
	c, err := p.Crons.Create(ctx, crons.Create{ThreadID: thread, Schedule: "* * * * * *", Payload: echoPayload("caught up")})
	if err != nil {
		t.Fatal(err)
	}
	if c.NextRunDate == nil || !c.NextRunDate.Equal(t0.Add(500*time.Millisecond)) {
		t.Fatalf("next_run_date %v, want 12:00:01", c.NextRunDate)
	}
	later := t0.Add(29*time.Second + 700*time.Millisecond) // 12:00:30.2
	clock.Store(&later)
	for range 2 {
		if err := p.Crons.Scan(ctx); err != nil {
			t.Fatal(err)
		}
	}
	fired, done := fires(t, p.Log, c.CronID)
	if len(fired) != 1 || len(done) != 1 {
		t.Fatalf("%d fires, %d done, want 1 and 1", len(fired), len(done))
	}
	if want := t0.Add(29*time.Second + 500*time.Millisecond); !fired[0].Tick.Equal(want) || fired[0].Skipped != 29 {
		t.Errorf("fired tick %v skipping %d, want %v skipping 29", fired[0].Tick, fired[0].Skipped, want)
	}
	got, err := p.Crons.Get(ctx, c.CronID)
	if err != nil {
		t.Fatal(err)
	}
	if want := t0.Add(30*time.Second + 500*time.Millisecond); got.NextRunDate == nil || !got.NextRunDate.Equal(want) {
		t.Errorf("next_run_date %v, want %v", got.NextRunDate, want)
	}
}

// TestEndTimeStopsTheCron: no tick after end_time, and next_run_date is null then.
func TestEndTimeStopsTheCron(t *testing.T) {
	p := platformtest.Start(t, config(time.Hour), nil)
	end := engine.At(time.Now().Add(-time.Minute))
	c, err := p.Crons.Create(context.Background(), crons.Create{Schedule: "* * * * *", EndTime: &end, Payload: echoPayload("x")})
	if err != nil {
		t.Fatal(err)
	}
	if c.NextRunDate != nil {
		t.Errorf("next_run_date %v after end_time %v", c.NextRunDate, end)
	}
}
