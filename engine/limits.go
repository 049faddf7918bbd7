package engine

import "fmt"

// The bounds of what one request may ask. Each is checked before anything is appended (a
// projection could not store what passes them otherwise, or the request would take unbounded
// work) and answered 422, or 413 for a body, with the limit named. The README's Limits section
// lists them; change both together.
const (
	// MaxTTLMinutes bounds a thread's or store item's time to live: 100 years. Beyond it an
	// expiry overflows Go's time arithmetic (a ttl of 200,000,000 minutes expired in 1734).
	MaxTTLMinutes = 100 * 365 * 24 * 60

	// MaxStoreKeyBytes bounds a store item's key.
	MaxStoreKeyBytes = 1024
	// MaxNamespaceLabelBytes bounds one label of a store namespace.
	MaxNamespaceLabelBytes = 256
	// MaxNamespaceDepth bounds the labels of a store namespace. With the two bounds above, the
	// projection's key of an item (escaped, at most twice as long) stays far below bbolt's
	// 32 KiB.
	MaxNamespaceDepth = 16

	// MaxNameBytes bounds a graph's node and channel names. Graph factories may build them from
	// a run's config (a client's string); they become projection keys (a thread's values, a
	// checkpoint's blobs, "branch:to:<node>" channels), which bbolt bounds at 32 KiB, so a graph
	// naming one longer fails to build and its run fails before any checkpoint is appended.
	MaxNameBytes = 256

	// MaxProjectNameBytes bounds a tracing project's name (a session's name, a traced run's
	// session_name): the trace projection indexes projects by name, and a bbolt key stops at
	// 32 KiB (a 40 KB name halted it).
	MaxProjectNameBytes = 1024

	// MaxBatchRuns bounds the runs of one POST /runs/batch and the run_ids of one
	// POST /runs/cancel.
	MaxBatchRuns = 1000
	// MaxListLimit bounds the limit of every search and list.
	MaxListLimit = 1000

	// MaxBodyBytes bounds the body of a request that carries no state or input.
	MaxBodyBytes = 1 << 20
	// MaxStateBodyBytes bounds the body of a request that carries a state or a run's input
	// (runs, thread creation with supersteps, state updates, store puts): MaxStateBytes of
	// payload and room for the rest of the request and JSON escaping.
	MaxStateBodyBytes = MaxStateBytes + 4<<20
)

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

// TTLViolation is the problem, at loc, with a time to live of minutes: not a positive number of
// minutes up to MaxTTLMinutes. Nil when there is none.
func TTLViolation(minutes float64, loc ...any) *FieldError {
	switch {
	case minutes > MaxTTLMinutes:
		return &FieldError{Loc: loc, Type: "less_than_equal",
			Msg: fmt.Sprintf("TTL must be at most %d minutes (100 years, MaxTTLMinutes)", MaxTTLMinutes)}
	case !(minutes > 0):
		return &FieldError{Loc: loc, Type: "greater_than", Msg: "TTL must be a positive number of minutes"}
	}
	return nil
}

// ProjectNameViolation is the problem, at loc, with a tracing project name over
// MaxProjectNameBytes. Nil when there is none.
func ProjectNameViolation(name string, loc ...any) *FieldError {
	if len(name) <= MaxProjectNameBytes {
		return nil
	}
	return &FieldError{Loc: loc, Type: "string_too_long",
		Msg: fmt.Sprintf("String should have at most %d bytes (MaxProjectNameBytes)", MaxProjectNameBytes)}
}

// CheckTTL refuses a time to live TTLViolation finds a problem with.
func CheckTTL(op string, minutes float64, loc ...any) error {
	if v := TTLViolation(minutes, loc...); v != nil {
		return E(Op(op), Invalid, []FieldError{*v})
	}
	return nil
}
