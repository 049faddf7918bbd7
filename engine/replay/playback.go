package replay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graphs"
	"github.com/jetgraph/jetgraph/engine/model"
)

// Divergence kinds found while re-executing, before a step is compared.
const (
	KindModelInput = "model_input" // a model call sent other messages or tools than recorded
	KindNoModel    = "model_call"  // a model call with no recorded answer
	KindToolInput  = "tool_input"  // a tool call with another name or arguments than recorded
	KindNoTool     = "tool_call"   // a tool call with no recorded result
)

// errDiverged stops a re-executed run at its first divergence.
var errDiverged = errors.New("replay: diverged from the recording")

// recording answers one run's model and tool calls from its recorded steps: the i-th AI message
// a node wrote at a step is the answer of its i-th model call there, the i-th tool message the
// result of its i-th tool call.
type recording struct {
	runID string
	ai    map[graphs.CallKey]engine.Message
	tools map[graphs.CallKey]engine.Message
	calls map[string]engine.ToolCall // the recorded tool calls, by id

	mu     sync.Mutex
	next   map[string]int // calls made so far, by kind and key without index
	diverg *Divergence
}

var _ graphs.Playback = (*recording)(nil)

func newRecording(run *Run) *recording {
	r := &recording{runID: run.RunID, ai: map[graphs.CallKey]engine.Message{}, tools: map[graphs.CallKey]engine.Message{},
		calls: map[string]engine.ToolCall{}, next: map[string]int{}}
	for _, s := range run.Steps {
		path := stripTaskIDs(s.NS)
		for _, node := range s.Nodes {
			var nai, ntool int
			for _, m := range nodeMessages(s.Writes[node]) {
				switch m.Type {
				case engine.MessageAI:
					r.ai[graphs.CallKey{Path: path, Node: node, Step: s.Step, Index: nai}] = m
					nai++
					for _, c := range m.ToolCalls {
						r.calls[c.ID] = c
					}
				case engine.MessageTool:
					r.tools[graphs.CallKey{Path: path, Node: node, Step: s.Step, Index: ntool}] = m
					ntool++
				}
			}
		}
	}
	return r
}

// stripTaskIDs is a checkpoint namespace ("node:task_id|...") as node names ("node|...").
func stripTaskIDs(ns string) string {
	if ns == "" {
		return ""
	}
	parts := strings.Split(ns, "|")
	for i, p := range parts {
		parts[i], _, _ = strings.Cut(p, ":")
	}
	return strings.Join(parts, "|")
}

// nodeMessages are the messages in a node's writes (decoded JSON): {"messages": [...]} or one.
func nodeMessages(w any) []engine.Message {
	obj, ok := w.(map[string]any)
	if !ok || obj["messages"] == nil {
		return nil
	}
	raw, _ := json.Marshal(obj["messages"])
	return parseMessages(raw)
}

// parseMessages reads a messages write: a list of messages or one.
func parseMessages(raw json.RawMessage) []engine.Message {
	var msgs []engine.Message
	if json.Unmarshal(raw, &msgs) != nil {
		var one engine.Message
		if json.Unmarshal(raw, &one) != nil {
			return nil
		}
		msgs = []engine.Message{one}
	}
	return msgs
}

// take counts a call of kind at key and returns the key with its index.
func (r *recording) take(kind string, key graphs.CallKey) graphs.CallKey {
	r.mu.Lock()
	defer r.mu.Unlock()
	id := fmt.Sprintf("%s|%s|%s|%d", kind, key.Path, key.Node, key.Step)
	key.Index = r.next[id]
	r.next[id]++
	return key
}

// diverge keeps the first divergence and returns the error that stops the run.
func (r *recording) diverge(d *Divergence) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.diverg == nil {
		d.RunID = r.runID
		r.diverg = d
	}
	return fmt.Errorf("%w: %s", errDiverged, d.Kind)
}

func (r *recording) divergence() *Divergence {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.diverg
}

// Model answers with the recorded AI message; a request that differs from the recorded one's
// digest (graphs.InputDigestKey) is a divergence.
func (r *recording) Model(_ context.Context, key graphs.CallKey, req model.Request) (engine.Message, error) {
	key = r.take("model", key)
	m, ok := r.ai[key]
	if !ok {
		return engine.Message{}, r.diverge(&Divergence{Step: key.Step, Kind: KindNoModel, Node: key.Node,
			Recorded: nil, Replayed: map[string]any{"call": key, "messages": req.Messages}})
	}
	if want, _ := m.ResponseMetadata[graphs.InputDigestKey].(string); want != "" {
		if got := graphs.InputDigest(req); got != want {
			return engine.Message{}, r.diverge(&Divergence{Step: key.Step, Kind: KindModelInput, Node: key.Node,
				Recorded: map[string]any{"call": key, graphs.InputDigestKey: want},
				Replayed: map[string]any{graphs.InputDigestKey: got, "messages": req.Messages, "tools": toolNames(req.Tools)}})
		}
	}
	return m, nil
}

// Tool answers with the recorded tool message's content (a recorded failure as an error); a call
// of another tool or with other arguments than recorded is a divergence.
func (r *recording) Tool(_ context.Context, key graphs.CallKey, call engine.ToolCall) (string, error) {
	key = r.take("tool", key)
	m, ok := r.tools[key]
	if !ok {
		return "", r.diverge(&Divergence{Step: key.Step, Kind: KindNoTool, Node: key.Node, Recorded: nil,
			Replayed: map[string]any{"call": key, "name": call.Name, "args": call.Args}})
	}
	if rec, ok := r.calls[m.ToolCallID]; !ok || rec.Name != call.Name || !equalJSON(rec.Args, call.Args) {
		return "", r.diverge(&Divergence{Step: key.Step, Kind: KindToolInput, Node: key.Node,
			Recorded: map[string]any{"call": key, "name": rec.Name, "args": rec.Args},
			Replayed: map[string]any{"name": call.Name, "args": call.Args}})
	}
	text, _ := m.Content.(string)
	if m.Status == "error" { // the tools node writes a failure as "Error: <error>"
		return "", errors.New(strings.TrimPrefix(text, "Error: "))
	}
	return text, nil
}

func toolNames(tools []model.Tool) []string {
	out := make([]string, len(tools))
	for i, t := range tools {
		out[i] = t.Name
	}
	return out
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
