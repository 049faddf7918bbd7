package graph

import (
	"encoding/json"
	"fmt"

	"github.com/jetgraph/jetgraph/engine/jsoncount"
)

// Channel holds one value of a graph's state and decides how the writes of a step combine.
// Channels are created fresh for every run from their Spec and restored from checkpoints.
type Channel interface {
	// Get returns the value and whether there is one.
	Get() (any, bool)
	// Update applies the writes of one step (possibly none) and reports whether the value changed.
	Update(writes []any) (bool, error)
	// Snapshot returns the value as JSON for a checkpoint, or false when there is none.
	Snapshot() (json.RawMessage, bool, error)
	// Restore sets the value from a checkpoint's JSON.
	Restore(raw json.RawMessage) error
}

// cloner is implemented by channels that can copy themselves cheaply (without JSON), for
// evaluating a node's branches on the state its own writes leave. Values are shared: reducers
// must return new values rather than modify the current one in place.
type cloner interface{ clone() Channel }

func (c *lastValue) clone() Channel { d := *c; return &d }
func (c *reducer) clone() Channel   { d := *c; return &d }
func (c *ephemeral) clone() Channel { d := *c; return &d }
func (c *topic) clone() Channel     { return &topic{sends: append([]Send(nil), c.sends...)} }

// Spec describes a channel: how to make one, and what its values look like (a JSON Schema).
type Spec struct {
	New    func() Channel
	Schema map[string]any
	// Messages marks a channel of chat messages ("langgraph_type": "messages" in schemas).
	Messages bool
}

// WithSchema returns the spec with a JSON Schema for its values.
func (s Spec) WithSchema(schema map[string]any) Spec { s.Schema = schema; return s }

// InvalidUpdateError is returned when writes do not fit a channel.
type InvalidUpdateError struct{ Msg string }

func (e *InvalidUpdateError) Error() string { return e.Msg }

// LastValue keeps the last value written; two writes in one step are an error.
func LastValue() Spec {
	return Spec{New: func() Channel { return &lastValue{} }}
}

type lastValue struct {
	v   any
	set bool
}

func (c *lastValue) Get() (any, bool) { return c.v, c.set }

func (c *lastValue) Update(writes []any) (bool, error) {
	switch len(writes) {
	case 0:
		return false, nil
	case 1:
		c.v, c.set = writes[0], true
		return true, nil
	}
	return false, &InvalidUpdateError{Msg: "At key: can receive only one value per step. Use an Annotated key to handle multiple values."}
}

func (c *lastValue) Snapshot() (json.RawMessage, bool, error) { return snapshot(c.v, c.set) }

func (c *lastValue) Restore(raw json.RawMessage) error {
	c.set = true
	jsoncount.Decoded()
	return json.Unmarshal(raw, &c.v)
}

func snapshot(v any, set bool) (json.RawMessage, bool, error) {
	if !set {
		return nil, false, nil
	}
	jsoncount.Encoded()
	raw, err := json.Marshal(v)
	return raw, true, err
}

// Reducer folds every write into the value with fn(current, write). When init is not nil the
// channel starts with init() as its value; otherwise the first write is fn(nil, write).
func Reducer(fn func(current, write any) (any, error), init func() any) Spec {
	return Spec{New: func() Channel {
		c := &reducer{fn: fn}
		if init != nil {
			c.v, c.set = init(), true
		}
		return c
	}}
}

type reducer struct {
	fn  func(current, write any) (any, error)
	v   any
	set bool
}

func (c *reducer) Get() (any, bool) { return c.v, c.set }

func (c *reducer) Update(writes []any) (bool, error) {
	for _, w := range writes {
		v, err := c.fn(c.v, w)
		if err != nil {
			return false, err
		}
		c.v, c.set = v, true
	}
	return len(writes) > 0, nil
}

func (c *reducer) Snapshot() (json.RawMessage, bool, error) { return snapshot(c.v, c.set) }

func (c *reducer) Restore(raw json.RawMessage) error {
	c.set = true
	jsoncount.Decoded()
	return json.Unmarshal(raw, &c.v)
}

// Append is a list channel that concatenates what is written to it (a value or a list), as
// Python's operator.add does for Annotated list keys.
func Append() Spec {
	return Reducer(func(cur, w any) (any, error) {
		list, _ := cur.([]any)
		out := append([]any(nil), list...)
		if more, ok := w.([]any); ok {
			return append(out, more...), nil
		}
		if ss, ok := w.([]string); ok {
			for _, s := range ss {
				out = append(out, s)
			}
			return out, nil
		}
		return append(out, w), nil
	}, func() any { return []any{} }).WithSchema(map[string]any{"type": "array", "items": map[string]any{}})
}

// ephemeral holds a value for the one step after it was written: edge triggers and the input.
type ephemeral struct {
	v   any
	set bool
}

func (c *ephemeral) Get() (any, bool) { return c.v, c.set }

func (c *ephemeral) Update(writes []any) (bool, error) {
	if len(writes) == 0 {
		changed := c.set
		c.v, c.set = nil, false
		return changed, nil
	}
	c.v, c.set = writes[len(writes)-1], true
	return true, nil
}

func (c *ephemeral) Snapshot() (json.RawMessage, bool, error) { return snapshot(c.v, c.set) }

func (c *ephemeral) Restore(raw json.RawMessage) error {
	c.set = true
	jsoncount.Decoded()
	return json.Unmarshal(raw, &c.v)
}

// topic collects the Sends of one step; they become the next step's tasks and are then dropped.
type topic struct{ sends []Send }

func (c *topic) Get() (any, bool) { return c.sends, len(c.sends) > 0 }

func (c *topic) Update(writes []any) (bool, error) {
	had := len(c.sends) > 0
	c.sends = nil
	for _, w := range writes {
		s, ok := w.(Send)
		if !ok {
			return false, fmt.Errorf("tasks channel: %T is not a Send", w)
		}
		c.sends = append(c.sends, s)
	}
	return had || len(c.sends) > 0, nil
}

func (c *topic) Snapshot() (json.RawMessage, bool, error) {
	if len(c.sends) == 0 {
		return nil, false, nil
	}
	jsoncount.Encoded()
	raw, err := json.Marshal(c.sends)
	return raw, true, err
}

func (c *topic) Restore(raw json.RawMessage) error { return json.Unmarshal(raw, &c.sends) }
