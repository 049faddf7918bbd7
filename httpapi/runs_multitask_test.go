package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestMultitaskStrategiesNeverLeakConflicts has 20 clients create runs on one thread at once:
// interrupt, rollback and enqueue retry their lost optimistic-concurrency races inside the
// command, so none of them answers 409; only reject may.
func TestMultitaskStrategiesNeverLeakConflicts(t *testing.T) {
	s := startRunStack(t, nil)
	for _, strategy := range []string{"interrupt", "rollback", "enqueue"} {
		t.Run(strategy, func(t *testing.T) {
			tid := s.newThread(t)
			const clients, each = 20, 5
			body := fmt.Sprintf(`{"assistant_id":"delay","input":{"delay":5,"messages":"x"},"multitask_strategy":%q}`, strategy)
			codes := make(chan int, clients*each)
			var wg sync.WaitGroup
			for range clients {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range each {
						code, _, _ := s.call(t, "POST", "/threads/"+tid+"/runs", body)
						codes <- code
					}
				}()
			}
			wg.Wait()
			close(codes)
			count := map[int]int{}
			for c := range codes {
				count[c]++
			}
			if count[200] != clients*each {
				t.Fatalf("statuses %v, want %d times 200", count, clients*each)
			}
		})
	}
}

// TestDeletingAThreadCancelsItsRuns deletes a thread while a ten-minute run of it is in flight:
// the run stops (the thread's lease is free again: a run on the thread created again under the
// same id finishes), and nothing it did comes back on the new thread.
func TestDeletingAThreadCancelsItsRuns(t *testing.T) {
	s := startRunStack(t, nil)
	tid := s.newThread(t)
	doomed := s.startRun(t, tid, `{"assistant_id":"delay","input":{"delay":600000,"messages":"doomed"}}`)
	eventually(t, "the long run runs", func() bool { return s.runStatus(t, tid, doomed) == "running" })
	s.must(t, 204, "DELETE", "/threads/"+tid, "")
	s.must(t, 200, "POST", "/threads", `{"thread_id":"`+tid+`"}`)
	// Bounded: without the cancellation the wait lasts the ten minutes of the doomed run.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", s.URL+"/threads/"+tid+"/runs/wait",
		strings.NewReader(`{"assistant_id":"delay","input":{"delay":0,"messages":"again"}}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("a run on the thread created again did not finish: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("runs/wait: %d", resp.StatusCode)
	}
	if got, want := s.stateTexts(t, tid), []string{"again", "finished after 0ms"}; !slices.Equal(got, want) {
		t.Fatalf("the new thread's messages %q, want %q", got, want)
	}
}
