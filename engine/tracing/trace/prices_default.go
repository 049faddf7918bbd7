package trace

import (
	"fmt"
	"regexp"
	"slices"
	"sync"
)

// listPrice is a row of the default table in USD per million tokens, as the providers publish
// them: input, output, cached input read and cache write (0 when there is none).
type listPrice struct {
	match, provider           string
	in, out, cacheRead, write float64
}

// defaultTable holds the list prices of common models as the providers published them at the
// time of writing (2025, standard tier, text, no long-context surcharge): they change, so
// operators override or extend them with a price file (LoadPrices). Rows are in priority order:
// a more specific name comes before the family it belongs to. Patterns match anywhere in the
// model name (case-insensitive), so that provider prefixes ("openai/gpt-4o",
// "us.anthropic.claude-sonnet-4-...", "models/gemini-2.5-pro") and date suffixes match.
var defaultTable = []listPrice{
	// OpenAI.
	{`gpt-5-nano`, "openai", 0.05, 0.40, 0.005, 0},
	{`gpt-5-mini`, "openai", 0.25, 2, 0.025, 0},
	{`gpt-5-pro`, "openai", 15, 120, 0, 0},
	{`gpt-5\.2`, "openai", 1.75, 14, 0.175, 0},
	{`gpt-5`, "openai", 1.25, 10, 0.125, 0}, // gpt-5, gpt-5.1, gpt-5-chat, gpt-5-codex
	{`gpt-4\.1-nano`, "openai", 0.10, 0.40, 0.025, 0},
	{`gpt-4\.1-mini`, "openai", 0.40, 1.60, 0.10, 0},
	{`gpt-4\.1`, "openai", 2, 8, 0.50, 0},
	{`gpt-4\.5`, "openai", 75, 150, 37.5, 0},
	{`gpt-4o-mini`, "openai", 0.15, 0.60, 0.075, 0},
	{`gpt-4o-2024-05-13`, "openai", 5, 15, 0, 0},
	{`chatgpt-4o`, "openai", 5, 15, 0, 0},
	{`gpt-4o`, "openai", 2.50, 10, 1.25, 0},
	{`gpt-4-turbo|gpt-4-\d{4}-preview|gpt-4-1106|gpt-4-0125`, "openai", 10, 30, 0, 0},
	{`gpt-4-32k`, "openai", 60, 120, 0, 0},
	{`gpt-4(-\d{4})?$`, "openai", 30, 60, 0, 0},
	{`gpt-3\.5-turbo-instruct`, "openai", 1.50, 2, 0, 0},
	{`gpt-3\.5-turbo`, "openai", 0.50, 1.50, 0, 0},
	{`(^|[/.:])o1-mini`, "openai", 1.10, 4.40, 0.55, 0},
	{`(^|[/.:])o1-pro`, "openai", 150, 600, 0, 0},
	{`(^|[/.:])o1(-\d{4}-\d{2}-\d{2}|-preview.*)?$`, "openai", 15, 60, 7.50, 0},
	{`(^|[/.:])o3-mini`, "openai", 1.10, 4.40, 0.55, 0},
	{`(^|[/.:])o3-pro`, "openai", 20, 80, 0, 0},
	{`(^|[/.:])o3(-\d{4}-\d{2}-\d{2})?$`, "openai", 2, 8, 0.50, 0},
	{`(^|[/.:])o4-mini`, "openai", 1.10, 4.40, 0.275, 0},
	{`text-embedding-3-small`, "openai", 0.02, 0, 0, 0},
	{`text-embedding-3-large`, "openai", 0.13, 0, 0, 0},
	{`text-embedding-ada-002`, "openai", 0.10, 0, 0, 0},

	// Anthropic: cache writes are the 5-minute ones.
	{`claude-opus-4-5|claude-opus-4\.5`, "anthropic", 5, 25, 0.50, 6.25},
	{`claude-opus-4|claude-4-opus|claude-3-opus`, "anthropic", 15, 75, 1.50, 18.75},
	{`claude-haiku-4|claude-4-haiku`, "anthropic", 1, 5, 0.10, 1.25},
	{`claude-3-5-haiku|claude-3\.5-haiku`, "anthropic", 0.80, 4, 0.08, 1},
	{`claude-3-haiku`, "anthropic", 0.25, 1.25, 0.03, 0.30},
	{`claude-sonnet-4|claude-4-sonnet|claude-3-7-sonnet|claude-3\.7-sonnet|claude-3-5-sonnet|claude-3\.5-sonnet|claude-3-sonnet`, "anthropic", 3, 15, 0.30, 3.75},

	// Google Gemini (prompts up to 128k / 200k tokens).
	{`gemini-3-pro`, "google_genai", 2, 12, 0.20, 0},
	{`gemini-2\.5-flash-lite`, "google_genai", 0.10, 0.40, 0.01, 0},
	{`gemini-2\.5-flash`, "google_genai", 0.30, 2.50, 0.03, 0},
	{`gemini-2\.5-pro`, "google_genai", 1.25, 10, 0.125, 0},
	{`gemini-2\.0-flash-lite`, "google_genai", 0.075, 0.30, 0, 0},
	{`gemini-2\.0-flash`, "google_genai", 0.10, 0.40, 0.025, 0},
	{`gemini-1\.5-flash-8b`, "google_genai", 0.0375, 0.15, 0, 0},
	{`gemini-1\.5-flash`, "google_genai", 0.075, 0.30, 0, 0},
	{`gemini-1\.5-pro`, "google_genai", 1.25, 5, 0, 0},

	// Meta Llama 3.x: Together's prices, and Groq's when the provider is groq.
	{`llama-?3(\.\d)?-8b`, "together", 0.18, 0.18, 0, 0},
	{`llama-?3(\.\d)?-70b`, "together", 0.88, 0.88, 0, 0},
	{`llama-?3(\.\d)?-405b`, "together", 3.50, 3.50, 0, 0},
	{`llama-3\.1-8b`, "groq", 0.05, 0.08, 0, 0},
	{`llama-3\.3-70b`, "groq", 0.59, 0.79, 0, 0},
}

// DefaultPrices returns the price table jetgraph ships: the list prices of common OpenAI
// (gpt-5*, gpt-4.1*, gpt-4o*, gpt-4*, gpt-3.5, o1/o3/o4-mini, embeddings), Anthropic (Claude 3,
// 3.5, 3.7, 4, 4.5: Opus, Sonnet, Haiku; with cache read and write prices), Google (Gemini 1.5,
// 2.0, 2.5, 3 Pro; cache reads) and Llama 3.x models at the time of writing. They are list
// prices, which change: override them with a price file (LoadPrices).
func DefaultPrices() *Prices {
	return &Prices{entries: slices.Clone(defaultPrices().entries)}
}

// defaultPrices compiles the default table once; its entries are never modified.
var defaultPrices = sync.OnceValue(func() *Prices {
	p := &Prices{entries: make([]Price, 0, len(defaultTable))}
	for _, row := range defaultTable {
		e := Price{Match: `(?i)` + row.match, Provider: row.provider, Input: row.in / 1e6, Output: row.out / 1e6}
		if row.cacheRead > 0 {
			e.InputDetails = map[string]float64{"cache_read": row.cacheRead / 1e6}
		}
		if row.write > 0 {
			e.InputDetails["cache_creation"] = row.write / 1e6
		}
		e.re = regexp.MustCompile(e.Match)
		p.entries = append(p.entries, e)
	}
	return p
})

// NewPrices builds a table from entries, in priority order, compiling their regular expressions.
func NewPrices(entries []Price) (*Prices, error) {
	p := &Prices{}
	for i, e := range entries {
		re, err := regexp.Compile(e.Match)
		if err != nil {
			return nil, fmt.Errorf("prices: entry %d: bad regexp %q: %w", i, e.Match, err)
		}
		e.re = re
		p.entries = append(p.entries, e)
	}
	return p, nil
}
