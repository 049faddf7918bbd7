package httpapi

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/extract"
)

// maxExtractPaths bounds the paths of one thread search's extract, as the reference server does.
const maxExtractPaths = 10

// extractRoots are the thread fields an extract path may start from.
var extractRoots = []string{"config", "interrupts", "metadata", "values"}

// extractAlias is the shape of an extract alias: an identifier, as the answer's keys.
var extractAlias = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// extractPaths reads a thread search's extract ({alias: path}), recording every problem.
func extractPaths(f *Fields, errs *engine.Violations) map[string]extract.Path {
	if !f.Present("extract") {
		return nil
	}
	var raw map[string]any
	if !f.decode("extract", &raw) {
		errs.Add("dict_type", "Input should be a valid dictionary", "body", "extract")
		return nil
	}
	if len(raw) > maxExtractPaths {
		errs.Add("too_long", fmt.Sprintf("Maximum of %d extract paths allowed, got %d", maxExtractPaths, len(raw)), "body", "extract")
		return nil
	}
	paths := make(map[string]extract.Path, len(raw))
	for _, alias := range slices.Sorted(maps.Keys(raw)) {
		loc := []any{"body", "extract", alias}
		switch {
		case slices.Contains(threadFields, alias):
			errs.Add("value_error", fmt.Sprintf("Extract key %q is a thread field's name", alias), loc...)
			continue
		case !extractAlias.MatchString(alias):
			errs.Add("value_error", fmt.Sprintf("Extract key %q must be a valid identifier (letters, digits, underscores)", alias), loc...)
			continue
		}
		s, ok := raw[alias].(string)
		if !ok || s == "" {
			errs.Add("string_type", fmt.Sprintf("Extract path for %q must be a non-empty string", alias), loc...)
			continue
		}
		p, err := extract.Parse(s)
		if err != nil {
			errs.Add("value_error", err.Error(), loc...)
			continue
		}
		if !slices.Contains(extractRoots, p.Root()) {
			errs.Add("value_error", fmt.Sprintf("Extract path %q must start with one of: %s", s, strings.Join(extractRoots, ", ")), loc...)
			continue
		}
		paths[alias] = p
	}
	return paths
}

// withExtracted answers threads as a search with extract does: the selected fields (all
// without select) and "extracted", each alias's value at its path (null where it does not
// resolve). Paths read the thread as answers show it, its secrets masked.
func withExtracted(ts []engine.Thread, sel []string, paths map[string]extract.Path) ([]map[string]any, error) {
	out := make([]map[string]any, len(ts))
	for i, t := range ts {
		all, err := JSONFields(masked(t))
		if err != nil {
			return nil, err
		}
		row := make(map[string]any, len(all)+1)
		for k, v := range all {
			if len(sel) == 0 || slices.Contains(sel, k) {
				row[k] = v
			}
		}
		roots := map[string]any{}
		got := make(map[string]any, len(paths))
		for alias, p := range paths {
			root, ok := roots[p.Root()]
			if !ok {
				if err := json.Unmarshal(all[p.Root()], &root); err != nil && len(all[p.Root()]) > 0 {
					return nil, fmt.Errorf("extract %s: %w", p, err)
				}
				roots[p.Root()] = root
			}
			got[alias] = p.From(root)
		}
		row["extracted"] = got
		out[i] = row
	}
	return out, nil
}
