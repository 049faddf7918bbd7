package graph

import (
	"encoding/json"
	"fmt"

	"github.com/google/uuid"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/jsoncount"
)

// Messages is a channel of chat messages merged with AddMessages. Its value is always
// []engine.Message, also after a restore from a checkpoint.
func Messages() Spec {
	return Spec{
		New:      func() Channel { return &messages{v: []engine.Message{}} },
		Messages: true,
		Schema: map[string]any{
			"type": "array", "items": map[string]any{"type": "object"}, "langgraph_type": "messages",
		},
	}
}

type messages struct{ v []engine.Message }

func (c *messages) Get() (any, bool) { return c.v, true }

func (c *messages) clone() Channel { return &messages{v: c.v} }

func (c *messages) Update(writes []any) (bool, error) {
	for _, w := range writes {
		v, err := AddMessages(c.v, w)
		if err != nil {
			return false, err
		}
		c.v = v
	}
	return len(writes) > 0, nil
}

func (c *messages) Snapshot() (json.RawMessage, bool, error) {
	jsoncount.Encoded()
	raw, err := json.Marshal(c.v)
	return raw, true, err
}

func (c *messages) Restore(raw json.RawMessage) error {
	c.v = nil
	jsoncount.Decoded()
	if err := json.Unmarshal(raw, &c.v); err != nil {
		return err
	}
	if c.v == nil {
		c.v = []engine.Message{}
	}
	for i := range c.v {
		if c.v[i].Type == engine.MessageAI && (c.v[i].ToolCalls == nil || c.v[i].InvalidToolCalls == nil) {
			c.v[i], _ = engine.CoerceMessage(c.v[i]) // a checkpoint written before the lists were always kept
		}
	}
	return nil
}

// AddMessages merges write into current: messages with a new id are appended, a message whose id
// is already there replaces it, and {"type": "remove", "id": ...} deletes one. write may be a
// message, a list of them, a {role, content} dict or a string (a human message). Messages without
// an id get one.
func AddMessages(current []engine.Message, write any) ([]engine.Message, error) {
	var items []any
	switch w := write.(type) {
	case nil:
		return current, nil
	case []engine.Message:
		for _, m := range w {
			items = append(items, m)
		}
	case []any:
		items = w
	default:
		items = []any{w}
	}
	out := append([]engine.Message(nil), current...)
	index := make(map[string]int, len(out))
	for i, m := range out {
		index[m.ID] = i
	}
	for _, it := range items {
		if rm, ok := it.(map[string]any); ok && rm["type"] == "remove" {
			id, _ := rm["id"].(string)
			i, ok := index[id]
			if !ok {
				return nil, fmt.Errorf("add_messages: cannot remove message %q: no such message", id)
			}
			out = append(out[:i], out[i+1:]...)
			index = make(map[string]int, len(out))
			for j, m := range out {
				index[m.ID] = j
			}
			continue
		}
		m, err := engine.CoerceMessage(it)
		if err != nil {
			return nil, fmt.Errorf("add_messages: %w", err)
		}
		if m.ID == "" {
			m.ID = uuid.NewString()
		}
		if i, ok := index[m.ID]; ok {
			out[i] = m
			continue
		}
		index[m.ID] = len(out)
		out = append(out, m)
	}
	return out, nil
}

// MessagesOf returns the messages in state[key], whatever form they are in.
func MessagesOf(state State, key string) []engine.Message {
	switch v := state[key].(type) {
	case []engine.Message:
		return v
	case nil:
		return nil
	default:
		ms, _ := AddMessages(nil, v)
		return ms
	}
}
