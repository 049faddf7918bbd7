package scenarios

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"
)

// cronFire is one fired tick of a cron as its log holds it.
type cronFire struct {
	tick, at time.Time
	run      string
	done     bool
}

// cronFires reads a cron's events from GET /events/cron/{id} (JSON lines).
func cronFires(t *testing.T, base, id string) []cronFire {
	t.Helper()
	resp, err := http.Get(base + "/events/cron/" + id)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out []cronFire
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var e struct {
			Type string    `json:"type"`
			Time time.Time `json:"time"`
			Data struct {
				Tick  time.Time `json:"tick"`
				RunID string    `json:"run_id"`
				Error string    `json:"error"`
			} `json:"data"`
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		switch e.Type {
		case "fired":
			out = append(out, cronFire{tick: e.Data.Tick, at: e.Time, run: e.Data.RunID})
		case "fire_done":
			if e.Data.Error != "" {
				t.Errorf("cron %s tick %v: its run failed to be made: %s", id, e.Data.Tick, e.Data.Error)
			}
			for i := range out {
				if out[i].tick.Equal(e.Data.Tick) {
					out[i].done = true
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCronsFireOnceAcrossProcesses runs per-second crons on two processes sharing one NATS and
// kills one with SIGKILL half-way: every tick between a cron's first and last fire is fired
// exactly once (no duplicate, none missed) and makes exactly one run, with the id its fire
// recorded. It logs the lateness of the fires (fire time - tick time).
//
// JETGRAPH_CRON_TICKS sets how many ticks in all (default 100; 1000 for the figure in the
// README's Performance section): `JETGRAPH_CRON_TICKS=1000 go test ./scenarios/ -run
// TestCronsFireOnceAcrossProcesses -v`.
func TestCronsFireOnceAcrossProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	total := 100
	if v := os.Getenv("JETGRAPH_CRON_TICKS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 10 {
			t.Fatalf("JETGRAPH_CRON_TICKS=%q: want a number of ticks, at least 10", v)
		}
		total = n
	}
	crons := min(50, max(10, total/20))
	seconds := (total + crons - 1) / crons

	natsAddr := freeAddr(t)
	dataA := t.TempDir()
	a := startServerArgs(t, dataA, append([]string{"--nats-listen", natsAddr}, fastFailover...)...)
	b := startServerArgs(t, t.TempDir(), append([]string{"--nats-url", "nats://" + natsAddr, "--nats-creds", filepath.Join(dataA, "nats-user.nk")}, fastFailover...)...)

	ids, threads := make([]string, crons), make([]string, crons)
	for i := range ids {
		base := []string{a.URL, b.URL}[i%2]
		threads[i] = get(api(t, "POST", base+"/threads", `{}`, 200), "thread_id").(string)
		c := api(t, "POST", base+"/threads/"+threads[i]+"/runs/crons",
			`{"assistant_id": "echo", "schedule": "* * * * * *", "input": {"messages": [{"role": "user", "content": "tick"}]}}`, 200)
		ids[i] = get(c, "cron_id").(string)
	}
	start := time.Now()
	fired := func() int {
		n := 0
		for _, id := range ids {
			n += len(cronFires(t, a.URL, id))
		}
		return n
	}
	waitFires := func(n int) {
		for deadline := time.Now().Add(time.Duration(seconds)*time.Second + time.Minute); fired() < n; time.Sleep(time.Second) {
			if time.Now().After(deadline) {
				t.Fatalf("only %d ticks fired, want %d", fired(), n)
			}
		}
	}
	waitFires(total / 2)
	b.Kill9()
	killed := time.Now()
	waitFires(total)
	for _, id := range ids {
		api(t, "PATCH", a.URL+"/runs/crons/"+id, `{"enabled": false}`, 200)
	}

	var lateness []time.Duration
	dups, missed, fires := 0, 0, 0
	for i, id := range ids {
		var fs []cronFire
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			fs = cronFires(t, a.URL, id)
			if len(fs) == 0 || fs[len(fs)-1].done {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("cron %s: its last fire is still pending", id)
			}
		}
		fires += len(fs)
		runIDs := map[string]bool{}
		for j, f := range fs {
			lateness = append(lateness, f.at.Sub(f.tick))
			if !f.done {
				t.Errorf("cron %s tick %v: fire never completed", id, f.tick)
			}
			runIDs[f.run] = true
			if j == 0 {
				continue
			}
			switch gap := f.tick.Sub(fs[j-1].tick); {
			case gap <= 0:
				dups++
			case gap > time.Second:
				missed += int(gap/time.Second) - 1
			}
		}
		runs := api(t, "GET", a.URL+"/threads/"+threads[i]+"/runs?limit=1000", "", 200).([]any)
		for _, r := range runs {
			if !runIDs[get(r, "run_id").(string)] {
				t.Errorf("cron %s: run %v was not recorded by a fire", id, get(r, "run_id"))
			}
		}
		if len(runs) != len(fs) {
			t.Errorf("cron %s: %d runs for %d fires", id, len(runs), len(fs))
		}
	}
	slices.Sort(lateness)
	pct := func(p float64) time.Duration { return lateness[min(len(lateness)-1, int(p*float64(len(lateness))))] }
	t.Logf("%d crons, %d ticks fired over %s (process B killed after %s): %d duplicates, %d missed; lateness p50 %s, p99 %s, max %s",
		crons, fires, time.Since(start).Round(time.Second), killed.Sub(start).Round(time.Second), dups, missed,
		pct(0.5).Round(time.Millisecond), pct(0.99).Round(time.Millisecond), lateness[len(lateness)-1].Round(time.Millisecond))
	if dups > 0 || missed > 0 {
		t.Fatalf("%d duplicate and %d missed ticks, want none", dups, missed)
	}
}
