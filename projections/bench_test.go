package projections

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
)

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
			l := eventlogtest.Open(b)
			db, err := OpenDB(filepath.Join(b.TempDir(), "p.db"), nil)
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			p := NewProjector(db, l, eventlog.RuntimeStream, NewThreads(db))
			if _, err := p.prepare(context.Background()); err != nil {
				b.Fatal(err)
			}
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
