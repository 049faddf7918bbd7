package trace

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	tests := []struct {
		values []float64
		p      float64
		want   float64
	}{
		{[]float64{5}, 0.5, 5},
		{[]float64{5}, 0.99, 5},
		{[]float64{1, 2}, 0.5, 1.5},
		{[]float64{3, 1, 2}, 0.5, 2},
		{[]float64{4, 1, 3, 2}, 0.5, 2.5},
		{[]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 0.99, 9.91},
		{[]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 0.5, 5.5},
		{[]float64{0.1, 100}, 0.99, 99.001},
		{[]float64{2, 2, 2}, 0.99, 2},
	}
	for _, tc := range tests {
		got := percentile(tc.values, tc.p)
		if got == nil || *got != tc.want {
			t.Errorf("percentile(%v, %v) = %v, want %v", tc.values, tc.p, got, tc.want)
		}
	}
	if percentile(nil, 0.5) != nil {
		t.Error("percentile of nothing")
	}
}

func TestComputeStats(t *testing.T) {
	runs := filterRuns(t)
	RollUp(runs)
	s := ComputeStats(runs)
	// agent 4s, ChatOpenAI 1.499s, search 1s; ChatAnthropic is pending.
	if s.RunCount != 4 || *s.LatencyP50 != 1.499 || *s.LatencyP99 != 3.94998 {
		t.Errorf("count %d latency %v %v", s.RunCount, *s.LatencyP50, *s.LatencyP99)
	}
	if *s.FirstTokenP50 != 0.299 || *s.FirstTokenP99 != 0.299 || s.StreamingRate != 0.25 || s.ErrorRate != 0.25 {
		t.Errorf("ttft %v %v streaming %v errors %v", *s.FirstTokenP50, *s.FirstTokenP99, s.StreamingRate, s.ErrorRate)
	}
	// gpt-4o 1000 in + 200 out; claude-3-5-haiku 10 in: counted once although the root rolled up.
	if s.TotalTokens != 1210 || s.PromptTokens != 1010 || s.CompletionTokens != 200 {
		t.Errorf("tokens %d %d %d", s.TotalTokens, s.PromptTokens, s.CompletionTokens)
	}
	if !approx(s.TotalCost, 1000*2.5e-6+200*10e-6+10*0.8e-6) || !approx(s.PromptCost, 1000*2.5e-6+10*0.8e-6) || !approx(s.CompletionCost, 200*10e-6) {
		t.Errorf("costs %v %v %v", *s.TotalCost, *s.PromptCost, *s.CompletionCost)
	}
	if !s.LastRunStartTime.Equal(t0.Add(time.Hour)) {
		t.Errorf("last run start %v", s.LastRunStartTime)
	}
	// Rolled-up roots alone give the same totals.
	roots := ComputeStats([]*Run{runs[0], runs[3]})
	if roots.TotalTokens != 1210 || !approx(roots.TotalCost, *s.TotalCost) {
		t.Errorf("roots: %d tokens, cost %v", roots.TotalTokens, *roots.TotalCost)
	}
	// JSON: the contract's names, null where unknown.
	b, _ := json.Marshal(ComputeStats(nil))
	want := `{"run_count":0,"latency_p50":null,"latency_p99":null,"first_token_p50":null,"first_token_p99":null,"total_tokens":0,` +
		`"prompt_tokens":0,"completion_tokens":0,"total_cost":null,"prompt_cost":null,"completion_cost":null,"error_rate":0,` +
		`"streaming_rate":0,"last_run_start_time":null}`
	if string(b) != want {
		t.Errorf("empty stats JSON:\n%s\nwant\n%s", b, want)
	}
	b, _ = json.Marshal(s)
	if !strings.Contains(string(b), `"last_run_start_time":"2026-03-01T13:00:00.123456+00:00"`) {
		t.Errorf("stats JSON %s", b)
	}
}
