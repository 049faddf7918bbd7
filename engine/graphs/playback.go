package graphs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/engine/model"
)

// InputDigestKey is the response_metadata key of an AI message that holds the digest of the
// messages its model was sent (InputDigest), so that an offline replay, which answers from the
// recording, can tell a model that would now be sent something else (a changed system prompt,
// a changed history) without the log keeping every request whole.
const InputDigestKey = "input_digest"

// CallKey names one model or tool call of a run the same way every time the run executes: the
// node, its super-step, the subgraph path (node names) and the call's index among the node's
// calls of that kind in that step.
type CallKey struct {
	Path  string `json:"path,omitempty"`
	Node  string `json:"node"`
	Step  int    `json:"step"`
	Index int    `json:"index"`
}

// Playback answers a graph's model and tool calls from a recording instead of making them:
// `jetgraph replay --file` re-executes a run offline (no network, no keys) with it.
type Playback interface {
	// Model is the recorded answer to the model call at key, sent req.
	Model(ctx context.Context, key CallKey, req model.Request) (engine.Message, error)
	// Tool is the recorded result of the tool call at key (an error: the recorded failure).
	Tool(ctx context.Context, key CallKey, call engine.ToolCall) (string, error)
}

type playbackKey struct{}

// WithPlayback makes the model and tool calls of graphs run with ctx answered by p.
func WithPlayback(ctx context.Context, p Playback) context.Context {
	return context.WithValue(ctx, playbackKey{}, p)
}

func playbackOf(ctx context.Context) Playback {
	p, _ := ctx.Value(playbackKey{}).(Playback)
	return p
}

// taskKey is the key of rt's task, index left to the playback (which counts calls).
func taskKey(rt *graph.Runtime) CallKey {
	node, step, path := rt.Task()
	k := CallKey{Node: node, Step: step}
	for i, p := range path {
		if i > 0 {
			k.Path += "|"
		}
		k.Path += p
	}
	return k
}

// InputDigest is a digest of what a model call sends: the messages (types, names, contents, tool
// calls by name and arguments; message and tool call ids aside, which are random for input
// messages and for many models' calls), the tools offered and the tool choice.
func InputDigest(req model.Request) string {
	type call struct {
		Name string         `json:"name"`
		Args map[string]any `json:"args"`
	}
	type msg struct {
		Type    string  `json:"type"`
		Name    *string `json:"name,omitempty"`
		Content any     `json:"content"`
		Calls   []call  `json:"tool_calls,omitempty"`
	}
	in := struct {
		Messages   []msg        `json:"messages"`
		Tools      []model.Tool `json:"tools"`
		ToolChoice string       `json:"tool_choice"`
	}{Messages: make([]msg, len(req.Messages)), Tools: req.Tools, ToolChoice: req.ToolChoice}
	for i, m := range req.Messages {
		in.Messages[i] = msg{Type: m.Type, Name: m.Name, Content: m.Content}
		for _, c := range m.ToolCalls {
			in.Messages[i].Calls = append(in.Messages[i].Calls, call{Name: c.Name, Args: c.Args})
		}
	}
	raw, _ := json.Marshal(in)
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:12])
}
