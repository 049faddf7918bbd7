package trace

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestDeriveLLMRun follows a child llm run from its post and patch to the JSON the clients read
// (testdata/run_llm.json).
func TestDeriveLLMRun(t *testing.T) {
	var r Run
	post := object(t, fmt.Sprintf(`{"id": %q, "trace_id": %q, "dotted_order": %q, "parent_run_id": %q,
		"name": "ChatAnthropic", "run_type": "llm", "start_time": "2026-03-01T12:00:00.124456Z", "session_id": "019a0000-0000-7000-8000-0000000000aa",
		"inputs": {"messages": [[
			{"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "HumanMessage"], "kwargs": {"content": "weather?", "type": "human"}},
			{"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "AIMessage"], "kwargs": {"content": "", "type": "ai",
			 "tool_calls": [{"name": "weather", "args": {}, "id": "toolu_1", "type": "tool_call"}]}},
			{"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "ToolMessage"], "kwargs": {"content": "sunny", "tool_call_id": "toolu_1"}},
			{"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "ToolMessage"], "kwargs": {"content": "??", "tool_call_id": "toolu_9"}}]]},
		"extra": {"metadata": {"ls_provider": "anthropic", "ls_model_name": "claude-sonnet-4-5-20250929"}, "invocation_params": {"model": "ignored"}},
		"tags": ["seq:step:1"]}`, childID, rootID, childDotted, rootID))
	patch := object(t, fmt.Sprintf(`{"id": %q, "end_time": "2026-03-01T12:00:02.624456Z",
		"events": [{"name": "start", "time": "2026-03-01T12:00:00.124456Z"}, {"name": "new_token", "time": 1772366400924.456, "kwargs": {"token": "It"}},
			{"name": "new_token", "time": "2026-03-01T12:00:01.000000Z"}],
		"outputs": {"generations": [[{"text": "It is sunny.", "message": {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "AIMessage"],
			"kwargs": {"content": [{"type": "text", "text": "It is sunny."}], "type": "ai", "tool_calls": [],
			"usage_metadata": {"input_tokens": 1200, "output_tokens": 20, "total_tokens": 1220, "input_token_details": {"cache_read": 1000}}}}}]],
			"llm_output": {"usage": {"input_tokens": 99}}}}`, childID))
	for _, step := range []struct {
		kind string
		raw  map[string]any
	}{{KindPost, post}, {KindPatch, patch}} {
		if err := Apply(&r, step.kind, step.raw, true); err != nil {
			t.Fatal(err)
		}
	}
	Derive(&r, DefaultPrices())
	if r.Status != StatusSuccess || r.Latency == nil || *r.Latency != 2.5 {
		t.Errorf("status %s latency %v", r.Status, r.Latency)
	}
	if want := time.Date(2026, 3, 1, 12, 0, 0, 924456000, time.UTC); r.FirstTokenTime == nil || !r.FirstTokenTime.Equal(want) {
		t.Errorf("first_token_time %v, want %v", r.FirstTokenTime, want)
	}
	if r.PromptTokens != 1200 || r.CompletionTokens != 20 || r.TotalTokens != 1220 {
		t.Errorf("tokens %d %d %d", r.PromptTokens, r.CompletionTokens, r.TotalTokens)
	}
	if !approx(r.PromptCost, 200*3e-6+1000*0.3e-6) || !approx(r.CompletionCost, 20*15e-6) || !approx(r.TotalCost, 200*3e-6+1000*0.3e-6+20*15e-6) {
		t.Errorf("costs %v %v %v", *r.PromptCost, *r.CompletionCost, *r.TotalCost)
	}
	if !reflect.DeepEqual(r.MessageProblems, []string{"inputs: tool message 3: tool_call_id toolu_9 names no earlier tool call"}) {
		t.Errorf("message problems %q", r.MessageProblems)
	}
	golden(t, "run_llm", r)

	// DeriveStored gives the same run without the messages, and leaves the inputs and outputs
	// as they were.
	stored := r
	stored.Inputs, stored.Outputs = deepCopy(t, r.Inputs), deepCopy(t, r.Outputs)
	DeriveStored(&stored, DefaultPrices())
	if stored.InputMessages != nil || stored.OutputMessages != nil || stored.MessageProblems != nil {
		t.Errorf("DeriveStored kept messages")
	}
	stored.InputMessages, stored.OutputMessages, stored.MessageProblems = r.InputMessages, r.OutputMessages, r.MessageProblems
	if !reflect.DeepEqual(stored, r) {
		t.Errorf("DeriveStored differs from Derive:\n%+v\n%+v", stored, r)
	}
	// It reads only DerivedInputKeys of the inputs.
	for _, model := range []any{nil, "gpt-4o-mini"} {
		full := stored
		full.Extra = map[string]any{}
		full.Inputs = deepCopy(t, r.Inputs)
		full.Inputs["model"] = model
		part := full
		part.Inputs = map[string]any{}
		for _, k := range DerivedInputKeys {
			if v, ok := full.Inputs[k]; ok {
				part.Inputs[k] = v
			}
		}
		DeriveStored(&full, DefaultPrices())
		DeriveStored(&part, DefaultPrices())
		part.Inputs = full.Inputs
		if !reflect.DeepEqual(part, full) || full.ModelName != firstStr(model) {
			t.Errorf("DeriveStored with inputs %v differs from with all its inputs:\n%+v\n%+v", part.Inputs, part, full)
		}
	}

	// The JSON reads back unchanged.
	b, _ := json.Marshal(r)
	var back Run
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	b2, _ := json.Marshal(back)
	if string(b) != string(b2) {
		t.Errorf("round trip differs:\n%s\n%s", b, b2)
	}
}

func TestDeriveStatusAndTypes(t *testing.T) {
	end := t0.Add(time.Second)
	msg := "boom"
	empty := ""
	tests := []struct {
		r      Run
		status string
	}{
		{Run{StartTime: t0}, StatusPending},
		{Run{StartTime: t0, EndTime: &end}, StatusSuccess},
		{Run{StartTime: t0, EndTime: &end, Error: &msg}, StatusError},
		{Run{StartTime: t0, Error: &msg}, StatusError},
		{Run{StartTime: t0, EndTime: &end, Error: &empty}, StatusSuccess},
	}
	for i, tc := range tests {
		Derive(&tc.r, nil)
		if tc.r.Status != tc.status {
			t.Errorf("%d: status %s, want %s", i, tc.r.Status, tc.status)
		}
	}
	// Only llm runs have tokens and messages of their own; outputs may answer input tool calls.
	chain := &Run{RunType: RunChain, Outputs: map[string]any{"usage_metadata": map[string]any{"input_tokens": 5.0}}}
	Derive(chain, DefaultPrices())
	if chain.TotalTokens != 0 || chain.InputMessages != nil {
		t.Errorf("chain run: %d tokens, messages %v", chain.TotalTokens, chain.InputMessages)
	}
	llm := runFrom(t, `{"inputs": {"messages": [{"role": "assistant", "content": [{"type": "tool_call", "id": "c", "name": "f", "args": {}}]}]},
		"outputs": {"messages": [{"role": "tool", "tool_call_id": "c", "content": "x"}, {"role": "tool", "tool_call_id": "d", "content": "y"}]}}`)
	llm.RunType = RunLLM
	Derive(llm, nil)
	if !reflect.DeepEqual(llm.MessageProblems, []string{"outputs: tool message 1: tool_call_id d names no earlier tool call"}) {
		t.Errorf("problems %q", llm.MessageProblems)
	}
	if llm.OutputMessages[1].ToolCallID != "d" {
		t.Error("flagged message lost its data")
	}
	// Prompt runs and unknown models: tokens without cost.
	unknown := runFrom(t, `{"inputs": {"model": "acme-1"}, "outputs": {"usage_metadata": {"input_tokens": 1, "output_tokens": 1}}}`)
	unknown.RunType = RunLLM
	Derive(unknown, DefaultPrices())
	if unknown.TotalTokens != 2 || unknown.TotalCost != nil {
		t.Errorf("unknown model: %d tokens, cost %v", unknown.TotalTokens, unknown.TotalCost)
	}
}

func TestRunJSONShape(t *testing.T) {
	var r Run
	Derive(&r, nil)
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"id", "trace_id", "parent_run_id", "dotted_order", "name", "run_type", "session_id", "start_time", "end_time",
		"inputs", "outputs", "error", "events", "extra", "tags", "reference_example_id", "status", "prompt_tokens", "completion_tokens",
		"total_tokens", "prompt_cost", "completion_cost", "total_cost", "prompt_token_details", "completion_token_details",
		"first_token_time", "parent_run_ids", "latency"} {
		if _, ok := m[k]; !ok {
			t.Errorf("no %s in %s", k, b)
		}
	}
	for k, want := range map[string]string{"inputs": "map[]", "extra": "map[]", "events": "[]", "tags": "[]", "parent_run_ids": "[]",
		"session_id": "<nil>", "trace_id": "<nil>", "start_time": "<nil>", "total_cost": "<nil>"} {
		if got := fmt.Sprint(m[k]); got != want {
			t.Errorf("%s = %s, want %s", k, got, want)
		}
	}
	for _, k := range []string{"input_messages", "patched_fields", "attachments", "provider"} {
		if _, ok := m[k]; ok {
			t.Errorf("empty %s is written", k)
		}
	}
	r.StartTime = t0
	r.TotalCost = ptr(0.0015)
	b, _ = json.Marshal(r)
	if !strings.Contains(string(b), `"start_time":"2026-03-01T12:00:00.123456+00:00"`) || !strings.Contains(string(b), `"total_cost":0.0015`) {
		t.Errorf("time or cost form: %s", b)
	}
}

func TestFirstTokenTime(t *testing.T) {
	tests := []struct {
		events string
		want   string // "" for none
	}{
		{`[]`, ""},
		{`[{"name": "start", "time": "2026-03-01T12:00:00Z"}]`, ""},
		{`[{"name": "new_token", "time": "2026-03-01T12:00:02Z"}, {"name": "new_token", "time": 1772366401000}]`, "2026-03-01T12:00:01Z"},
		{`[{"name": "new_token", "time": "garbage"}, {"name": "new_token", "time": "2026-03-01T12:00:03+01:00"}]`, "2026-03-01T11:00:03Z"},
	}
	for _, tc := range tests {
		var evs []map[string]any
		if err := json.Unmarshal([]byte(tc.events), &evs); err != nil {
			t.Fatal(err)
		}
		got := FirstTokenTime(&Run{Events: evs})
		switch {
		case tc.want == "" && got != nil:
			t.Errorf("%s: %v, want none", tc.events, got)
		case tc.want != "" && (got == nil || got.Format(time.RFC3339) != tc.want):
			t.Errorf("%s: %v, want %s", tc.events, got, tc.want)
		}
	}
}

func TestRollUp(t *testing.T) {
	p := rootID
	c := childID
	runs := []*Run{
		{ID: rootID, RunType: RunChain, TotalTokens: 99},
		{ID: childID, RunType: RunChain, ParentRunID: &p},
		{ID: grandID, RunType: RunLLM, DottedOrder: childDotted + "." + FormatSegment(t0, grandID), PromptTokens: 10, CompletionTokens: 5,
			TotalTokens: 15, TotalCost: ptr(0.5), PromptTokenDetails: map[string]int{"cache_read": 2}},
		{ID: "019a0000-0000-7000-8000-000000000004", RunType: RunLLM, ParentRunID: &c, TotalTokens: 1},
	}
	RollUp(runs)
	if runs[0].TotalTokens != 16 || !approx(runs[0].TotalCost, 0.5) || runs[0].PromptTokenDetails["cache_read"] != 2 {
		t.Errorf("root: %d tokens, cost %v", runs[0].TotalTokens, runs[0].TotalCost)
	}
	if runs[1].TotalTokens != 16 || runs[1].PromptTokens != 10 {
		t.Errorf("child: %d tokens", runs[1].TotalTokens)
	}
}

func deepCopy(t *testing.T, m map[string]any) map[string]any {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
