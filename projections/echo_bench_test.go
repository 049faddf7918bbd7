package projections

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"testing"

	"github.com/jetgraph/jetgraph/engine/jsoncount"
	"github.com/jetgraph/jetgraph/eventlog"
)

// echoRun reads testdata/echo_run.ndjson: the runtime events of one echo run as a server logs
// them (thread created; run_created; run_started; then, in one packed message, three root
// checkpoints and run_finished), grouped by log message.
func echoRun(b *testing.B) [][]eventlog.Event {
	f, err := os.Open("testdata/echo_run.ndjson")
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var groups [][]eventlog.Event
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e eventlog.Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			b.Fatal(err)
		}
		if n := len(groups); n > 0 && groups[n-1][0].Seq == e.Seq {
			groups[n-1] = append(groups[n-1], e)
		} else {
			groups = append(groups, []eventlog.Event{e})
		}
	}
	if err := sc.Err(); err != nil {
		b.Fatal(err)
	}
	return groups
}

// renamed returns e of another run: the thread and run ids of the recorded run, wherever they
// appear, are replaced by ids of the same length (so checkpoint and run keys sort as they would),
// and the event gets an id of its own.
func renamed(e eventlog.Event, thread, run, newThread, newRun string) eventlog.Event {
	e.ID = eventlog.NewID(e.Time)
	e.Aggregate.ID = newThread
	data := bytes.ReplaceAll(e.Data, []byte(thread), []byte(newThread))
	e.Data = bytes.ReplaceAll(data, []byte(run), []byte(newRun))
	return e
}

// BenchmarkFoldEchoRuns folds the events of echo runs with the runtime stream's projections, as
// the server's projector does, and reports per run (op) what it costs in counts: JSON documents
// decoded and encoded by the folds (engine/jsoncount), bbolt write transactions and allocations
// (the process's, so a little of the benchmark's own). lone: each log message of a run in a transaction of its own, as a
// server with one client folds them; busy: each transaction holds one message of each of 16
// runs, at the same stage, as a server with 16 clients in step.
//
//	go test ./projections -run '^$' -bench FoldEchoRuns
//
// Per run, at the start of this work (afb589b) and after it (branch hproj):
//
//	lone  json-dec 16 -> 8  json-enc 9 -> 9  bbolt-tx 4 -> 4      allocs 2013 -> 1412
//	busy  json-dec 16 -> 8  json-enc 9 -> 9  bbolt-tx 0.25 -> 0.25 allocs 753 -> 595
//
// Then (branch hfold, from f8529a7: run states in a binary form, keys built in one allocation,
// no allocation to ask whether an event is a truncation, a thread's head written once per batch,
// the cursors' values in one allocation; the thread records the folds stage for the readers'
// cache cost a few map copies back):
//
//	lone  json-dec 8 -> 8  json-enc 9 -> 6  bbolt-tx 4 -> 4      allocs 1420 -> 1367
//	busy  json-dec 8 -> 8  json-enc 9 -> 6  bbolt-tx 0.25 -> 0.25 allocs 605 -> 560
func BenchmarkFoldEchoRuns(b *testing.B) {
	groups := echoRun(b)
	thread := groups[0][0].Aggregate.ID
	run, err := runID(groups[2][0].Data) // run_started
	if err != nil {
		b.Fatal(err)
	}
	for _, mode := range []struct {
		name string
		runs int
	}{{"lone", 1}, {"busy", 16}} {
		b.Run(mode.name, func(b *testing.B) {
			p := benchProjector(b, eventlog.RuntimeStream, func(db *DB) []Projection {
				return []Projection{NewThreads(db), NewAssistants(db), NewStore(db), NewCheckpoints(db), NewRuns(db), NewCrons(db)}
			})
			var seq uint64
			n := 0
			fold := func() {
				ids := make([][2]string, mode.runs)
				for i := range ids {
					n++
					ids[i] = [2]string{thread[:24] + fmt.Sprintf("%012d", n), run[:24] + fmt.Sprintf("%012d", n)}
				}
				for _, g := range groups {
					var batch []eventlog.Event
					for _, id := range ids {
						seq++
						for _, e := range g {
							e = renamed(e, thread, run, id[0], id[1])
							e.Seq = seq
							batch = append(batch, e)
						}
					}
					if err := p.apply(p.prepareBatch(batch)); err != nil {
						b.Fatal(err)
					}
				}
			}
			fold() // warm up: the buckets' first pages
			enc, dec := jsoncount.Counts()
			txs := WriteTransactions()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			mallocs := ms.Mallocs
			b.ResetTimer()
			for b.Loop() {
				fold()
			}
			b.StopTimer()
			enc2, dec2 := jsoncount.Counts()
			runtime.ReadMemStats(&ms)
			runs := float64(b.N * mode.runs)
			b.ReportMetric(float64(dec2-dec)/runs, "json-dec/run")
			b.ReportMetric(float64(enc2-enc)/runs, "json-enc/run")
			b.ReportMetric(float64(WriteTransactions()-txs)/runs, "bbolt-tx/run")
			b.ReportMetric(float64(ms.Mallocs-mallocs)/runs, "allocs/run")
			b.ReportMetric(b.Elapsed().Seconds()*1e6/runs, "µs/run")
		})
	}
}
