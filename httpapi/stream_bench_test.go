package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/metrics"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/engine"
)

// Benchmarks of the output bus over HTTP (one embedded process):
//
//	go test ./httpapi -run '^$' -bench BenchmarkStream -benchtime 200x
//
// BenchmarkStreamFirstEvent reports the p50/p99 time from POST /runs/stream to the metadata
// event and to the first token; the fan-out and serve benchmarks report events/s delivered.

// percentile returns the p-th percentile of ds (sorted in place).
func percentile(ds []time.Duration, p float64) time.Duration {
	slices.Sort(ds)
	if len(ds) == 0 {
		return 0
	}
	return ds[min(len(ds)-1, int(float64(len(ds))*p))]
}

func BenchmarkStreamFirstEvent(b *testing.B) {
	s := startStreamStack(b, 0)
	body := `{"assistant_id":"agent","input":` + fooInput + `,"stream_mode":["messages-tuple"]}`
	var toMeta, toToken []time.Duration
	for b.Loop() {
		start := time.Now()
		resp := s.open(b, context.Background(), "POST", "/runs/stream", body, nil)
		var meta, token time.Duration
		_ = readSSE(resp.Body, func(e sseEvent) bool {
			switch {
			case e.Event == "metadata" && meta == 0:
				meta = time.Since(start)
			case e.Event == "messages" && token == 0:
				token = time.Since(start)
			}
			return true
		})
		resp.Body.Close()
		if meta == 0 || token == 0 {
			b.Fatalf("no metadata (%s) or token (%s)", meta, token)
		}
		toMeta, toToken = append(toMeta, meta), append(toToken, token)
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(percentile(toMeta, .5)), "ms-metadata-p50")
	b.ReportMetric(ms(percentile(toMeta, .99)), "ms-metadata-p99")
	b.ReportMetric(ms(percentile(toToken, .5)), "ms-token-p50")
	b.ReportMetric(ms(percentile(toToken, .99)), "ms-token-p99")
}

// createRun creates a run of the tokens graph streaming n tokens on a new thread, not waiting.
func createTokensRun(b *testing.B, s *streamStack, n int) (thread, run string) {
	tid := s.thread(b)
	code, body := s.status(b, "POST", "/threads/"+tid+"/runs", fmt.Sprintf(`{"assistant_id":"tokens","input":{"n":%d},"stream_mode":["messages-tuple"]}`, n), nil)
	if code != 200 {
		b.Fatalf("create run: %d %s", code, body)
	}
	var r engine.Run
	_ = json.Unmarshal([]byte(body), &r)
	return tid, r.RunID
}

// join has clients join the run at once and returns the events they received in all, the
// wall time until the last one ended, and the peak of the live heap (as of each GC; the
// process holds the NATS server and the clients too).
func join(b *testing.B, s *streamStack, thread, run string, clients int) (int64, time.Duration, uint64) {
	var events atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	stop := make(chan struct{})
	var peak atomic.Uint64
	go func() {
		live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		for {
			metrics.Read(live)
			if v := live[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	for range clients {
		wg.Go(func() {
			resp := s.open(b, context.Background(), "GET", "/threads/"+thread+"/runs/"+run+"/stream", "", nil)
			defer resp.Body.Close()
			var n int64
			_ = readSSE(resp.Body, func(e sseEvent) bool { n++; return e.Event != "end" })
			events.Add(n)
		})
	}
	wg.Wait()
	close(stop)
	return events.Load(), time.Since(start), peak.Load()
}

func BenchmarkStreamFanout100(b *testing.B) {
	s := startStreamStack(b, 0)
	const tokens, clients = 5000, 100
	var total int64
	var elapsed time.Duration
	var peak uint64
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	for b.Loop() {
		thread, run := createTokensRun(b, s, tokens)
		n, d, p := join(b, s, thread, run, clients)
		if n < clients*tokens {
			b.Fatalf("delivered %d events, want at least %d", n, clients*tokens)
		}
		total, elapsed, peak = total+n, elapsed+d, max(peak, p)
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(total)/elapsed.Seconds(), "events/s")
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(total), "B-alloc/event")
	b.ReportMetric(float64(peak)/(1<<20), "MB-live-heap-peak")
}

func BenchmarkStreamServe(b *testing.B) {
	s := startStreamStack(b, 0)
	const tokens, clients = 20000, 8
	thread, run := createTokensRun(b, s, tokens)
	if _, err := s.P.Runs.Wait(context.Background(), thread, run); err != nil {
		b.Fatal(err)
	}
	var total int64
	var elapsed time.Duration
	for b.Loop() {
		n, d, _ := join(b, s, thread, run, clients)
		total, elapsed = total+n, elapsed+d
	}
	b.ReportMetric(float64(total)/elapsed.Seconds(), "events/s")
}

// TestStreamFanoutDeliversEverything is the fan-out benchmark's check at test size: every
// joined client gets every token, in order, once.
func TestStreamFanoutDeliversEverything(t *testing.T) {
	s := startStreamStack(t, 0)
	const tokens, clients = 200, 10
	tid := s.thread(t)
	code, body := s.status(t, "POST", "/threads/"+tid+"/runs", fmt.Sprintf(`{"assistant_id":"tokens","input":{"n":%d},"stream_mode":["messages-tuple"]}`, tokens), nil)
	if code != 200 {
		t.Fatalf("create run: %d %s", code, body)
	}
	var r engine.Run
	_ = json.Unmarshal([]byte(body), &r)
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			_, events := s.stream(t, "GET", "/threads/"+tid+"/runs/"+r.RunID+"/stream", "", nil)
			n, last := 0, ""
			for _, e := range events {
				if e.Event == "messages" {
					n++
					if e.ID <= last && len(e.ID) == len(last) {
						t.Errorf("ids out of order: %s after %s", e.ID, last)
					}
					last = e.ID
				}
			}
			if n != tokens || events[len(events)-1].Event != "end" || !strings.HasPrefix(events[0].Event, "metadata") {
				t.Errorf("a client got %d tokens: %v ... %v", n, names(events[:2]), names(events[len(events)-1:]))
			}
		})
	}
	wg.Wait()
}
