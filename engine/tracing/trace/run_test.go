package trace

import (
	"encoding/json"
	"testing"
)

// TestRunThreadID checks the thread a run's metadata names, and that the read shape carries it
// as thread_id (the Python client's list_threads groups roots by that field) only when set.
func TestRunThreadID(t *testing.T) {
	tests := []struct {
		name     string
		metadata map[string]any
		want     string
	}{
		{"none", nil, ""},
		{"thread_id", map[string]any{"thread_id": "t-1"}, "t-1"},
		{"conversation_id", map[string]any{"conversation_id": "c-1", "thread_id": "t-1"}, "c-1"},
		{"session_id first", map[string]any{"session_id": "s-1", "conversation_id": "c-1", "thread_id": "t-1"}, "s-1"},
		{"empty skipped", map[string]any{"session_id": "", "thread_id": "t-1"}, "t-1"},
		{"not a string", map[string]any{"thread_id": 7.0}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Run{ID: rootID, TraceID: rootID, Name: "agent", RunType: RunChain, StartTime: t0}
			if tt.metadata != nil {
				r.Extra = map[string]any{"metadata": tt.metadata}
			}
			if got := r.ThreadID(); got != tt.want {
				t.Fatalf("ThreadID() = %q, want %q", got, tt.want)
			}
			raw, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			if err := json.Unmarshal(raw, &m); err != nil {
				t.Fatal(err)
			}
			got, ok := m["thread_id"]
			if tt.want == "" && ok {
				t.Fatalf("thread_id = %v in %s, want none", got, raw)
			}
			if tt.want != "" && got != tt.want {
				t.Fatalf("thread_id = %v in %s, want %q", got, raw, tt.want)
			}
			var back Run
			if err := json.Unmarshal(raw, &back); err != nil || back.ThreadID() != tt.want {
				t.Fatalf("read back: %v, thread %q", err, back.ThreadID())
			}
		})
	}
}
