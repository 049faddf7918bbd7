package httpapi_test

import (
	"fmt"
	"sync"
	"testing"
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
