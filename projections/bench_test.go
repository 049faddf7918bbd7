package projections

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
)

// benchProjector returns a projector of stream, on a new log and file, with the projections ps
// makes, ready to apply batches.
func benchProjector(b *testing.B, stream string, ps func(*DB) []Projection) *Projector {
	b.Helper()
	l := eventlogtest.Open(b)
	db, err := OpenDB(filepath.Join(b.TempDir(), "p.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	p := NewProjector(db, l, stream, ps(db)...)
	if _, err := p.prepare(b.Context()); err != nil {
		b.Fatal(err)
	}
	return p
}

func threadEvent(b *testing.B, i int) eventlog.Event {
	e, err := eventlog.New(eventlog.Aggregate{Kind: "thread", Tenant: "default", ID: fmt.Sprintf("t%d", i)},
		engine.ThreadCreated, engine.ThreadCreatedData{Metadata: map[string]any{"user": "a", "i": i}})
	if err != nil {
		b.Fatal(err)
	}
	return e
}

// BenchmarkProjectionApply measures folding thread events into bbolt, one transaction (one
// fsync) per batch: batch=1 is a quiet server, larger batches a busy one or a replay.
func BenchmarkProjectionApply(b *testing.B) {
	for _, size := range []int{1, 100, 1000} {
		b.Run(fmt.Sprintf("batch=%d", size), func(b *testing.B) {
			p := benchProjector(b, eventlog.RuntimeStream, func(db *DB) []Projection { return []Projection{NewThreads(db)} })
			seq := uint64(0)
			events := 0
			for b.Loop() {
				batch := make([]eventlog.Event, size)
				for i := range batch {
					seq++
					batch[i] = threadEvent(b, int(seq))
					batch[i].Seq = seq
				}
				if err := p.apply(p.prepareBatch(batch)); err != nil {
					b.Fatal(err)
				}
				events += size
			}
			b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// BenchmarkRebuild100k replays a log of 100,000 thread events into an empty projection file,
// as `jetgraph projections rebuild` does.
func BenchmarkRebuild100k(b *testing.B) {
	const n = 100_000
	l := eventlogtest.Open(b)
	ctx := context.Background()
	var wg sync.WaitGroup
	const writers = 16
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += writers {
				if _, err := l.Append(ctx, threadEvent(b, i), eventlog.Any); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	last, err := l.LastSeq(ctx, eventlog.RuntimeStream)
	if err != nil || last != n {
		b.Fatalf("log holds %d events (%v), want %d", last, err, n)
	}
	dir := b.TempDir()
	round := 0
	for b.Loop() {
		round++
		db, err := OpenDB(filepath.Join(dir, fmt.Sprintf("p%d.db", round)), nil)
		if err != nil {
			b.Fatal(err)
		}
		threads := NewThreads(db)
		p := NewProjector(db, l, eventlog.RuntimeStream, threads)
		rctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); _ = p.Run(rctx) }()
		wctx, wcancel := context.WithTimeout(ctx, 5*time.Minute)
		if err := p.WaitFor(wctx, n); err != nil {
			b.Fatal(err)
		}
		wcancel()
		cancel()
		<-done
		db.Close()
	}
	b.ReportMetric(float64(n*round)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkThreadRunLargeState folds the events of one run on a thread whose state holds a
// conversation of n messages (about 200 bytes each): the run's creation, two root checkpoints
// changing the messages channel, and its end, in one batch, as a busy server applies them.
func BenchmarkThreadRunLargeState(b *testing.B) {
	for _, n := range []int{10, 1000} {
		b.Run(fmt.Sprintf("messages=%d", n), func(b *testing.B) {
			p := benchProjector(b, eventlog.RuntimeStream, func(db *DB) []Projection {
				return []Projection{NewThreads(db), NewRuns(db), NewCheckpoints(db)}
			})
			agg := eventlog.Aggregate{Kind: "thread", Tenant: "default", ID: "big"}
			msgs := make([]any, n)
			for i := range msgs {
				msgs[i] = map[string]any{"type": "human", "id": fmt.Sprintf("m%d", i), "content": strings.Repeat("x", 150)}
			}
			value, err := json.Marshal(msgs)
			if err != nil {
				b.Fatal(err)
			}
			seq := uint64(0)
			ev := func(typ string, data any) eventlog.Event {
				e, err := eventlog.New(agg, typ, data)
				if err != nil {
					b.Fatal(err)
				}
				seq++
				e.Seq = seq
				return e
			}
			if err := p.apply(p.prepareBatch([]eventlog.Event{ev(engine.ThreadCreated, engine.ThreadCreatedData{})})); err != nil {
				b.Fatal(err)
			}
			step := 0
			checkpoint := func(parent string) (eventlog.Event, string) {
				step++
				id := fmt.Sprintf("1ef00000-0000-7000-8000-%012d", step)
				d := engine.CheckpointData{Checkpoint: engine.CheckpointHeader{V: 1, ID: id, TS: time.Unix(int64(step), 0),
					ChannelVersions: map[string]int64{"messages": int64(step)}},
					Metadata: json.RawMessage(`{"source":"loop"}`),
					Blobs:    map[string]engine.BlobData{"messages": {Version: int64(step), Value: value}}}
				if parent != "" {
					d.Parent = &engine.CheckpointRef{ThreadID: agg.ID, ID: parent}
				}
				return ev(engine.ThreadCheckpoint, d), id
			}
			head := ""
			for b.Loop() {
				run := fmt.Sprintf("0190a000-0000-7000-8000-%012d", step)
				batch := []eventlog.Event{ev(engine.RunCreatedEvent, engine.RunCreatedData{Run: engine.RunRecord{Run: engine.Run{RunID: run, AssistantID: "a"}}})}
				var e eventlog.Event
				e, head = checkpoint(head)
				batch = append(batch, e)
				e, head = checkpoint(head)
				batch = append(batch, e, ev(engine.RunFinishedEvent, engine.RunFinishedData{RunID: run, Status: engine.RunSuccess}))
				if err := p.apply(p.prepareBatch(batch)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
