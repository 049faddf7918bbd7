package graphs

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/engine/model"
)

// DefaultSystemPrompt is the react template's system prompt unless its settings give one.
const DefaultSystemPrompt = "You are a helpful assistant. Use the tools when they help, then answer briefly."

// DefaultMaxIterations is how many model calls a react agent makes for one human message unless
// its settings say otherwise.
const DefaultMaxIterations = 10

const reactDescription = "A tool-calling agent (template react): model and tools in a loop, with a system prompt."

// ReactSettings configure a react agent.
type ReactSettings struct {
	// Name is the graph's name (default "react").
	Name string
	// SystemPrompt is sent first on every model call (default DefaultSystemPrompt). A run's
	// configurable.system_prompt replaces it.
	SystemPrompt string
	// Model answers; nil means the offline fake model (see NewReact).
	Model model.ChatModel
	// Tools the model may call; nil means every built-in tool, an empty non-nil slice none.
	Tools []Tool
	// MaxIterations bounds the model calls for one human message (default
	// DefaultMaxIterations); when reached, the agent stops with an AI message saying so.
	MaxIterations int
}

// NewReact returns a react agent: state {messages}; node "agent" calls the model with the system
// prompt, the messages and the tools, streaming its chunks; when the answer calls tools, node
// "tools" runs each call in order and answers it with a tool message (tool_call_id set; status
// "error" and the error text when the tool fails or does not exist), then the agent runs again.
//
// The offline fake model (Model nil) is deterministic. On a human message of the form
// "<tool>: <input>" naming one of the agent's tools (e.g. "calculator: 2 + 3 * 4") it calls that
// tool with <input> as the tool's first required parameter (or its only one). After tool
// results it answers with them ("calculator: 14"). Otherwise it answers with what it heard and
// how to make it call a tool. Its message ids derive from the thread and the conversation.
func NewReact(s ReactSettings) (*graph.Graph, error) {
	if s.Name == "" {
		s.Name = "react"
	}
	if s.SystemPrompt == "" {
		s.SystemPrompt = DefaultSystemPrompt
	}
	if s.MaxIterations == 0 {
		s.MaxIterations = DefaultMaxIterations
	}
	if s.MaxIterations < 0 {
		return nil, fmt.Errorf("react: max iterations must be positive, not %d", s.MaxIterations)
	}
	if s.Tools == nil {
		s.Tools = BuiltinTools()
	}
	r := &react{s: s, byName: map[string]Tool{}}
	for _, t := range s.Tools {
		if t.Name == "" || t.Run == nil {
			return nil, fmt.Errorf("react: a tool needs a name and a function")
		}
		if _, dup := r.byName[t.Name]; dup {
			return nil, fmt.Errorf("react: tool %q given twice", t.Name)
		}
		r.byName[t.Name] = t
		r.specs = append(r.specs, model.Tool{Name: t.Name, Description: t.Description, Parameters: t.Parameters})
	}
	b := graph.NewBuilder(s.Name).Channel("messages", graph.Messages()).
		ConfigSchema(objectSchema(map[string]any{"system_prompt": map[string]any{
			"type": "string", "description": "Replaces the agent's system prompt for this run."}}))
	b.Node("agent", r.agent).Node("tools", r.tools)
	b.Edge(graph.Start, "agent").Edge("tools", "agent")
	b.Branch("agent", func(ctx context.Context, st graph.State, rt *graph.Runtime) (any, error) {
		if m := last(graph.MessagesOf(st, "messages")); m.Type == engine.MessageAI && len(m.ToolCalls) > 0 {
			return "tools", nil
		}
		return graph.End, nil
	}, "tools", graph.End)
	return b.Compile(graph.CompileOptions{})
}

type react struct {
	s      ReactSettings
	byName map[string]Tool
	specs  []model.Tool
}

// iterations counts the AI messages since the last human message: the model calls made for it.
func iterations(msgs []engine.Message) int {
	n := 0
	for i := len(msgs) - 1; i >= 0 && msgs[i].Type != engine.MessageHuman; i-- {
		if msgs[i].Type == engine.MessageAI {
			n++
		}
	}
	return n
}

func (r *react) agent(ctx context.Context, in any, rt *graph.Runtime) (any, error) {
	msgs := graph.MessagesOf(stateOf(in), "messages")
	if iterations(msgs) >= r.s.MaxIterations {
		m := aiMessage(stableID(rt, r.s.Name, "limit", len(msgs)), fmt.Sprintf(
			"Sorry, I stopped after %d model calls without a final answer (max_iterations).", r.s.MaxIterations))
		return map[string]any{"messages": []any{m}}, nil
	}
	prompt := r.s.SystemPrompt
	if p := rt.Config.String("system_prompt"); p != "" {
		prompt = p
	}
	req := model.Request{Messages: append([]engine.Message{engine.NewMessage(engine.MessageSystem, prompt)}, msgs...), Tools: r.specs}
	m := r.s.Model
	if m == nil {
		m = fakeReactModel{seed: fakeSeed(rt, r.s.Name)}
	}
	msg, err := callModel(ctx, rt, m, req)
	if err != nil {
		return nil, err
	}
	// An id already in the thread would replace that message (add_messages): some compatible
	// servers reuse completion ids.
	if msg.ID == "" || slices.ContainsFunc(msgs, func(m engine.Message) bool { return m.ID == msg.ID }) {
		msg.ID = stableID(rt, r.s.Name, "ai", len(msgs))
	}
	return map[string]any{"messages": []any{msg}}, nil
}

func (r *react) tools(ctx context.Context, in any, rt *graph.Runtime) (any, error) {
	ai := last(graph.MessagesOf(stateOf(in), "messages"))
	out := make([]any, 0, len(ai.ToolCalls))
	for _, call := range ai.ToolCalls {
		text, err := callTool(ctx, rt, call, func() (string, error) { return r.call(ctx, call) })
		tm := toolMessage(stableID(rt, r.s.Name, "tool", ai.ID, call.ID), call.ID, text)
		name := call.Name
		tm.Name = &name
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			tm.Content, tm.Status = "Error: "+err.Error(), "error"
		}
		out = append(out, tm)
	}
	return map[string]any{"messages": out}, nil
}

// call runs one tool call, turning a panic into an error.
func (r *react) call(ctx context.Context, call engine.ToolCall) (text string, err error) {
	t, ok := r.byName[call.Name]
	if !ok {
		return "", fmt.Errorf("unknown tool %q (available: %s)", call.Name, strings.Join(r.names(), ", "))
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("tool %s panicked: %v", call.Name, p)
		}
	}()
	args := call.Args
	if args == nil {
		args = map[string]any{}
	}
	return t.Run(ctx, args)
}

func (r *react) names() []string {
	out := make([]string, len(r.s.Tools))
	for i, t := range r.s.Tools {
		out[i] = t.Name
	}
	return out
}

// fakeReactModel is the react template's offline model: the rules of NewReact, streamed by a
// model.Fake seeded for the thread.
type fakeReactModel struct{ seed string }

func (f fakeReactModel) Info() model.Info { return model.Info{Provider: "fake", Model: "react-fake"} }

func (f fakeReactModel) Stream(ctx context.Context, req model.Request, onChunk func(engine.MessageChunk) error) (engine.Message, error) {
	return model.NewFake(fakeReactAnswer(req)).WithName("react-fake").WithSeed(f.seed).Stream(ctx, req, onChunk)
}

// fakeReactAnswer applies the fake model's rules to a request.
func fakeReactAnswer(req model.Request) model.Answer {
	msgs := req.Messages
	var results []string
	for i := len(msgs) - 1; i >= 0 && msgs[i].Type == engine.MessageTool; i-- {
		name := "tool"
		if msgs[i].Name != nil {
			name = *msgs[i].Name
		}
		results = append([]string{name + ": " + msgs[i].Text()}, results...)
	}
	if len(results) > 0 {
		return model.Text(strings.Join(results, "\n"))
	}
	text := strings.TrimSpace(lastHuman(msgs))
	var names []string
	for _, t := range req.Tools {
		names = append(names, t.Name)
		prefix, rest, ok := strings.Cut(text, ":")
		if !ok || !strings.EqualFold(strings.TrimSpace(prefix), t.Name) {
			continue
		}
		args := map[string]any{}
		if p := mainParam(t.Parameters); p != "" && strings.TrimSpace(rest) != "" {
			args[p] = strings.TrimSpace(rest)
		}
		return model.Call(t.Name, args)
	}
	if len(names) == 0 {
		return model.Text(text)
	}
	return model.Text(fmt.Sprintf("You said %q. I am an offline fake model: start a message with a tool's name and a colon to call it, e.g. \"%s: ...\" (tools: %s).",
		text, names[0], strings.Join(names, ", ")))
}

func lastHuman(msgs []engine.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Type == engine.MessageHuman {
			return msgs[i].Text()
		}
	}
	return ""
}

// mainParam is the parameter the fake model fills: the first required one, or the only one.
func mainParam(schema map[string]any) string {
	if req, ok := schema["required"].([]any); ok && len(req) > 0 {
		s, _ := req[0].(string)
		return s
	}
	if props, ok := schema["properties"].(map[string]any); ok && len(props) == 1 {
		for k := range props {
			return k
		}
	}
	return ""
}
