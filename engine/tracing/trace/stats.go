package trace

import (
	"encoding/json"
	"math"
	"slices"
	"time"

	"github.com/jetgraph/jetgraph/engine"
)

// Stats summarises runs, for POST /runs/stats and GET /sessions/{id}?include_stats=true. Latencies
// and times to first token are in seconds; costs in USD, nil when no run has a known one.
type Stats struct {
	RunCount         int        `json:"run_count"`
	LatencyP50       *float64   `json:"latency_p50"`
	LatencyP99       *float64   `json:"latency_p99"`
	FirstTokenP50    *float64   `json:"first_token_p50"`
	FirstTokenP99    *float64   `json:"first_token_p99"`
	TotalTokens      int        `json:"total_tokens"`
	PromptTokens     int        `json:"prompt_tokens"`
	CompletionTokens int        `json:"completion_tokens"`
	TotalCost        *float64   `json:"total_cost"`
	PromptCost       *float64   `json:"prompt_cost"`
	CompletionCost   *float64   `json:"completion_cost"`
	ErrorRate        float64    `json:"error_rate"`
	StreamingRate    float64    `json:"streaming_rate"`
	LastRunStartTime *time.Time `json:"last_run_start_time"`
}

// MarshalJSON writes the stats with the time in engine.TimeLayout.
func (s Stats) MarshalJSON() ([]byte, error) {
	type plain Stats
	return json.Marshal(struct {
		plain
		LastRunStartTime *engine.Time `json:"last_run_start_time"`
	}{plain(s), timePtr(s.LastRunStartTime)})
}

// ComputeStats summarises derived runs. run_count counts them all; latency percentiles are over
// the finished ones, first-token percentiles (first_token_time minus start_time) over those that
// streamed; error_rate and streaming_rate are fractions of run_count. Percentiles interpolate
// linearly between the closest ranks.
//
// Tokens and costs count each model call once: an llm run counts its own, and a run of another
// type counts its (rolled-up, see RollUp) totals only when none of its descendants is among runs.
// So the stats of a whole project, of its llm runs alone or of its rolled-up roots alone agree.
func ComputeStats(runs []*Run) Stats {
	s := Stats{RunCount: len(runs)}
	if len(runs) == 0 {
		return s
	}
	hasDescendant := map[string]bool{}
	for _, r := range runs {
		for _, a := range ancestorsOf(r) {
			hasDescendant[a] = true
		}
	}
	var latencies, ttfts []float64
	errs, streamed := 0, 0
	for _, r := range runs {
		if r.Latency != nil {
			latencies = append(latencies, *r.Latency)
		} else if r.EndTime != nil && !r.StartTime.IsZero() {
			latencies = append(latencies, r.EndTime.Sub(r.StartTime).Seconds())
		}
		if r.FirstTokenTime != nil {
			streamed++
			if !r.StartTime.IsZero() {
				ttfts = append(ttfts, r.FirstTokenTime.Sub(r.StartTime).Seconds())
			}
		}
		if r.Status == StatusError || r.Status == "" && r.Error != nil && *r.Error != "" {
			errs++
		}
		if !r.StartTime.IsZero() && (s.LastRunStartTime == nil || r.StartTime.After(*s.LastRunStartTime)) {
			s.LastRunStartTime = ptr(r.StartTime)
		}
		if r.RunType != RunLLM && hasDescendant[r.ID] {
			continue
		}
		s.PromptTokens += r.PromptTokens
		s.CompletionTokens += r.CompletionTokens
		s.TotalTokens += r.TotalTokens
		s.PromptCost = sumCost(s.PromptCost, r.PromptCost)
		s.CompletionCost = sumCost(s.CompletionCost, r.CompletionCost)
		s.TotalCost = sumCost(s.TotalCost, r.TotalCost)
	}
	s.LatencyP50, s.LatencyP99 = percentile(latencies, 0.5), percentile(latencies, 0.99)
	s.FirstTokenP50, s.FirstTokenP99 = percentile(ttfts, 0.5), percentile(ttfts, 0.99)
	s.ErrorRate = float64(errs) / float64(len(runs))
	s.StreamingRate = float64(streamed) / float64(len(runs))
	return s
}

// percentile returns the p-quantile of values (0 <= p <= 1) by linear interpolation between the
// closest ranks (numpy's default), or nil when there are no values.
func percentile(values []float64, p float64) *float64 {
	if len(values) == 0 {
		return nil
	}
	v := slices.Clone(values)
	slices.Sort(v)
	pos := p * float64(len(v)-1)
	lo := int(math.Floor(pos))
	hi := int(math.Ceil(pos))
	q := v[lo] + (v[hi]-v[lo])*(pos-float64(lo))
	return ptr(math.Round(q*1e6) / 1e6)
}
