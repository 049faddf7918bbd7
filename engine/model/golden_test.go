package model

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/goldentest"
)

// golden compares v, as indented JSON, with testdata/name (goldentest rewrites it).
func golden(t *testing.T, name string, v any) {
	t.Helper()
	goldentest.JSON(t, filepath.Join("testdata", name), v)
}

// collect returns an onChunk that appends to *chunks.
func collect(chunks *[]engine.MessageChunk) func(engine.MessageChunk) error {
	return func(c engine.MessageChunk) error {
		*chunks = append(*chunks, c)
		return nil
	}
}

// checkAIMessage checks the shape every model's answer must have.
func checkAIMessage(t *testing.T, m engine.Message) {
	t.Helper()
	if m.Type != engine.MessageAI {
		t.Errorf("type = %q, want ai", m.Type)
	}
	if m.ID == "" {
		t.Error("message has no id")
	}
	if m.AdditionalKwargs == nil || m.ResponseMetadata == nil {
		t.Error("message has nil maps")
	}
	if m.ToolCalls == nil || m.InvalidToolCalls == nil {
		t.Error("message has nil tool call slices")
	}
	if _, ok := m.Content.(string); !ok {
		t.Errorf("content is %T, want string", m.Content)
	}
}

// checkChunks checks that chunks make up m: one id, the content, and the tool call arguments.
func checkChunks(t *testing.T, chunks []engine.MessageChunk, m engine.Message) {
	t.Helper()
	var text string
	args := map[int]string{}
	for i, c := range chunks {
		if c.ID != m.ID {
			t.Errorf("chunk %d id = %q, want the message's %q", i, c.ID, m.ID)
		}
		if c.Type != "AIMessageChunk" {
			t.Errorf("chunk %d type = %q", i, c.Type)
		}
		if c.AdditionalKwargs == nil || c.ResponseMetadata == nil || c.ToolCalls == nil ||
			c.InvalidToolCalls == nil || c.ToolCallChunks == nil {
			t.Errorf("chunk %d has nil collections", i)
		}
		text += c.Content
		for _, tc := range c.ToolCallChunks {
			args[tc.Index] += tc.Args
		}
	}
	if text != m.Text() {
		t.Errorf("chunks spell %q, message says %q", text, m.Text())
	}
	for i, tc := range m.ToolCalls {
		var streamed map[string]any
		if err := json.Unmarshal([]byte(args[i]), &streamed); err != nil {
			t.Errorf("streamed args of call %d %q: %v", i, args[i], err)
			continue
		}
		a, _ := json.Marshal(streamed)
		b, _ := json.Marshal(tc.Args)
		if !bytes.Equal(a, b) {
			t.Errorf("call %d: streamed args %s, message args %s", i, a, b)
		}
	}
}
