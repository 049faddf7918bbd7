package httpapitest

import (
	"encoding/json"
	"testing"
	"time"
)

// Eventually polls cond until it holds, failing the test after 30 s: what a client sees after
// an asynchronous step (a fold, a run's end) is waited for, never slept on.
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// JSONText is v as JSON text, to compare decoded values.
func JSONText(t testing.TB, v any) string {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}
