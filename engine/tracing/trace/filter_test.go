package trace

import (
	"errors"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/engine"
)

// filterRuns is a small project: a root chain "agent" with an llm child "ChatOpenAI" and a
// failing tool "search", and a second root llm run "ChatAnthropic" still pending.
func filterRuns(t testing.TB) []*Run {
	t.Helper()
	end := func(d time.Duration) *time.Time { e := t0.Add(d); return &e }
	parent := rootID
	errText := "Timeout: search took too long"
	runs := []*Run{
		{ID: rootID, Name: "agent", RunType: RunChain, StartTime: t0, EndTime: end(4 * time.Second), DottedOrder: rootDotted,
			TraceID: rootID, SessionID: "019a0000-0000-7000-8000-0000000000aa", Tags: []string{"prod", "beta"},
			Inputs: map[string]any{"question": "What is the capital of France?"}, Outputs: map[string]any{"answer": "Paris"},
			Extra: map[string]any{"metadata": map[string]any{"user": "ann", "conversation_id": "c-1", "tier": 2.0}}},
		{ID: childID, Name: "ChatOpenAI", RunType: RunLLM, StartTime: t0.Add(time.Millisecond), EndTime: end(1500 * time.Millisecond),
			DottedOrder: childDotted, TraceID: rootID, ParentRunID: &parent,
			Events:  []map[string]any{{"name": "new_token", "time": "2026-03-01T12:00:00.423456Z"}},
			Extra:   map[string]any{"metadata": map[string]any{"ls_model_name": "gpt-4o", "user": "bob"}},
			Outputs: map[string]any{"usage_metadata": map[string]any{"input_tokens": 1000.0, "output_tokens": 200.0, "total_tokens": 1200.0}}},
		{ID: grandID, Name: "search", RunType: RunTool, StartTime: t0.Add(2 * time.Second), EndTime: end(3 * time.Second), Error: &errText,
			DottedOrder: rootDotted + "." + FormatSegment(t0.Add(2*time.Second), grandID), TraceID: rootID, ParentRunID: &parent,
			Tags: []string{"prod"}, Inputs: map[string]any{"query": "capital of France", "k": 3.0},
			Extra: map[string]any{"metadata": map[string]any{"flag": true, "note": nil}}},
		{ID: "019a0000-0000-7000-8000-000000000004", Name: "ChatAnthropic", RunType: RunLLM, StartTime: t0.Add(time.Hour),
			TraceID: "019a0000-0000-7000-8000-000000000004", Extra: map[string]any{"metadata": map[string]any{"ls_model_name": "claude-3-5-haiku", "user": "ann"}},
			Outputs: map[string]any{"usage_metadata": map[string]any{"input_tokens": 10.0, "output_tokens": 0.0}}},
	}
	for _, r := range runs {
		Derive(r, DefaultPrices())
	}
	return runs
}

func TestFilterMatches(t *testing.T) {
	runs := filterRuns(t)
	tests := []struct{ filter, want string }{
		{``, "ChatAnthropic ChatOpenAI agent search"},
		{`  `, "ChatAnthropic ChatOpenAI agent search"},
		{`eq(run_type, "llm")`, "ChatAnthropic ChatOpenAI"},
		{`neq(run_type, 'llm')`, "agent search"},
		{`in(run_type, ["tool", "chain"])`, "agent search"},
		{`eq(name, "agent")`, "agent"},
		{`eq(thread_id, "c-1")`, "agent"},
		{`neq(thread_id, "c-1")`, "ChatAnthropic ChatOpenAI search"},
		{`like(name, "chat%")`, "ChatAnthropic ChatOpenAI"},
		{`like(name, "s_arch")`, "search"},
		{`eq(status, "error")`, "search"},
		{`eq(status, "pending")`, "ChatAnthropic"},
		{`eq(error, true)`, "search"},
		{`eq(error, false)`, "ChatAnthropic ChatOpenAI agent"},
		{`neq(error, null)`, "search"},
		{`like(error, "timeout%")`, "search"},
		{`gt(latency, 1.4)`, "ChatOpenAI agent"},
		{`gte(latency, "1s")`, "ChatOpenAI agent search"},
		{`lt(latency, "1500ms")`, "ChatOpenAI search"},
		{`eq(latency, null)`, "ChatAnthropic"},
		{`gt(total_tokens, 1000)`, "ChatOpenAI"},
		{`and(gte(prompt_tokens, 10), lte(completion_tokens, 0))`, "ChatAnthropic"},
		{`gt(total_cost, 0.004)`, "ChatOpenAI"},
		{`eq(total_cost, null)`, "agent search"},
		{`gt(start_time, "2026-03-01T12:30:00Z")`, "ChatAnthropic"},
		{`lt(start_time, "2026-03-01T13:30:00+01:00")`, "ChatOpenAI agent search"},
		{`gte(start_time, 1772366402123)`, "ChatAnthropic search"},
		{`eq(end_time, null)`, "ChatAnthropic"},
		{`neq(first_token_time, null)`, "ChatOpenAI"},
		{`has(tags, "prod")`, "agent search"},
		{`and(has(tags, "prod"), not(has(tags, "beta")))`, "search"},
		{`neq(tags, "prod")`, "ChatAnthropic ChatOpenAI"},
		{`in(tags, ["beta", "nope"])`, "agent"},
		{`eq(trace_id, "` + rootID + `")`, "ChatOpenAI agent search"},
		{`eq(id, "` + childID + `")`, "ChatOpenAI"},
		{`eq(parent_run_id, "` + rootID + `")`, "ChatOpenAI search"},
		{`eq(parent_run_id, null)`, "ChatAnthropic agent"},
		{`eq(is_root, true)`, "ChatAnthropic agent"},
		{`eq(is_root, false)`, "ChatOpenAI search"},
		{`eq(session_id, "019a0000-0000-7000-8000-0000000000aa")`, "agent"},
		{`eq(metadata_key, "conversation_id")`, "agent"},
		{`eq(metadata_value, "ann")`, "ChatAnthropic agent"},
		{`and(eq(metadata_key, "user"), eq(metadata_value, "ann"))`, "ChatAnthropic agent"},
		{`and(eq(metadata_key, "conversation_id"), eq(metadata_value, "ann"))`, ""},
		{`and(in(metadata_key, ["session_id", "conversation_id", "thread_id"]), eq(metadata_value, "c-1"))`, "agent"},
		{`and(eq(metadata_key, "tier"), gte(metadata_value, 2))`, "agent"},
		{`and(eq(metadata_key, "tier"), eq(metadata_value, "2"))`, "agent"},
		{`and(eq(input_key, "k"), eq(input_value, 3))`, "search"},
		{`eq(output_value, "Paris")`, "agent"},
		{`and(eq(metadata_key, "flag"), eq(metadata_value, true))`, "search"},
		{`and(eq(metadata_key, "flag"), eq(metadata_value, "true"))`, "search"},
		{`and(eq(metadata_key, "note"), eq(metadata_value, null))`, "search"},
		{`and(eq(metadata_key, "note"), neq(metadata_value, null))`, ""},
		{`like(metadata_value, "an%")`, "ChatAnthropic agent"},
		{`in(metadata_value, ["bob", 2])`, "ChatOpenAI agent"},
		{`like(tags, "b%")`, "agent"},
		{`in(error, ["Timeout: search took too long", "x"])`, "search"},
		{`search(tags, "PRO")`, "agent search"},
		{`search(outputs, "1200")`, "ChatOpenAI"},
		{`search(error, "took")`, "search"},
		{`search("paris")`, "agent"},
		{`search("FRANCE")`, "agent search"},
		{`search("timeout")`, "search"},
		{`search(inputs, "capital")`, "agent search"},
		{`search(name, "chat")`, "ChatAnthropic ChatOpenAI"},
		{`search(metadata, "bob")`, "ChatOpenAI"},
		{`or(eq(name, "agent"), and(eq(run_type, "llm"), eq(status, "success")))`, "ChatOpenAI agent"},
		{`not(or(eq(name, "agent"), eq(name, "search")))`, "ChatAnthropic ChatOpenAI"},
		{`AND(eq(run_type, "llm"), eq(status, "success"))`, "ChatOpenAI"},
		{`eq(name, "with \"quotes\" and \u00e9")`, ""},
	}
	for _, tc := range tests {
		f, err := ParseFilter(tc.filter)
		if err != nil {
			t.Errorf("ParseFilter(%s): %v", tc.filter, err)
			continue
		}
		var names []string
		for _, r := range runs {
			if f.Match(r) {
				names = append(names, r.Name)
			}
		}
		sort.Strings(names)
		if got := strings.Join(names, " "); got != tc.want {
			t.Errorf("%s matches %q, want %q", tc.filter, got, tc.want)
		}
	}
}

func TestFilterErrors(t *testing.T) {
	tests := []struct {
		filter string
		pos    int
		msg    string
	}{
		{`eq(name "x")`, 8, `expected ","`},
		{`eq(name, "x"`, 12, `expected ")", got end of filter`},
		{`eq(name, "x"))`, 13, "after the end of the filter"},
		{`foo(name, "x")`, 0, "unknown function foo"},
		{`eq(nme, "x")`, 3, "unknown field nme"},
		{`eq(name, x)`, 9, "quote strings"},
		{`eq(name, 5)`, 9, "name is a text field"},
		{`eq(run_type, "agent")`, 13, `"agent" is not a run_type`},
		{`gt(total_tokens, "many")`, 17, "total_tokens is a number"},
		{`gt(latency, "soon")`, 12, "not a duration"},
		{`gt(start_time, "yesterday")`, 15, "not an ISO 8601 time"},
		{`gt(start_time, true)`, 15, "start_time is a time"},
		{`eq(is_root, "yes")`, 12, "is_root takes eq or neq"},
		{`gt(error, true)`, 10, "error with true or false takes eq or neq"},
		{`has(name, "x")`, 10, "has works on tags"},
		{`gt(tags, "x")`, 9, "tags take has, eq, neq, in or like"},
		{`like(latency, "1%")`, 14, "like works on text"},
		{`in(name, "x")`, 9, `expected "[" to open a list`},
		{`in(name, ["x" "y"])`, 14, `expected "," or "]"`},
		{`in(run_type, ["llm", "nope"])`, 21, `"nope" is not a run_type`},
		{`and(eq(name, "x"), )`, 19, "expected a function"},
		{`and()`, 4, "expected a function"},
		{`not(eq(name, "a"), eq(name, "b"))`, 17, `expected ")"`},
		{`search(5)`, 7, "search takes a string"},
		{`search(latency, "x")`, 7, "search cannot look in latency"},
		{`eq(name, "unterminated)`, 9, "unterminated string"},
		{`eq(name, "x") & eq(name, "y")`, 14, "unexpected character"},
		{`eq(total_tokens, 1e)`, 17, "bad number"},
		{`"x"`, 0, "expected a function"},
		{`eq(metadata_key, 3)`, 17, "metadata_key is a key"},
		{`gt(parent_run_id, null)`, 18, "with null takes eq or neq"},
	}
	for _, tc := range tests {
		_, err := ParseFilter(tc.filter)
		var fe *FilterError
		if !errors.As(err, &fe) {
			t.Errorf("ParseFilter(%s) = %v, want a *FilterError", tc.filter, err)
			continue
		}
		if !engine.Is(engine.Invalid, err) {
			t.Errorf("ParseFilter(%s): kind %v, want Invalid", tc.filter, engine.KindOf(err))
		}
		if fe.Pos != tc.pos || !strings.Contains(fe.Msg, tc.msg) {
			t.Errorf("ParseFilter(%s) = %q at %d, want %q at %d", tc.filter, fe.Msg, fe.Pos, tc.msg, tc.pos)
		}
		if !strings.Contains(err.Error(), "position") {
			t.Errorf("error text %q has no position", err)
		}
	}
}
