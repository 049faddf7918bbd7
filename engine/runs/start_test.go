package runs_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/platform"
	"github.com/jetgraph/jetgraph/engine/platform/platformtest"
	"github.com/jetgraph/jetgraph/engine/runs"
	"github.com/jetgraph/jetgraph/engine/threads"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
)

// threadEvents returns the types of the thread's events in the log, in order, and how many
// messages hold them.
func threadEvents(t *testing.T, l *eventlog.Log, thread string) ([]string, int) {
	t.Helper()
	events, err := l.Load(context.Background(), eventlog.Aggregate{Kind: engine.KindThread, Tenant: eventlog.DefaultTenant, ID: thread})
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	seqs := map[uint64]bool{}
	for _, e := range events {
		types = append(types, e.Type)
		seqs[e.Seq] = true
	}
	return types, len(seqs)
}

// TestRunStartWaitsForItsFirstWrite: a run that keeps its checkpoints in memory appends its
// start with its first write: a short run's start, checkpoints and end are one message; a run
// that goes on past StartAfter without writing has its start appended alone, and is running in
// the log while it goes on.
func TestRunStartWaitsForItsFirstWrite(t *testing.T) {
	ctx := waitCtx(t)
	release := make(chan struct{})
	cfg := platform.Config{Graphs: stepGraph(func(ctx context.Context) error {
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}), Runs: runs.Config{StartAfter: 50 * time.Millisecond}}
	p := platformtest.Start(t, cfg, nil)

	t.Run("short", func(t *testing.T) {
		close(release)
		th, r := stepRun(ctx, t, p)
		rec, err := p.Runs.Wait(ctx, th.ThreadID, r.RunID)
		if err != nil || rec.Status != engine.RunSuccess || rec.Attempt != 1 || rec.StartedAt.IsZero() {
			t.Fatalf("run: %+v, %v; want success at attempt 1 with its start time", rec, err)
		}
		types, messages := threadEvents(t, p.Log, th.ThreadID)
		want := []string{engine.ThreadCreated, engine.RunCreatedEvent, engine.RunStartedEvent}
		if len(types) < 5 || !slices.Equal(types[:3], want) || types[len(types)-1] != engine.RunFinishedEvent || messages != 3 {
			t.Fatalf("the thread's log: %v in %d messages; want %v, checkpoints and %s, the run's start to its end in one message", types, messages, want, engine.RunFinishedEvent)
		}
	})
	t.Run("shared log", func(t *testing.T) {
		// Another process may append to the thread: the start is the run's barrier, appended first.
		shared := platformtest.Start(t, platform.Config{Graphs: cfg.Graphs, Runs: cfg.Runs},
			eventlogtest.OpenURLs(t, eventlogtest.Server(t), 1))
		th, r := stepRun(ctx, t, shared)
		if rec, err := shared.Runs.Wait(ctx, th.ThreadID, r.RunID); err != nil || rec.Status != engine.RunSuccess {
			t.Fatalf("run: %+v, %v", rec, err)
		}
		if types, messages := threadEvents(t, shared.Log, th.ThreadID); messages != 4 || types[2] != engine.RunStartedEvent {
			t.Fatalf("the thread's log: %v in %d messages; want the start alone, then the checkpoints with the end", types, messages)
		}
	})
	release = make(chan struct{})
	t.Run("long", func(t *testing.T) {
		th, r := stepRun(ctx, t, p)
		for {
			rec, err := p.Runs.Get(ctx, th.ThreadID, r.RunID)
			if err != nil {
				t.Fatal(err)
			}
			if rec.Status == engine.RunRunning {
				break
			}
			if !rec.Active() {
				t.Fatalf("run ended before it was released: %+v", rec)
			}
			time.Sleep(10 * time.Millisecond)
		}
		close(release)
		rec, err := p.Runs.Wait(ctx, th.ThreadID, r.RunID)
		if err != nil || rec.Status != engine.RunSuccess || rec.Attempt != 1 {
			t.Fatalf("run: %+v, %v; want success at attempt 1", rec, err)
		}
		if types, messages := threadEvents(t, p.Log, th.ThreadID); messages != 4 || types[2] != engine.RunStartedEvent {
			t.Fatalf("the thread's log: %v in %d messages; want the start alone, then the checkpoints with the end", types, messages)
		}
	})
}

// stepRun creates a thread of p and a run of the graph "step" on it.
func stepRun(ctx context.Context, t *testing.T, p *platform.Platform) (engine.Thread, engine.RunRecord) {
	t.Helper()
	th, err := p.Threads.Create(ctx, threads.Create{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := p.Runs.Create(ctx, runs.Create{ThreadID: th.ThreadID, AssistantID: "step", Input: map[string]any{"messages": "x"}})
	if err != nil {
		t.Fatal(err)
	}
	return th, r
}

// TestCancelBeforeTheStart: a run cancelled while its start waits for its first write is
// cancelled as a running run, as the reference server does once a client saw it stream: an
// interrupt keeps what it did (its start, its checkpoints and its end in one message, the thread
// holding its input), a rollback deletes it and leaves the thread as it was.
func TestCancelBeforeTheStart(t *testing.T) {
	for _, tc := range []struct {
		action string
		want   string // the run's status after the cancel ("" for deleted)
	}{
		{runs.ActionInterrupt, engine.RunInterrupted},
		{runs.ActionRollback, ""},
	} {
		t.Run(tc.action, func(t *testing.T) {
			ctx := waitCtx(t)
			started, stopped := make(chan struct{}, 1), make(chan struct{}, 1)
			// Neither its start nor its checkpoints are appended before the run ends.
			p := platformtest.Start(t, platform.Config{Runs: runs.Config{StartAfter: time.Hour, AsyncFlush: time.Hour},
				Graphs: stepGraph(func(ctx context.Context) error {
					started <- struct{}{}
					<-ctx.Done()
					stopped <- struct{}{}
					return ctx.Err()
				})}, nil)
			th, r := stepRun(ctx, t, p)
			<-started
			if types, _ := threadEvents(t, p.Log, th.ThreadID); len(types) != 2 {
				t.Fatalf("the thread's log while the run goes on: %v; want its creation and the run's alone", types)
			}
			if err := p.Runs.Cancel(ctx, th.ThreadID, r.RunID, tc.action, true); err != nil {
				t.Fatal(err)
			}
			select {
			case <-stopped:
			case <-ctx.Done():
				t.Fatal("the worker goes on with a cancelled run")
			}
			rec, err := p.Runs.Get(ctx, th.ThreadID, r.RunID)
			types, stored := threadEvents(t, p.Log, th.ThreadID)
			if tc.want == "" {
				if !engine.Is(engine.NotFound, err) {
					t.Fatalf("run after a rollback: %+v, %v; want it gone", rec, err)
				}
				for _, typ := range types {
					if typ == engine.ThreadCheckpoint {
						t.Fatalf("the thread's log: %v; want no checkpoint of the rolled back run", types)
					}
				}
				return
			}
			if err != nil || rec.Status != tc.want || rec.Attempt != 1 {
				t.Fatalf("run: %+v, %v; want %s at attempt 1", rec, err, tc.want)
			}
			// The cancel request, then the run's start, its checkpoints and its end, in one message.
			want := []string{engine.ThreadCreated, engine.RunCreatedEvent, engine.RunCancelRequestedEvent, engine.RunStartedEvent, engine.ThreadCheckpoint}
			if len(types) < 6 || !slices.Equal(types[:5], want) || types[len(types)-1] != engine.RunFinishedEvent || stored != 4 {
				t.Fatalf("the thread's log: %v in %d messages; want %v..., %s, the run's start to its end in one", types, stored, want, engine.RunFinishedEvent)
			}
			if msgs := messages(t, p, th.ThreadID); msgs != "[x]" {
				t.Fatalf("the thread's messages after the interrupt: %q, want the run's input", msgs)
			}
		})
	}
}
