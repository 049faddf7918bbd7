package tracingapi_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/engine/platform"
)

// traceBenchRequest is one prepared multipart request and the run whose readability it measures.
type traceBenchRequest struct {
	body  []byte
	ctype string
	last  string // the id of its last run
	runs  int
}

// traceBenchRequests prepares requests for at least n runs: traces of a chain root and five children
// (llm and tool runs), each run about 2 KiB (main part, inputs and outputs), 16 traces (96 runs)
// a request, as the clients batch them.
func traceBenchRequests(b testing.TB, n int) []traceBenchRequest {
	pad := strings.Repeat("lorem ipsum dolor sit amet ", 30) // ~800 bytes of text per field
	var out []traceBenchRequest
	for total := 0; total < n; {
		var parts []tracePart
		var last string
		start := time.Now().Add(-time.Minute)
		for range 16 {
			root := newTracedRun(nil, "agent", "chain", start)
			runs := []map[string]any{root}
			for c := range 5 {
				kind := "llm"
				if c%2 == 1 {
					kind = "tool"
				}
				runs = append(runs, newTracedRun(root, fmt.Sprintf("step-%d", c), kind, start.Add(time.Duration(c+1)*time.Millisecond)))
			}
			for _, r := range runs {
				id := r["id"].(string)
				r["end_time"] = start.Add(50 * time.Millisecond).UnixMilli()
				r["session_name"] = "bench"
				r["extra"] = map[string]any{"metadata": map[string]any{"ls_provider": "openai", "ls_model_name": "gpt-4o-mini"}}
				parts = append(parts, traceJSONPart("post."+id, r),
					traceJSONPart("post."+id+".inputs", map[string]any{"messages": []any{map[string]any{"role": "user", "content": pad}}}),
					traceJSONPart("post."+id+".outputs", map[string]any{"role": "assistant", "content": pad,
						"usage_metadata": map[string]any{"input_tokens": 200, "output_tokens": 200, "total_tokens": 400}}))
				last = id
				total++
			}
		}
		body, ctype := traceMultipartBody(b, parts...)
		out = append(out, traceBenchRequest{body: body, ctype: ctype, last: last, runs: 96})
	}
	return out
}

// BenchmarkIngestMultipart sends nested traces through POST /tracing/runs/multipart on one
// process. "saturate" sends from traceBenchSenders concurrent clients as fast as requests are
// accepted; "rate=N" sends N runs per second, paced. Each reports:
//   - runs/s: runs ingested per second until every run is readable (GET /runs/{id} answers);
//   - accepted_runs/s: runs per second answered 202;
//   - readable_p50_ms, readable_p99_ms: for one request in eight, the time from sending it
//     until its last run is readable (one poller asks GET /runs/{id} every 2 ms).
//
// Run it with a fixed count, e.g. -bench IngestMultipart -benchtime 96000x.
func BenchmarkIngestMultipart(b *testing.B) {
	b.Run("saturate", func(b *testing.B) { benchTraceIngest(b, 0) })
	for _, rate := range []int{5000, 10000, 20000} {
		b.Run(fmt.Sprintf("rate=%d", rate), func(b *testing.B) { benchTraceIngest(b, rate) })
	}
}

func benchTraceIngest(b *testing.B, rate int) {
	s := startTracing(b, platform.TracingConfig{})
	reqs := traceBenchRequests(b, max(b.N, 96))
	runs := 0
	for _, r := range reqs {
		runs += r.runs
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	var (
		next    atomic.Int64
		failed  atomic.Value
		samples = make(chan traceSample, len(reqs))
	)
	readable := func(id string) bool {
		resp, err := client.Get(s.URL + "/runs/" + id)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	}
	// One poller asks GET /runs/{id} for every sampled request still pending, round after round.
	var latencies []time.Duration
	polled := make(chan struct{})
	go func() {
		defer close(polled)
		var pending []traceSample
		for open := true; open || len(pending) > 0; {
			for drained := false; open && !drained; {
				select {
				case smp, ok := <-samples:
					if open = ok; ok {
						pending = append(pending, smp)
					}
				default:
					drained = true
				}
			}
			kept := pending[:0]
			for _, p := range pending {
				if readable(p.id) {
					latencies = append(latencies, time.Since(p.sent))
				} else {
					kept = append(kept, p)
				}
			}
			pending = kept
			time.Sleep(2 * time.Millisecond)
		}
	}()
	senders := traceBenchSenders
	var tick *time.Ticker
	if rate > 0 {
		// One request every 96/rate seconds, from enough senders never to fall behind.
		tick = time.NewTicker(time.Duration(float64(time.Second) * 96 / float64(rate)))
		defer tick.Stop()
		senders = 32
	}
	b.SetBytes(int64(len(reqs[0].body) / reqs[0].runs))
	b.ResetTimer()
	cpu0 := processCPU()
	start := time.Now()
	var wg sync.WaitGroup
	for range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				// The request is claimed before its tick: a sender with nothing left to send
				// must not wait for one more tick (the 32 senders did, adding 32 ticks).
				i := int(next.Add(1)) - 1
				if i >= len(reqs) {
					return
				}
				if tick != nil {
					<-tick.C
				}
				r := reqs[i]
				sent := time.Now()
				resp, err := client.Post(s.URL+"/runs/multipart", r.ctype, bytes.NewReader(r.body))
				if err != nil || resp.StatusCode != 202 {
					failed.Store(fmt.Sprintf("request %d: %v %v", i, err, resp))
					return
				}
				resp.Body.Close()
				if i%8 == 0 {
					samples <- traceSample{id: r.last, sent: sent}
				}
			}
		}()
	}
	wg.Wait()
	acked := time.Since(start)
	close(samples)
	if f := failed.Load(); f != nil {
		b.Fatal(f)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := s.P.TraceProjector.CatchUp(ctx); err != nil {
		b.Fatal(err)
	}
	all := time.Since(start)
	cpu := processCPU() - cpu0
	<-polled
	b.StopTimer()
	if !readable(reqs[len(reqs)-1].last) {
		b.Fatal("the last run is not readable after the projector caught up")
	}
	slices.Sort(latencies)
	pct := func(p float64) float64 {
		return float64(latencies[int(p*float64(len(latencies)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(float64(runs)/all.Seconds(), "runs/s")
	b.ReportMetric(float64(runs)/acked.Seconds(), "accepted_runs/s")
	b.ReportMetric(pct(0.5), "readable_p50_ms")
	b.ReportMetric(pct(0.99), "readable_p99_ms")
	b.ReportMetric(float64(cpu.Microseconds())/float64(runs), "cpu_us/run")
	b.ReportMetric(0, "ns/op")
}

// processCPU is the CPU time (user and system) the process has used so far: divided by the runs
// ingested, a cost that does not depend on what else the machine is running.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// traceSample is a request whose last run the poller waits for.
type traceSample struct {
	id   string
	sent time.Time
}

// traceBenchSenders is the number of concurrent clients of the saturating benchmark.
var traceBenchSenders = 4
