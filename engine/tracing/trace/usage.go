package trace

import "strings"

// Usage is the token count, and the costs when the client gave them, of one model call, in the
// terms of LangChain's usage_metadata: Input includes cached input tokens, Output includes
// reasoning tokens, and the details name parts of them (cache_read, cache_creation, audio,
// reasoning...).
type Usage struct {
	Input, Output, Total        int
	InputDetails, OutputDetails map[string]int
	// Explicit costs in USD (usage_metadata input_cost, output_cost, total_cost): they win over
	// the price table.
	InputCost, OutputCost, TotalCost *float64
}

// UsageOf finds the usage of a run, from the first of: outputs.usage_metadata,
// extra.metadata.usage_metadata, the usage_metadata of the output messages (chat-completions
// choices, {message}, LangChain generations, native messages; summed), OpenAI or Anthropic
// outputs.usage, LangChain outputs.llm_output.token_usage (or .usage), Gemini
// outputs.usageMetadata. Each may use the LangChain names (input_tokens...), the OpenAI ones
// (prompt_tokens, completion_tokens, *_tokens_details), Anthropic's (cache_read_input_tokens...)
// or Gemini's (promptTokenCount...).
func UsageOf(r *Run) (Usage, bool) {
	for _, v := range []any{path(r.Outputs, "usage_metadata"), path(r.Extra, "metadata", "usage_metadata")} {
		if u, ok := parseUsage(v); ok {
			return u, true
		}
	}
	if msgs, ok := normalize(r.Outputs); ok {
		var sum *Usage
		for _, m := range msgs {
			if u, ok := parseUsage(m.UsageMetadata); ok {
				if sum != nil {
					u = sum.add(u)
				}
				sum = &u
			}
		}
		if sum != nil {
			return *sum, true
		}
	}
	for _, v := range []any{path(r.Outputs, "usage"), path(r.Outputs, "llm_output", "token_usage"),
		path(r.Outputs, "llm_output", "usage"), path(r.Outputs, "usageMetadata")} {
		if u, ok := parseUsage(v); ok {
			return u, true
		}
	}
	return Usage{}, false
}

// Names of token counts in the usage formats, LangChain's first.
var (
	inputKeys  = []string{"input_tokens", "prompt_tokens", "promptTokenCount", "prompt_token_count"}
	outputKeys = []string{"output_tokens", "completion_tokens", "candidatesTokenCount", "candidates_token_count"}
	totalKeys  = []string{"total_tokens", "totalTokenCount", "total_token_count"}
	inDetails  = []string{"input_token_details", "prompt_tokens_details", "input_tokens_details"}
	outDetails = []string{"output_token_details", "completion_tokens_details", "output_tokens_details"}
)

// parseUsage reads a usage object in any of the formats UsageOf names.
func parseUsage(v any) (Usage, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return Usage{}, false
	}
	var u Usage
	found := false
	get := func(keys []string) (int, bool) {
		for _, k := range keys {
			if n, ok := intOf(m[k]); ok {
				found = true
				return n, true
			}
		}
		return 0, false
	}
	u.Input, _ = get(inputKeys)
	u.Output, _ = get(outputKeys)
	total, hasTotal := get(totalKeys)
	u.InputDetails = details(m, inDetails)
	u.OutputDetails = details(m, outDetails)
	// Anthropic counts cache reads and writes apart from input_tokens; LangChain includes them.
	if _, lc := m["input_token_details"]; !lc {
		for key, name := range map[string]string{"cache_read_input_tokens": "cache_read", "cache_creation_input_tokens": "cache_creation"} {
			if n, ok := intOf(m[key]); ok {
				u.Input += n
				u.InputDetails = addDetail(u.InputDetails, name, n)
				found = true
			}
		}
	}
	// Gemini counts thoughts apart from candidates, and cached content within the prompt.
	if n, ok := intOf(firstNonNil(m["thoughtsTokenCount"], m["thoughts_token_count"])); ok {
		u.Output += n
		u.OutputDetails = addDetail(u.OutputDetails, "reasoning", n)
	}
	if n, ok := intOf(firstNonNil(m["cachedContentTokenCount"], m["cached_content_token_count"])); ok {
		u.InputDetails = addDetail(u.InputDetails, "cache_read", n)
	}
	for key, dst := range map[string]**float64{"input_cost": &u.InputCost, "output_cost": &u.OutputCost, "total_cost": &u.TotalCost} {
		if f, ok := number(m[key]); ok {
			*dst = ptr(f)
			found = true
		}
	}
	if !found {
		return Usage{}, false
	}
	u.Total = total
	if !hasTotal {
		u.Total = u.Input + u.Output
	}
	return u, true
}

// details reads the first present detail object among keys, with OpenAI's names mapped to
// LangChain's (cached_tokens is cache_read, reasoning_tokens reasoning...).
func details(m map[string]any, keys []string) map[string]int {
	for _, k := range keys {
		d, ok := m[k].(map[string]any)
		if !ok {
			continue
		}
		var out map[string]int
		for name, v := range d {
			if n, ok := intOf(v); ok {
				out = addDetail(out, detailName(name), n)
			}
		}
		return out
	}
	return nil
}

// detailName maps a token detail name to LangChain's.
func detailName(s string) string {
	switch s {
	case "cached_tokens", "cache_read_tokens", "cache_read_input_tokens":
		return "cache_read"
	case "cache_creation_input_tokens", "cache_write_tokens":
		return "cache_creation"
	}
	return strings.TrimSuffix(s, "_tokens")
}

func addDetail(d map[string]int, name string, n int) map[string]int {
	if d == nil {
		d = map[string]int{}
	}
	d[name] += n
	return d
}

// add sums two usages; a cost is summed when both have it.
func (u Usage) add(o Usage) Usage {
	s := Usage{Input: u.Input + o.Input, Output: u.Output + o.Output, Total: u.Total + o.Total}
	for k, n := range u.InputDetails {
		s.InputDetails = addDetail(s.InputDetails, k, n)
	}
	for k, n := range o.InputDetails {
		s.InputDetails = addDetail(s.InputDetails, k, n)
	}
	for k, n := range u.OutputDetails {
		s.OutputDetails = addDetail(s.OutputDetails, k, n)
	}
	for k, n := range o.OutputDetails {
		s.OutputDetails = addDetail(s.OutputDetails, k, n)
	}
	s.InputCost, s.OutputCost, s.TotalCost = addCost(u.InputCost, o.InputCost), addCost(u.OutputCost, o.OutputCost), addCost(u.TotalCost, o.TotalCost)
	return s
}

// addCost sums costs; nil (unknown) when either is.
func addCost(a, b *float64) *float64 {
	if a == nil || b == nil {
		return nil
	}
	return ptr(*a + *b)
}

// metadata writes u as a LangChain usage_metadata object.
func (u Usage) metadata() map[string]any {
	m := map[string]any{"input_tokens": u.Input, "output_tokens": u.Output, "total_tokens": u.Total}
	for k, d := range map[string]map[string]int{"input_token_details": u.InputDetails, "output_token_details": u.OutputDetails} {
		if len(d) > 0 {
			dm := make(map[string]any, len(d))
			for name, n := range d {
				dm[name] = n
			}
			m[k] = dm
		}
	}
	for k, c := range map[string]*float64{"input_cost": u.InputCost, "output_cost": u.OutputCost, "total_cost": u.TotalCost} {
		if c != nil {
			m[k] = *c
		}
	}
	return m
}
