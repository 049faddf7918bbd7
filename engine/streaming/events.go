package streaming

import (
	"encoding/json"
	"maps"
	"sort"
	"strings"
)

// chunkAcc accumulates the streamed chunks of one AI message, as LangChain adds
// AIMessageChunks: content concatenated, maps merged, tool-call chunks joined by index.
type chunkAcc struct {
	text       strings.Builder
	blocks     []any // content given as a list of blocks instead of text
	additional map[string]any
	response   map[string]any
	name       any
	id         string
	usage      any
	calls      []*callAcc
	node       string // namespace|node:task of the task that streams it (events mode)
	model      string // the chat model's name (events mode)
}

// callAcc is a tool call being streamed.
type callAcc struct {
	index    int
	name, id string
	args     strings.Builder
	parsed   map[string]any // a call streamed whole (tool_calls without chunks)
}

// add folds chunk c into the message.
func (a *chunkAcc) add(c map[string]any) {
	switch v := c["content"].(type) {
	case string:
		a.text.WriteString(v)
	case []any:
		a.blocks = append(a.blocks, v...)
	}
	a.additional = merge(a.additional, c["additional_kwargs"])
	a.response = merge(a.response, c["response_metadata"])
	if a.name == nil {
		a.name = c["name"]
	}
	if id, _ := c["id"].(string); id != "" {
		a.id = id
	}
	if u := c["usage_metadata"]; u != nil {
		a.usage = u
	}
	chunks, _ := c["tool_call_chunks"].([]any)
	for _, x := range chunks {
		tc, _ := x.(map[string]any)
		idx, _ := tc["index"].(float64)
		call := a.call(int(idx))
		if n, _ := tc["name"].(string); n != "" && call.name == "" {
			call.name = n
		}
		if id, _ := tc["id"].(string); id != "" && call.id == "" {
			call.id = id
		}
		args, _ := tc["args"].(string)
		call.args.WriteString(args)
	}
	if len(chunks) == 0 {
		calls, _ := c["tool_calls"].([]any)
		for _, x := range calls {
			tc, _ := x.(map[string]any)
			call := &callAcc{index: len(a.calls)}
			call.name, _ = tc["name"].(string)
			call.id, _ = tc["id"].(string)
			call.parsed, _ = tc["args"].(map[string]any)
			a.calls = append(a.calls, call)
		}
	}
}

func (a *chunkAcc) call(index int) *callAcc {
	for _, c := range a.calls {
		if c.index == index && c.parsed == nil {
			return c
		}
	}
	c := &callAcc{index: index}
	a.calls = append(a.calls, c)
	return c
}

func merge(dst map[string]any, src any) map[string]any {
	m, _ := src.(map[string]any)
	if dst == nil {
		dst = map[string]any{}
	}
	maps.Copy(dst, m)
	return dst
}

// message is the AI message the chunks so far make. Arguments not yet complete JSON show as {}.
func (a *chunkAcc) message() map[string]any {
	var content any = a.text.String()
	if len(a.blocks) > 0 {
		content = a.blocks
	}
	calls := []any{}
	for _, c := range a.calls {
		args := c.parsed
		if args == nil {
			_ = json.Unmarshal([]byte(c.args.String()), &args)
		}
		if args == nil {
			args = map[string]any{}
		}
		calls = append(calls, map[string]any{"name": c.name, "args": args, "id": c.id, "type": "tool_call"})
	}
	m := map[string]any{"content": content, "additional_kwargs": merge(nil, a.additional),
		"response_metadata": merge(nil, a.response), "type": "ai", "name": a.name, "id": a.id,
		"tool_calls": calls, "invalid_tool_calls": []any{}}
	if a.usage != nil {
		m["usage_metadata"] = a.usage
	}
	return m
}

// eventsState derives the events mode (LangChain's astream_events v2) from a run's messages:
// on_chain_start/end for the graph and each task, on_chat_model_start/stream/end for each
// streamed message, on_tool_start/end for each tool a task runs (its trace/tool_start and
// trace/tool_end events). After a failure, the failed task and the graph end with the error
// event, not with an on_chain_end.
type eventsState struct {
	models map[string]*chunkAcc // message id -> streamed message, until its task ends
	tools  map[string]toolCall  // trace id -> a tool call that started
	failed bool                 // the run failed: its graph does not end with on_chain_end
}

// toolCall is what the events mode remembers of a tool call between its start and its end.
type toolCall struct {
	name, callID string
	input        json.RawMessage
	md           map[string]any
	parents      []string
}

func newEventsState() *eventsState {
	return &eventsState{models: map[string]*chunkAcc{}, tools: map[string]toolCall{}}
}

// event is one frame of the events mode.
func (e *eventsState) event(s *Shaper, m Msg, kind, name, runID string, tags []string, md map[string]any, data map[string]any, parents []string) Frame {
	if tags == nil {
		tags = []string{}
	}
	if parents == nil {
		parents = []string{}
	}
	if md == nil {
		md = s.metadata("", "")
		for _, k := range []string{"langgraph_node", "langgraph_path"} {
			delete(md, k)
		}
	}
	return Frame{Event: "events", ID: m.ID(), Data: mustJSON(map[string]any{
		"event": kind, "name": name, "run_id": runID, "tags": tags, "metadata": md, "data": data, "parent_ids": parents})}
}

// graphName is the name of the run's root chain.
func (s *Shaper) graphName() string {
	if s.run.GraphID != "" {
		return s.run.GraphID
	}
	return "LangGraph"
}

// parents are the run ids above a task of namespace ns: the run's, then each enclosing task's.
func (s *Shaper) parents(ns string) []string {
	out := []string{s.runID}
	if ns == "" {
		return out
	}
	for _, part := range strings.Split(ns, "|") {
		if _, id, ok := strings.Cut(part, ":"); ok {
			out = append(out, id)
		}
	}
	return out
}

func (e *eventsState) start(s *Shaper, m Msg, out []Frame) []Frame {
	return append(out, e.event(s, m, "on_chain_start", s.graphName(), s.runID, nil, nil,
		map[string]any{"input": s.run.Input}, nil))
}

func (e *eventsState) end(s *Shaper, m Msg, out []Frame) []Frame {
	if e.failed {
		return out
	}
	var output any = json.RawMessage("null")
	if s.values != nil {
		output = s.values
	}
	return append(out, e.event(s, m, "on_chain_end", s.graphName(), s.runID, nil, nil,
		map[string]any{"output": output}, nil))
}

// task handles a task's start or result: the chain events of its node, and at its result the end
// of the models it streamed and, unless it failed, the end of its chain.
func (e *eventsState) task(s *Shaper, m Msg, ns string, start bool, out []Frame) []Frame {
	var t struct {
		ID     string          `json:"id"`
		Name   string          `json:"name"`
		Input  json.RawMessage `json:"input"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if json.Unmarshal(m.Data, &t) != nil {
		return out
	}
	md := s.metadata(ns, t.Name)
	tags := []string{"graph:step:" + itoa(s.steps[ns]+1)}
	parents := s.parents(ns)
	if start {
		return append(out, e.event(s, m, "on_chain_start", t.Name, t.ID, tags, md, map[string]any{"input": t.Input}, parents))
	}
	key := strings.TrimPrefix(ns+"|"+t.Name+":"+t.ID, "|")
	var ids []string
	for id, acc := range e.models {
		if acc.node == key {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	for _, id := range ids {
		acc := e.models[id]
		delete(e.models, id)
		out = append(out, e.event(s, m, "on_chat_model_end", acc.model, id, nil, md,
			map[string]any{"output": acc.message()}, append(parents, t.ID)))
	}
	if len(t.Error) > 0 && string(t.Error) != "null" {
		return out // a failed task ends with the run's error event
	}
	return append(out, e.event(s, m, "on_chain_end", t.Name, t.ID, tags, md,
		map[string]any{"input": s.tasks[ns+"|"+t.Name].input, "output": t.Result}, parents))
}

// tool handles the trace event of a tool call's start or end (graphs.TraceToolStart, TraceToolEnd,
// whose namespace ends with the task's "node:task_id"): on_tool_start with the call's arguments,
// on_tool_end with the tool message it gave. The call's trace id is the events' run id.
func (e *eventsState) tool(s *Shaper, m Msg, start bool, out []Frame) []Frame {
	var d struct {
		ID         string          `json:"id"`
		Name       string          `json:"name"`
		ToolCallID string          `json:"tool_call_id"`
		Input      json.RawMessage `json:"input"`
		Output     string          `json:"output"`
		Error      *string         `json:"error"`
	}
	if json.Unmarshal(m.Data, &d) != nil || d.ID == "" || len(m.NS) == 0 {
		return out
	}
	if start {
		node, taskID, _ := strings.Cut(m.NS[len(m.NS)-1], ":")
		ns := strings.Join(m.NS[:len(m.NS)-1], "|")
		input := d.Input
		if len(input) == 0 || string(input) == "null" {
			input = json.RawMessage("{}")
		}
		c := toolCall{name: d.Name, callID: d.ToolCallID, input: input, md: s.metadata(ns, node),
			parents: append(s.parents(ns), taskID)}
		e.tools[d.ID] = c
		return append(out, e.event(s, m, "on_tool_start", c.name, d.ID, nil, c.md, map[string]any{"input": c.input}, c.parents))
	}
	c, ok := e.tools[d.ID]
	if !ok {
		return out
	}
	delete(e.tools, d.ID)
	content, status := d.Output, "success"
	if d.Error != nil {
		content, status = *d.Error, "error"
	}
	msg := map[string]any{"content": content, "additional_kwargs": map[string]any{}, "response_metadata": map[string]any{},
		"type": "tool", "name": c.name, "id": nil, "tool_call_id": c.callID, "artifact": nil, "status": status}
	return append(out, e.event(s, m, "on_tool_end", c.name, d.ID, nil, c.md, map[string]any{"input": c.input, "output": msg}, c.parents))
}

// chunk handles a streamed model chunk: the model's start on its first chunk, then a stream
// event per chunk.
func (e *eventsState) chunk(s *Shaper, m Msg, out []Frame) []Frame {
	var tuple []json.RawMessage
	if json.Unmarshal(m.Data, &tuple) != nil || len(tuple) < 2 {
		return out
	}
	var c map[string]any
	var md map[string]any
	if json.Unmarshal(tuple[0], &c) != nil || json.Unmarshal(tuple[1], &md) != nil {
		return out
	}
	id, _ := c["id"].(string)
	node, _ := md["langgraph_checkpoint_ns"].(string)
	ns := strings.Join(m.NS, "|")
	parents := s.parents(ns)
	if _, taskID, ok := strings.Cut(node[strings.LastIndexByte(node, '|')+1:], ":"); ok {
		parents = append(parents, taskID)
	}
	acc := e.models[id]
	if acc == nil {
		acc = &chunkAcc{node: node, model: "ChatModel"}
		if n, _ := md["ls_model_name"].(string); n != "" {
			acc.model = n
		}
		e.models[id] = acc
		out = append(out, e.event(s, m, "on_chat_model_start", acc.model, id, nil, md,
			map[string]any{"input": map[string]any{"messages": []any{[]any{}}}}, parents))
	}
	acc.add(c)
	return append(out, e.event(s, m, "on_chat_model_stream", acc.model, id, nil, md,
		map[string]any{"chunk": tuple[0]}, parents))
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
