package eventlog_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
)

// BenchmarkAppend measures acknowledged appends to the embedded server, one at a time (each
// waits for its acknowledgement) and from parallel writers, with an optimistic-concurrency
// condition as the services use it.
func BenchmarkAppend(b *testing.B) {
	for _, parallel := range []bool{false, true} {
		b.Run(fmt.Sprintf("parallel=%v", parallel), func(b *testing.B) {
			l := eventlogtest.Open(b)
			ctx := context.Background()
			b.ReportAllocs()
			if !parallel {
				for i := 0; b.Loop(); i++ {
					e := mustEvent(b, thread(fmt.Sprint(i)), "created", map[string]any{"n": i})
					if _, err := l.Append(ctx, e, eventlog.At(0)); err != nil {
						b.Fatal(err)
					}
				}
			} else {
				b.SetParallelism(8)
				var n atomic.Int64
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						id := fmt.Sprintf("p%d", n.Add(1))
						e := mustEvent(b, thread(id), "created", nil)
						if _, err := l.Append(ctx, e, eventlog.Any); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// BenchmarkAppendBatch5 measures atomic batches of five events: of one aggregate (a run
// transition with its checkpoints, packed into one message) and of five aggregates (JetStream's
// atomic batch publish, as when an assistant is deleted with its threads).
func BenchmarkAppendBatch5(b *testing.B) {
	for _, aggregates := range []int{1, 5} {
		b.Run(fmt.Sprintf("aggregates=%d", aggregates), func(b *testing.B) {
			l := eventlogtest.Open(b)
			ctx := context.Background()
			b.ReportAllocs()
			batches := 0
			for i := 0; b.Loop(); i++ {
				batch := make([]eventlog.Pending, 5)
				for j := range batch {
					agg := thread(fmt.Sprintf("%d-%d", i, j%aggregates))
					expect := eventlog.Any
					if j < aggregates {
						expect = eventlog.At(0)
					}
					batch[j] = eventlog.Pending{Event: mustEvent(b, agg, "step", map[string]int{"j": j}), Expect: expect}
				}
				if _, err := l.AppendBatch(ctx, batch); err != nil {
					b.Fatal(err)
				}
				batches++
			}
			b.ReportMetric(float64(batches*5)/b.Elapsed().Seconds(), "events/s")
		})
	}
}
