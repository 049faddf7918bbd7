package httpapi

import (
	"strings"

	"github.com/jetgraph/jetgraph/engine"
)

// maxBodyOverhead is what a request body may hold besides one state or input at its limit
// (engine.MaxStateBytes): the rest of the run, update or item, and JSON escaping to spare.
const maxBodyOverhead = 4 << 20

// stateWithin answers 413 (engine.StateTooLarge) when one of the named body fields, which carry
// a state or an input, is over engine.MaxStateBytes. Called before anything is appended.
func stateWithin(f *fields, op string, names ...string) error {
	for _, n := range names {
		if size := len(f.raw[n]); size > engine.MaxStateBytes {
			return engine.StateTooLarge(op, "The "+strings.ReplaceAll(n, "_", " ")+" ("+f.loc+"."+n+")", size)
		}
	}
	return nil
}
