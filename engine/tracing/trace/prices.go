package trace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
)

// Price is one entry of a price table: what a model matched by Match costs, in USD per token.
// Input and Output are the base prices; a token detail (cache_read, cache_creation, audio,
// reasoning...) with a price in InputDetails or OutputDetails, or else in Details, is billed at
// that price instead of the base one. Provider breaks ties between entries that match the same
// model.
type Price struct {
	Match         string             `json:"match"`
	Provider      string             `json:"provider,omitempty"`
	Input         float64            `json:"input"`
	Output        float64            `json:"output"`
	Details       map[string]float64 `json:"details,omitempty"`
	InputDetails  map[string]float64 `json:"input_details,omitempty"`
	OutputDetails map[string]float64 `json:"output_details,omitempty"`

	re *regexp.Regexp
}

// Prices is a price table: entries in priority order. The zero value and nil are empty tables.
type Prices struct {
	entries []Price

	// found caches Lookup: provider, 0x00, model -> the index of the entry (-1: none). Entries
	// never change once the table is built. At most maxFound names are kept.
	found  sync.Map
	nFound atomic.Int32
}

const maxFound = 4096

// Entries returns a copy of the table's entries, in priority order.
func (p *Prices) Entries() []Price {
	if p == nil {
		return nil
	}
	return append([]Price(nil), p.entries...)
}

// Lookup returns the entry pricing model: the first, in priority order, whose regular expression
// matches the model name. The provider breaks ties: when it is known, entries of another provider
// give way to those of this provider or of none, unless no such entry matches.
func (p *Prices) Lookup(provider, model string) (Price, bool) {
	if p == nil || model == "" {
		return Price{}, false
	}
	key := provider + "\x00" + model
	if i, ok := p.found.Load(key); ok {
		if i.(int) < 0 {
			return Price{}, false
		}
		return p.entries[i.(int)], true
	}
	i := p.lookup(provider, model)
	if p.nFound.Load() < maxFound {
		p.nFound.Add(1)
		p.found.Store(key, i)
	}
	if i < 0 {
		return Price{}, false
	}
	return p.entries[i], true
}

// lookup finds the index of Lookup's entry, -1 when none matches.
func (p *Prices) lookup(provider, model string) int {
	first := -1
	for i := range p.entries {
		e := &p.entries[i]
		if !e.re.MatchString(model) {
			continue
		}
		if provider == "" || e.Provider == "" || strings.EqualFold(e.Provider, provider) {
			return i
		}
		if first < 0 {
			first = i
		}
	}
	return first
}

// Cost prices a model call. Explicit costs of u win; the others come from the entry Lookup finds
// (nil when there is none: the price is unknown). The total is the explicit one, else the sum of
// prompt and completion when both are known. Costs are rounded to 1e-12 USD.
func (p *Prices) Cost(provider, model string, u Usage) (prompt, completion, total *float64) {
	prompt, completion, total = u.InputCost, u.OutputCost, u.TotalCost
	if prompt == nil || completion == nil {
		if e, ok := p.Lookup(provider, model); ok {
			if prompt == nil {
				prompt = ptr(round(e.side(u.Input, u.InputDetails, e.Input, e.InputDetails)))
			}
			if completion == nil {
				completion = ptr(round(e.side(u.Output, u.OutputDetails, e.Output, e.OutputDetails)))
			}
		}
	}
	if total == nil && prompt != nil && completion != nil {
		total = ptr(round(*prompt + *completion))
	}
	return prompt, completion, total
}

// side prices one side (input or output) of a call: detail tokens with a price at that price, the
// rest at base.
func (e Price) side(tokens int, details map[string]int, base float64, own map[string]float64) float64 {
	cost := 0.0
	rest := tokens
	for name, n := range details {
		price, ok := own[name]
		if !ok {
			price, ok = e.Details[name]
		}
		if !ok {
			continue
		}
		cost += float64(n) * price
		rest -= n
	}
	return cost + float64(max(rest, 0))*base
}

func round(f float64) float64 { return math.Round(f*1e12) / 1e12 }

// priceFile is an entry of a price file; pointers tell absent from zero.
type priceFile struct {
	Match         *string            `json:"match"`
	Provider      string             `json:"provider"`
	Input         *float64           `json:"input"`
	Output        *float64           `json:"output"`
	Details       map[string]float64 `json:"details"`
	InputDetails  map[string]float64 `json:"input_details"`
	OutputDetails map[string]float64 `json:"output_details"`
}

// LoadPrices reads a price file and returns base with its entries: an entry with the same match
// (and provider) as one of base replaces it in place; the others come first, in file order, so
// that they win over base's. base may be nil (an empty table); it is not modified.
//
// The file is a JSON list of entries: {"match": "<regexp on the model name>", "provider":
// "openai" (optional tiebreaker), "input": 2.5e-6, "output": 1e-5, "details": {"cache_read":
// 1.25e-6}, "input_details": {...}, "output_details": {...}} in USD per token; match, input and
// output are required. Every bad entry (unknown field, bad regexp, negative price) is reported,
// with the file and the entry's index.
func LoadPrices(path string, base *Prices) (*Prices, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("prices: %w", err)
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("prices %s: want a JSON list of entries: %w", path, err)
	}
	var errs []error
	var entries []Price
	for i, r := range raw {
		e, err := parseEntry(r)
		if err != nil {
			errs = append(errs, fmt.Errorf("prices %s: entry %d: %w", path, i, err))
			continue
		}
		entries = append(entries, e)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return base.with(entries), nil
}

func parseEntry(r json.RawMessage) (Price, error) {
	var f priceFile
	dec := json.NewDecoder(bytes.NewReader(r))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return Price{}, err
	}
	var probs []string
	if f.Match == nil || *f.Match == "" {
		probs = append(probs, "match is required")
	}
	if f.Input == nil || f.Output == nil {
		probs = append(probs, "input and output are required")
	}
	e := Price{Provider: f.Provider, Details: f.Details, InputDetails: f.InputDetails, OutputDetails: f.OutputDetails}
	if f.Match != nil && *f.Match != "" {
		e.Match = *f.Match
		re, err := regexp.Compile(e.Match)
		if err != nil {
			probs = append(probs, fmt.Sprintf("bad regexp %q: %v", e.Match, err))
		}
		e.re = re
	}
	check := func(what string, v float64) {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			probs = append(probs, fmt.Sprintf("%s price %v is not a non-negative number", what, v))
		}
	}
	if f.Input != nil {
		e.Input = *f.Input
		check("input", e.Input)
	}
	if f.Output != nil {
		e.Output = *f.Output
		check("output", e.Output)
	}
	for kind, d := range map[string]map[string]float64{"details": f.Details, "input_details": f.InputDetails, "output_details": f.OutputDetails} {
		for name, v := range d {
			check(kind+"."+name, v)
		}
	}
	if len(probs) > 0 {
		return Price{}, errors.New(strings.Join(probs, "; "))
	}
	return e, nil
}

// with returns a table of p's entries overridden and preceded by entries.
func (p *Prices) with(entries []Price) *Prices {
	out := &Prices{entries: p.Entries()}
	var added []Price
	for _, e := range entries {
		replaced := false
		for i, b := range out.entries {
			if b.Match == e.Match && strings.EqualFold(b.Provider, e.Provider) {
				out.entries[i] = e
				replaced = true
				break
			}
		}
		if !replaced {
			added = append(added, e)
		}
	}
	out.entries = append(added, out.entries...)
	return out
}
