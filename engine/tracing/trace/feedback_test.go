package trace

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"testing"
	"time"
)

func TestParseFeedback(t *testing.T) {
	run := "0190B7A4-5B3C-7D2E-8F10-1A2B3C4D5E6F"
	cases := []struct {
		name string
		in   string
		want func(f Feedback) bool
		locs []string
	}{
		{"a run's", `{"run_id":"` + run + `","key":"k","score":0.5,"value":"ok","comment":"c","created_at":"ignored","feedbackConfig":{}}`,
			func(f Feedback) bool {
				return *f.RunID == "0190b7a4-5b3c-7d2e-8f10-1a2b3c4d5e6f" && f.TraceID == nil && f.Key == "k" && f.Score == 0.5 && *f.Comment == "c" && f.ID == ""
			}, nil},
		{"a trace's is its root's", `{"trace_id":"` + run + `","key":"k","score":true}`,
			func(f Feedback) bool { return *f.RunID == *f.TraceID && f.Score == true }, nil},
		{"a project's", `{"session_id":"` + run + `","key":"k"}`, func(f Feedback) bool { return f.RunID == nil && f.SessionID != nil }, nil},
		{"a source without a type", `{"run_id":"` + run + `","key":"k","feedback_source":{"metadata":{"a":1}}}`,
			func(f Feedback) bool { return f.Source() == "api" && f.FeedbackSource["metadata"] != nil }, nil},
		{"times and flags", `{"run_id":"` + run + `","key":"k","start_time":"2026-11-22T10:00:00Z","error":true,"extra":{"x":1}}`,
			func(f Feedback) bool {
				return f.StartTime.Equal(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)) && *f.Error && f.Extra["x"] == 1.0
			}, nil},
		{"nothing to rate", `{"key":"k"}`, nil, []string{"run_id"}},
		{"every problem", `{"id":1,"run_id":"x","key":3,"score":"high","comment":[],"feedback_source":{"type":2},"extra":"e","feedback_config":1,"start_time":"soon","error":"no","feedback_group_id":"g"}`,
			nil, []string{"comment", "error", "extra", "feedback_config", "feedback_group_id", "feedback_source", "id", "key", "run_id", "score", "start_time"}},
		{"infinite score", `{"run_id":"` + run + `","key":"k","score":1e400}`, nil, []string{"score"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var obj map[string]any
			if err := json.Unmarshal([]byte(c.in), &obj); err != nil && c.name != "infinite score" {
				t.Fatal(err)
			}
			if c.name == "infinite score" {
				obj = map[string]any{"run_id": run, "key": "k", "score": inf()}
			}
			f, problems := ParseFeedback(obj)
			var locs []string
			for _, p := range problems {
				locs = append(locs, fmt.Sprint(p.Loc...))
			}
			if !slices.Equal(locs, c.locs) {
				t.Errorf("problems at %v, want %v", locs, c.locs)
			}
			if c.want != nil && !c.want(f) {
				t.Errorf("parsed %+v", f)
			}
		})
	}
}

func inf() float64 { return math.Inf(1) }

func TestApplyFeedbackUpdate(t *testing.T) {
	c := "kept"
	f := Feedback{Key: "k", Score: 1.0, Comment: &c, Value: "v"}
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	if p := ApplyFeedbackUpdate(&f, map[string]any{"score": "x", "value": "w"}, at); len(p) != 1 || f.Value != "v" {
		t.Fatalf("a bad update: problems %v, feedback %+v (must be unchanged)", p, f)
	}
	if p := ApplyFeedbackUpdate(&f, map[string]any{"score": nil, "value": "w", "key": "ignored"}, at); p != nil {
		t.Fatal(p)
	}
	if f.Score != nil || f.Value != "w" || f.Key != "k" || *f.Comment != "kept" || !f.ModifiedAt.Equal(at) {
		t.Errorf("after the update: %+v", f)
	}
}

func TestFeedbackStats(t *testing.T) {
	yes, no := true, false
	fs := []Feedback{
		{Key: "correct", Score: 1.0}, {Key: "correct", Score: false}, {Key: "correct", Score: 0.5, Error: &yes},
		{Key: "correct", Score: true, Error: &no}, {Key: "tone", Value: "warm"}, {Key: "tone", Value: "warm"}, {Key: "tone", Value: 3.0},
	}
	got := FeedbackStats(fs)
	f := func(v float64) *float64 { return &v }
	want := map[string]FeedbackStat{
		"correct": {N: 4, Avg: f(0.625), Stdev: f(0.414578098794425), Min: f(0), Max: f(1), Median: f(0.75), Errors: 1, Values: map[string]int{}, Type: "PRIMARY"},
		"tone":    {N: 3, Values: map[string]int{"warm": 2}, Type: "PRIMARY"},
	}
	if !reflect.DeepEqual(got, want) {
		a, _ := json.Marshal(got)
		b, _ := json.Marshal(want)
		t.Errorf("FeedbackStats =\n%s\nwant\n%s", a, b)
	}
	if FeedbackStats(nil) != nil {
		t.Error("no feedback: want nil")
	}
}

// FuzzParseFeedback: any JSON object parses without panicking; what parses without problems
// rates something, has a key, and reads back the same from its own JSON.
func FuzzParseFeedback(f *testing.F) {
	f.Add(`{"run_id":"0190b7a4-5b3c-7d2e-8f10-1a2b3c4d5e6f","key":"k","score":1,"feedback_source":{"type":"api"}}`)
	f.Add(`{"session_id":"0190b7a4-5b3c-7d2e-8f10-1a2b3c4d5e6f","key":"k","value":{"a":[1]},"start_time":1700000000000}`)
	f.Add(`{"trace_id":null,"key":"","score":"x"}`)
	f.Fuzz(func(t *testing.T, in string) {
		var obj map[string]any
		if json.Unmarshal([]byte(in), &obj) != nil {
			return
		}
		fb, problems := ParseFeedback(obj)
		if len(problems) > 0 {
			return
		}
		if fb.Key == "" || fb.RunID == nil && fb.SessionID == nil {
			t.Fatalf("accepted without a key or a target: %+v", fb)
		}
		if fb.ID == "" {
			fb.ID = "0190b7a4-5b3c-7d2e-8f10-1a2b3c4d5e70" // (what a command does)
		}
		raw, err := json.Marshal(fb)
		if err != nil {
			t.Fatal(err)
		}
		var back map[string]any
		if err := json.Unmarshal(raw, &back); err != nil {
			t.Fatal(err)
		}
		again, problems := ParseFeedback(back)
		if len(problems) > 0 {
			t.Fatalf("its own JSON %s is refused: %v", raw, problems)
		}
		if a, _ := json.Marshal(again); string(a) != string(raw) {
			t.Fatalf("round trip changed it:\n%s\n%s", raw, a)
		}
	})
}
