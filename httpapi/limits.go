package httpapi

import (
	"strings"

	"github.com/jetgraph/jetgraph/engine"
)

// stateWithin answers 413 (engine.StateTooLarge) when one of the named body fields, which carry
// a state or an input, is over engine.MaxStateBytes. Called before anything is appended.
func stateWithin(f *Fields, op string, names ...string) error {
	for _, n := range names {
		if size := len(f.raw[n]); size > engine.MaxStateBytes {
			return engine.StateTooLarge(op, "The "+strings.ReplaceAll(n, "_", " ")+" ("+f.loc+"."+n+")", size)
		}
	}
	return nil
}
