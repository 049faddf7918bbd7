package traces

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.etcd.io/bbolt"

	"github.com/jetgraph/jetgraph/engine/tracing/trace"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/projections"
)

// benchTraceEvents returns the events of n traces of a chain root and five children, each run
// ~2 KiB, as the ingestion benchmark sends them: posts with end times, or (patched) posts
// without outputs and end times, then patches with them.
func benchTraceEvents(n int, patched bool) []eventlog.Event {
	pad := strings.Repeat("lorem ipsum dolor sit amet ", 30)
	start := time.Now().Add(-time.Minute).UTC()
	var posts, patches []eventlog.Event
	seq := uint64(0)
	ev := func(traceID, typ, run string) eventlog.Event {
		seq++
		return eventlog.Event{ID: eventlog.NewID(start), Type: typ, Version: 1, Seq: seq, Time: start,
			Aggregate: eventlog.Aggregate{Kind: TraceKind, Tenant: "default", ID: traceID}, Data: []byte(`{"run":` + run + `}`)}
	}
	for range n {
		root, _ := uuid.NewV7()
		rootSeg := trace.FormatSegment(start, root.String())
		for c := range 6 {
			id, kind, dotted, parent := root, "chain", rootSeg, ""
			if c > 0 {
				id, _ = uuid.NewV7()
				kind = []string{"llm", "tool"}[c%2]
				dotted = rootSeg + "." + trace.FormatSegment(start.Add(time.Duration(c)*time.Millisecond), id.String())
				parent = fmt.Sprintf(`"parent_run_id":%q,`, root)
			}
			main := fmt.Sprintf(`{"id":%q,"trace_id":%q,%s"dotted_order":%q,"name":"step","run_type":%q,"start_time":%q,"session_name":"bench",`+
				`"extra":{"metadata":{"ls_provider":"openai","ls_model_name":"gpt-4o-mini"}},"inputs":{"messages":[{"role":"user","content":%q}]}`,
				id, root, parent, dotted, kind, start.Format(time.RFC3339Nano), pad)
			outputs := fmt.Sprintf(`"outputs":{"role":"assistant","content":%q,"usage_metadata":{"input_tokens":200,"output_tokens":200,"total_tokens":400}}`, pad)
			end := fmt.Sprintf(`"end_time":%d`, start.Add(50*time.Millisecond).UnixMilli())
			if patched {
				posts = append(posts, ev(root.String(), RunPosted, main+"}"))
				patches = append(patches, ev(root.String(), RunPatched, fmt.Sprintf(`{"id":%q,"trace_id":%q,%s,%s}`, id, root, end, outputs)))
			} else {
				posts = append(posts, ev(root.String(), RunPosted, main+","+end+","+outputs+"}"))
			}
		}
	}
	for i := range patches {
		patches[i].Seq += uint64(len(posts))
	}
	return append(posts, patches...)
}

// BenchmarkTracesFold folds the runs of the ingestion benchmark into the trace projection in
// batches of 600 events, prepared on every core then applied in one transaction each, as the
// projector does, and reports the time a run takes in the transaction (apply_us/event) and in
// all (us/event). "patched" posts runs without outputs, then patches them.
func BenchmarkTracesFold(b *testing.B) {
	for _, patched := range []bool{false, true} {
		b.Run(fmt.Sprintf("patched=%v", patched), func(b *testing.B) {
			db, err := projections.OpenDB(filepath.Join(b.TempDir(), "p.db"), nil)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { db.Close() })
			t := NewTraces(db, nil, nil)
			if err := t.View(func(*TraceView) error { return nil }); err != nil { // creates the buckets
				b.Fatal(err)
			}
			events := benchTraceEvents(max(b.N/6, 100), patched)
			b.ResetTimer()
			var applying time.Duration
			for i := 0; i < len(events); i += 600 {
				batch := events[i:min(i+600, len(events))]
				prepared := make([]any, len(batch))
				workers := runtime.GOMAXPROCS(0)
				var wg sync.WaitGroup
				for w := range workers {
					wg.Go(func() {
						for j := w * len(batch) / workers; j < (w+1)*len(batch)/workers; j++ {
							prepared[j] = t.Prepare(batch[j])
						}
					})
				}
				wg.Wait()
				t0 := time.Now()
				err := db.Update(func(tx *bbolt.Tx) error {
					for j, e := range batch {
						if err := t.ApplyPrepared(tx, e, prepared[j]); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
				applying += time.Since(t0)
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(len(events)), "us/event")
			b.ReportMetric(float64(applying.Microseconds())/float64(len(events)), "apply_us/event")
			b.ReportMetric(0, "ns/op")
		})
	}
}
