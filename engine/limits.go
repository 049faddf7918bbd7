package engine

import "fmt"

// MaxStateBytes is the largest state or input jetgraph accepts, as JSON: a run's input or
// command, a state update's values, a thread's supersteps, a store item's value, and the channel
// values of one checkpoint together. Larger ones are refused (TooLarge, 413) before anything is
// appended. The event log carries any size (bodies past NATS's max payload go to its object
// store by reference), so this bound is one of memory and time: a state is held a few times
// over while a run reads, steps, saves and streams it.
const MaxStateBytes = 64 << 20

// MaxStateText is MaxStateBytes as error messages name it.
const MaxStateText = "64 MiB"

// StateTooLarge is the error of op when what (a field, "the state") holds n bytes of JSON, over
// MaxStateBytes.
func StateTooLarge(op, what string, n int) error {
	return E(Op(op), TooLarge, fmt.Sprintf("%s is %d bytes of JSON, over the limit of %s (%d bytes) for a state or input.",
		what, n, MaxStateText, MaxStateBytes))
}
