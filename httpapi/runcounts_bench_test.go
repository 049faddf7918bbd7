package httpapi_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/engine/jsoncount"
	"github.com/jetgraph/jetgraph/engine/platform"
	"github.com/jetgraph/jetgraph/engine/platform/platformtest"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/httpapi"
	"github.com/jetgraph/jetgraph/projections"
)

// BenchmarkEchoRunCounts drives echo runs through the whole stack a server runs (embedded
// JetStream, bbolt projections, self-tracing, the HTTP handler and its middleware, on loopback),
// one at a time, each `POST /threads` then `POST /threads/{id}/runs/wait` as `jetgraph bench runs`
// sends them, and reports per run what it costs in counts rather than time, which the shared
// machine does not disturb:
//
//   - appends/op: messages appended to the event log (eventlog.Appended);
//   - nats-msgs/op: messages the embedded NATS server received (appends, acknowledgements, API
//     and key-value requests, the run's output stream, its trace);
//   - bbolt-tx/op: bbolt write transactions (projections.WriteTransactions);
//   - bbolt-view/op: bbolt read transactions (projections.ReadTransactions): the projection
//     reads of the handlers, the run service and the runner;
//   - json-enc/op, json-dec/op: JSON documents encoded and decoded at the run path's seams
//     (engine/jsoncount: event data, projection records, checkpoints, channel snapshots, the
//     run's output stream, self-trace spans, request and answer bodies, append acknowledgements);
//   - allocs/op: every allocation of the process, the HTTP client's included.
//
// The background work a run leaves (the projector folding, the self-trace's flush) is waited for
// before the counts are read. Run it with:
//
//	go test ./httpapi -run '^$' -bench EchoRunCounts -benchtime 2000x
//
// At the start of this work (the tree of df7ddf2; nothing on the run path changed since 5bd79db),
// 500 runs:
//
//	appends/op 5.0  nats-msgs/op 10.7  bbolt-tx/op 4.4  json-enc/op 40  json-dec/op 46  allocs/op 5207 (550 KB)
//
// After the thread records of a batch are folded in memory and a run transition is decoded once
// (0b5bde7 and the commit after it), 500 runs:
//
//	appends/op 5.0  nats-msgs/op 10.7  bbolt-tx/op 4.45  json-enc/op 37  json-dec/op 41  allocs/op 5104 (548 KB)
//
// And once the checkpoints fold takes the checkpoint payload the threads fold decoded:
//
//	appends/op 5.0  nats-msgs/op 10.7  bbolt-tx/op 4.35  json-enc/op 37  json-dec/op 38  allocs/op 5002 (535 KB)
//
// Once the projector's folds stop reading back what they folded a moment before (a run's state,
// a checkpoint's parent, the thread record of the last batches), decode a run_created or
// run_finished payload once for two folds, and a transaction opens only the buckets it writes
// (branch hproj; projections/echo_bench_test.go's FoldEchoRuns counts the folds alone), 500 runs:
//
//	appends/op 5.0  nats-msgs/op 10.6  bbolt-tx/op 4.33  json-enc/op 37  json-dec/op 30  allocs/op 4434 (518 KB)
//
// bbolt-tx/op stays at about one per append here: with one client each append is folded, and
// waited for, before the next is made; under concurrent load the projector folds what arrives
// together in one transaction (0.66 per run at 16 clients).
//
// The read side of the run path, apart (branch hreads; bbolt-view/op counted from then on), 500 runs:
//
//	bbolt-view/op 19.1  json-dec/op 38  allocs/op 5033 (545 KB)
//
// once the worker takes the record of a run its process created from memory (Runs.Hold), the
// assistants' records are kept decoded (Assistants.Get, coherent with the folds), the states of
// runs that ended lately stay in memory, run creation reads its thread once, and the access log
// and the request metrics build nothing they do not need:
//
//	appends/op 5.0  nats-msgs/op 10.7  bbolt-tx/op 4.35  bbolt-view/op 13.0  json-enc/op 37  json-dec/op 30  allocs/op 4797 (531 KB)
//
// Executing the run, apart (branch hexec), on the tree of afb589b (2000 runs, base 5118 allocs/op on this run): each
// checkpoint's event written by a direct encoder, its metadata in it (engine/checkpoints/
// encode.go: 13 allocations against encoding/json's 56, BenchmarkCheckpointEvent), no JSON round
// trip for a span's tags and triggers, and the self-trace's spans encoded once from a typed post
// and appended without Ingest's map of fields (tracing.IngestEncoded). json-enc counts those two
// spans now where they are encoded (Ingest's encoding of their maps was not counted):
//
//	appends/op 5.0  nats-msgs/op 10.7  bbolt-tx/op 4.37  json-enc/op 34  json-dec/op 36  allocs/op 4895 (552 KB)
//
// The three together (main after the merges of hproj, hreads and hexec), 500 runs:
//
//	appends/op 5.0  nats-msgs/op 10.6  bbolt-tx/op 4.32  bbolt-view/op 13.0  json-enc/op 34  json-dec/op 20  allocs/op 3974 (501 KB)
//
// The HTTP layer apart (branch hhttp, on f8529a7: 3983 allocs/op, 502 KB on its base run): one
// middleware in front instead of six (echo makes a closure per middleware per request), CORS
// and the UTF-8 check paying only for what they do, answers encoded by go-json-experiment's v1
// encoder, run bodies decoded in one pass (BenchmarkHTTPRunCycle, the layer alone against
// fakes: 113 -> 58 allocs per cycle), 500 runs:
//
//	appends/op 5.0  nats-msgs/op 10.7  bbolt-tx/op 4.32  bbolt-view/op 13.0  json-enc/op 34  json-dec/op 20  allocs/op 3943 (496 KB)
//
// The projector's side of issue 28, apart (branch hfold, on f8529a7): a run's state stored in a
// binary form, not JSON; the versions, thread records and heads, and a thread's active runs that
// the last committed transactions wrote answered from memory (projections/committed.go), so that
// a run's commands and its worker read the file only for what they have not just folded; the
// key builders allocating once; a thread's head written once per batch. 500 runs:
//
//	appends/op 5.0  nats-msgs/op 10.6  bbolt-tx/op 4.35  bbolt-view/op 4.04  json-enc/op 31  json-dec/op 15  allocs/op 3730 (494 KB)
//
// hhttp, hfold and htrace merged, with a thread's events on two subjects (main at 8cf2b83), 500 runs:
//
//	appends/op 5.0  nats-msgs/op 10.5  bbolt-tx/op 4.28  bbolt-view/op 4.03  json-enc/op 31  json-dec/op 15  allocs/op 3599 (480 KB)
//
// The leases of a lone process kept in it (no bucket's put and delete), the self-trace of the
// runs that end together appended together, acknowledgements decoded by a typed decoder, and the
// checkpoints' payloads handed to the folds by their writer (main at 07a3593), 500 runs:
//
//	appends/op 4.16  nats-msgs/op 7.44  bbolt-tx/op 4.16  bbolt-view/op 4.03  json-enc/op 31  json-dec/op 11.2  allocs/op 3282 (466 KB)
func BenchmarkEchoRunCounts(b *testing.B) {
	p := platformtest.Start(b, platform.Config{Graphs: servedGraphs(b), Logger: quiet()}, nil)
	srv := httpapi.New(httpapi.Deps{Threads: p.Threads, Assistants: p.Assistants, Store: p.Store, Events: p.Log,
		Health: p.Health, Runner: p.Runner, Graphs: p.Graphs, Runs: p.Runs, Logger: quiet(),
		Streams: httpapi.StreamsOf(p.Streams), Outputs: p.Streams})
	ts := serve(b, srv.Handler())
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	post := func(path, body string) []byte {
		resp, err := client.Post(ts.URL+path, "application/json", strings.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("%s: %d %s", path, resp.StatusCode, raw)
		}
		return raw
	}
	run := func() {
		var th struct {
			ThreadID string `json:"thread_id"`
		}
		if err := json.Unmarshal(post("/threads", `{}`), &th); err != nil {
			b.Fatal(err)
		}
		post("/threads/"+th.ThreadID+"/runs/wait", `{"assistant_id":"echo","input":{"messages":[{"role":"user","content":"hi"}]}}`)
	}
	for range 20 { // warm up: the first runs open buckets, caches and connections
		run()
	}
	settle()
	type counts struct{ appends, msgs, txs, views, enc, dec uint64 }
	read := func() counts {
		enc, dec := jsoncount.Counts()
		msgs, _ := p.Log.ServerMessagesIn()
		return counts{eventlog.Appended(), uint64(msgs), projections.WriteTransactions(), projections.ReadTransactions(), enc, dec}
	}
	before := read()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		run()
	}
	b.StopTimer()
	settle()
	after := read()
	n := float64(b.N)
	b.ReportMetric(float64(after.appends-before.appends)/n, "appends/op")
	b.ReportMetric(float64(after.msgs-before.msgs)/n, "nats-msgs/op")
	b.ReportMetric(float64(after.txs-before.txs)/n, "bbolt-tx/op")
	b.ReportMetric(float64(after.views-before.views)/n, "bbolt-view/op")
	b.ReportMetric(float64(after.enc-before.enc)/n, "json-enc/op")
	b.ReportMetric(float64(after.dec-before.dec)/n, "json-dec/op")
}

// settle waits until the work the runs left behind (folds, trace flushes) is done: until the
// counters stop moving for a while.
func settle() {
	last := ^uint64(0)
	for stable := 0; stable < 4; {
		time.Sleep(100 * time.Millisecond)
		enc, dec := jsoncount.Counts()
		now := eventlog.Appended() + projections.WriteTransactions() + enc + dec
		if now == last {
			stable++
		} else {
			stable = 0
		}
		last = now
	}
}

// quiet is a logger that formats what serve logs (the access log at info) and writes it nowhere.
func quiet() *slog.Logger {
	return slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo}))
}
