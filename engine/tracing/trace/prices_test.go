package trace

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestUsageOf(t *testing.T) {
	tests := []struct {
		name, run string // the run's outputs and extra
		want      Usage
	}{
		{"outputs.usage_metadata", `{"outputs": {"usage_metadata": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15,
			"input_token_details": {"cache_read": 4}, "output_token_details": {"reasoning": 2}}}}`,
			Usage{Input: 10, Output: 5, Total: 15, InputDetails: map[string]int{"cache_read": 4}, OutputDetails: map[string]int{"reasoning": 2}}},
		{"extra.metadata.usage_metadata", `{"extra": {"metadata": {"usage_metadata": {"input_tokens": 3, "output_tokens": 4}}}}`,
			Usage{Input: 3, Output: 4, Total: 7}},
		{"chat-completions usage_metadata", `{"outputs": {"choices": [{"message": {"role": "assistant", "content": "x",
			"usage_metadata": {"input_tokens": 1, "output_tokens": 2, "total_tokens": 3}}}]}}`, Usage{Input: 1, Output: 2, Total: 3}},
		{"LangChain generations", `{"outputs": {"generations": [[{"message": {"lc": 1, "type": "constructor", "id": ["AIMessage"],
			"kwargs": {"content": "x", "usage_metadata": {"input_tokens": 7, "output_tokens": 1, "total_tokens": 8}}}}]]}}`,
			Usage{Input: 7, Output: 1, Total: 8}},
		{"output messages summed", `{"outputs": {"messages": [
			{"role": "assistant", "content": "a", "usage_metadata": {"input_tokens": 1, "output_tokens": 2, "input_cost": 0.1, "output_token_details": {"reasoning": 1}}},
			{"role": "user", "content": "no usage"},
			{"role": "assistant", "content": "b", "usage_metadata": {"input_tokens": 3, "output_tokens": 4, "input_cost": 0.2, "output_token_details": {"reasoning": 2}}}]}}`,
			Usage{Input: 4, Output: 6, Total: 10, OutputDetails: map[string]int{"reasoning": 3}, InputCost: ptr(0.30000000000000004)}},
		{"OpenAI usage", `{"outputs": {"choices": [], "usage": {"prompt_tokens": 20, "completion_tokens": 10, "total_tokens": 30,
			"prompt_tokens_details": {"cached_tokens": 8, "audio_tokens": 0}, "completion_tokens_details": {"reasoning_tokens": 6}}}}`,
			Usage{Input: 20, Output: 10, Total: 30, InputDetails: map[string]int{"cache_read": 8, "audio": 0}, OutputDetails: map[string]int{"reasoning": 6}}},
		{"Anthropic usage", `{"outputs": {"usage": {"input_tokens": 10, "output_tokens": 3, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 20}}}`,
			Usage{Input: 130, Output: 3, Total: 133, InputDetails: map[string]int{"cache_read": 100, "cache_creation": 20}}},
		{"llm_output.token_usage", `{"outputs": {"llm_output": {"token_usage": {"prompt_tokens": 9, "completion_tokens": 1, "total_tokens": 10}}}}`,
			Usage{Input: 9, Output: 1, Total: 10}},
		{"Gemini usageMetadata", `{"outputs": {"usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "thoughtsTokenCount": 3,
			"totalTokenCount": 18, "cachedContentTokenCount": 4}}}`,
			Usage{Input: 10, Output: 8, Total: 18, InputDetails: map[string]int{"cache_read": 4}, OutputDetails: map[string]int{"reasoning": 3}}},
		{"explicit costs", `{"outputs": {"usage_metadata": {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2,
			"input_cost": 0.5, "output_cost": 0.25, "total_cost": 0.75}}}`,
			Usage{Input: 1, Output: 1, Total: 2, InputCost: ptr(0.5), OutputCost: ptr(0.25), TotalCost: ptr(0.75)}},
		{"first source wins", `{"outputs": {"usage_metadata": {"input_tokens": 1, "output_tokens": 1}, "usage": {"prompt_tokens": 50}}}`,
			Usage{Input: 1, Output: 1, Total: 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := runFrom(t, tc.run)
			got, ok := UsageOf(r)
			if !ok || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("UsageOf = %+v, %v; want %+v", got, ok, tc.want)
			}
		})
	}
	if u, ok := UsageOf(runFrom(t, `{"outputs": {"text": "no usage"}}`)); ok {
		t.Errorf("usage found in a run without: %+v", u)
	}
}

// runFrom decodes a Run from its JSON.
func runFrom(t *testing.T, s string) *Run {
	t.Helper()
	r := &Run{}
	m := object(t, s)
	r.Outputs, _ = m["outputs"].(map[string]any)
	r.Inputs, _ = m["inputs"].(map[string]any)
	r.Extra, _ = m["extra"].(map[string]any)
	return r
}

func TestModelOf(t *testing.T) {
	tests := []struct{ run, provider, model string }{
		{`{"extra": {"metadata": {"svc_model_name": "a", "ls_model_name": "b", "svc_provider": "p", "ls_provider": "q"}}, "inputs": {"model": "c"}}`, "p", "a"},
		{`{"extra": {"metadata": {"ls_model_name": "b", "ls_provider": "q"}}, "inputs": {"model": "c"}}`, "q", "b"},
		{`{"inputs": {"model": "c", "model_name": "d"}}`, "", "c"},
		{`{"inputs": {"model_name": "d"}, "extra": {"invocation_params": {"model": "e"}}}`, "", "d"},
		{`{"extra": {"invocation_params": {"model_name": "f"}}}`, "", "f"},
		{`{"outputs": {"model": "gpt-4o-2024-08-06"}}`, "", "gpt-4o-2024-08-06"},
		{`{}`, "", ""},
	}
	for _, tc := range tests {
		p, m := ModelOf(runFrom(t, tc.run))
		if p != tc.provider || m != tc.model {
			t.Errorf("ModelOf(%s) = %q, %q; want %q, %q", tc.run, p, m, tc.provider, tc.model)
		}
	}
}

func approx(a *float64, b float64) bool { return a != nil && math.Abs(*a-b) < 1e-12 }

func TestPricesCost(t *testing.T) {
	p := DefaultPrices()
	tests := []struct {
		name, provider, model string
		u                     Usage
		prompt, completion    float64
		unknown               bool
	}{
		{"gpt-4o", "openai", "gpt-4o", Usage{Input: 1000, Output: 100}, 1000 * 2.5e-6, 100 * 10e-6, false},
		{"gpt-4o-mini is not gpt-4o", "openai", "gpt-4o-mini-2024-07-18", Usage{Input: 1000, Output: 100}, 1000 * 0.15e-6, 100 * 0.6e-6, false},
		{"dated and prefixed names", "", "openai/gpt-4.1-mini-2025-04-14", Usage{Input: 1e6, Output: 1e6}, 0.40, 1.60, false},
		{"cache reads at their price", "openai", "gpt-4o", Usage{Input: 1000, InputDetails: map[string]int{"cache_read": 400, "audio": 0}},
			600*2.5e-6 + 400*1.25e-6, 0, false},
		{"reasoning tokens at the output price", "openai", "o4-mini", Usage{Input: 10, Output: 100, OutputDetails: map[string]int{"reasoning": 80}},
			10 * 1.1e-6, 100 * 4.4e-6, false},
		{"claude cache write", "anthropic", "claude-sonnet-4-5-20250929", Usage{Input: 130, Output: 3,
			InputDetails: map[string]int{"cache_read": 100, "cache_creation": 20}}, 10*3e-6 + 100*0.3e-6 + 20*3.75e-6, 3 * 15e-6, false},
		{"bedrock name", "bedrock", "us.anthropic.claude-3-5-haiku-20241022-v1:0", Usage{Input: 1e6}, 0.8, 0, false},
		{"opus 4.5 before opus 4", "anthropic", "claude-opus-4-5", Usage{Input: 1e6, Output: 1e6}, 5, 25, false},
		{"gemini", "google_genai", "models/gemini-2.5-flash", Usage{Input: 1e6, Output: 1e6}, 0.30, 2.50, false},
		{"provider breaks the tie", "groq", "llama-3.1-8b-instant", Usage{Input: 1e6, Output: 1e6}, 0.05, 0.08, false},
		{"no provider: first entry", "", "llama-3.1-8b-instant", Usage{Input: 1e6, Output: 1e6}, 0.18, 0.18, false},
		{"another provider does not exclude", "fireworks", "meta-llama-3.1-70b-instruct", Usage{Input: 1e6, Output: 1e6}, 0.88, 0.88, false},
		{"unknown model", "acme", "acme-1", Usage{Input: 10, Output: 10}, 0, 0, true},
		{"no model", "", "", Usage{Input: 10, Output: 10}, 0, 0, true},
	}
	for _, tc := range append(tests, tests...) { // twice: the second from Lookup's cache
		t.Run(tc.name, func(t *testing.T) {
			pr, co, to := p.Cost(tc.provider, tc.model, tc.u)
			if tc.unknown {
				if pr != nil || co != nil || to != nil {
					t.Errorf("costs %v %v %v, want nil", pr, co, to)
				}
				return
			}
			if !approx(pr, tc.prompt) || !approx(co, tc.completion) || !approx(to, tc.prompt+tc.completion) {
				t.Errorf("costs %v %v %v, want %v %v", *pr, *co, *to, tc.prompt, tc.completion)
			}
		})
	}
	// Explicit costs win, each on its own; the total sums what is known.
	pr, co, to := p.Cost("openai", "gpt-4o", Usage{Input: 1000, Output: 100, InputCost: ptr(1.0)})
	if !approx(pr, 1) || !approx(co, 0.001) || !approx(to, 1.001) {
		t.Errorf("explicit input cost: %v %v %v", *pr, *co, *to)
	}
	pr, co, to = p.Cost("acme", "acme-1", Usage{InputCost: ptr(0.1), OutputCost: ptr(0.2), TotalCost: ptr(0.5)})
	if !approx(pr, 0.1) || !approx(co, 0.2) || !approx(to, 0.5) {
		t.Errorf("explicit costs of an unknown model: %v %v %v", pr, co, to)
	}
	if pr, _, to := p.Cost("acme", "acme-1", Usage{InputCost: ptr(0.1)}); !approx(pr, 0.1) || to != nil {
		t.Errorf("half-known costs: %v %v", pr, to)
	}
	own, err := NewPrices([]Price{{Match: "^m$", Input: 1, Output: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if pr, co, _ := own.Cost("", "m", Usage{Input: 1, Output: 1}); !approx(pr, 1) || !approx(co, 2) {
		t.Errorf("NewPrices: %v %v", pr, co)
	}
	if _, err := NewPrices([]Price{{Match: "("}}); err == nil {
		t.Error("NewPrices accepted a bad regexp")
	}
	var none *Prices
	if pr, _, _ := none.Cost("openai", "gpt-4o", Usage{Input: 1}); pr != nil {
		t.Error("a nil table priced a call")
	}
}

func TestLoadPrices(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	good := write("good.json", `[
		{"match": "^gpt-4o$", "input": 1e-6, "output": 2e-6, "details": {"cache_read": 0.5e-6}},
		{"match": "^acme-", "provider": "acme", "input": 3e-6, "output": 4e-6, "output_details": {"reasoning": 1e-6}},
		{"match": "(?i)gpt-4o-mini", "provider": "openai", "input": 0, "output": 0}]`)
	p, err := LoadPrices(good, DefaultPrices())
	if err != nil {
		t.Fatal(err)
	}
	// A new entry wins over the defaults, even where the default names the provider.
	pr, co, _ := p.Cost("openai", "gpt-4o", Usage{Input: 1000, Output: 1000, InputDetails: map[string]int{"cache_read": 500}})
	if !approx(pr, 500*1e-6+500*0.5e-6) || !approx(co, 1000*2e-6) {
		t.Errorf("override: %v %v", *pr, *co)
	}
	pr, co, _ = p.Cost("acme", "acme-large", Usage{Input: 1, Output: 10, OutputDetails: map[string]int{"reasoning": 4}})
	if !approx(pr, 3e-6) || !approx(co, 6*4e-6+4*1e-6) {
		t.Errorf("added: %v %v", *pr, *co)
	}
	// Same match and provider: replaced in place.
	if pr, _, _ := p.Cost("openai", "gpt-4o-mini", Usage{Input: 1000}); !approx(pr, 0) {
		t.Errorf("replaced entry: %v", *pr)
	}
	if len(p.Entries()) != len(DefaultPrices().Entries())+2 {
		t.Errorf("%d entries", len(p.Entries()))
	}
	// The base is not modified.
	if pr, _, _ := DefaultPrices().Cost("openai", "gpt-4o", Usage{Input: 1e6}); !approx(pr, 2.5) {
		t.Errorf("default gpt-4o: %v", *pr)
	}

	bad := write("bad.json", `[
		{"match": "ok", "input": 1, "output": 1},
		{"match": "(", "input": 1, "output": 1},
		{"match": "x", "input": -1, "output": 1, "details": {"cache_read": -2}},
		{"match": "y", "inptu": 1},
		{"input": 1, "output": 1}]`)
	_, err = LoadPrices(bad, nil)
	if err == nil {
		t.Fatal("bad file loaded")
	}
	for _, want := range []string{"bad.json: entry 1: bad regexp", "entry 2: input price -1", "details.cache_read price -2",
		`entry 3: json: unknown field "inptu"`, "entry 4: match is required"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "entry 0") {
		t.Errorf("a good entry was reported: %v", err)
	}
	if _, err := LoadPrices(filepath.Join(dir, "missing.json"), nil); err == nil {
		t.Error("missing file loaded")
	}
	if _, err := LoadPrices(write("obj.json", `{"match": "x"}`), nil); err == nil || !strings.Contains(err.Error(), "obj.json") {
		t.Errorf("an object loaded: %v", err)
	}
}
