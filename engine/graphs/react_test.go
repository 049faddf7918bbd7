package graphs

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/engine/model"
)

func TestFakeReactRules(t *testing.T) {
	tools := []model.Tool{}
	for _, tl := range BuiltinTools() {
		tools = append(tools, model.Tool{Name: tl.Name, Parameters: tl.Parameters})
	}
	msg := func(typ, text string) engine.Message { return engine.NewMessage(typ, text) }
	toolMsg := func(name, text string) engine.Message {
		m := msg(engine.MessageTool, text)
		m.Name = &name
		return m
	}
	for _, c := range []struct {
		name string
		msgs []engine.Message
		want string // "call <tool> <args JSON>" or the text
	}{
		{"calculator", []engine.Message{msg("human", "calculator: 1+1")}, `call calculator {"expression":"1+1"}`},
		{"case and spaces", []engine.Message{msg("human", "  Word_Count :  a b c ")}, `call word_count {"text":"a b c"}`},
		{"optional argument left out", []engine.Message{msg("human", "current_time:")}, `call current_time {}`},
		{"optional argument", []engine.Message{msg("human", "current_time: UTC")}, `call current_time {"timezone":"UTC"}`},
		{"unknown tool", []engine.Message{msg("human", "weather: Paris")}, `You said "weather: Paris".`},
		{"tool results", []engine.Message{msg("human", "x"), msg("ai", ""), toolMsg("echo", "a"), toolMsg("calculator", "2")}, "echo: a\ncalculator: 2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := fakeReactAnswer(model.Request{Messages: c.msgs, Tools: tools})
			got := a.Text
			if len(a.ToolCalls) > 0 {
				raw, _ := json.Marshal(a.ToolCalls[0].Args)
				got = fmt.Sprintf("call %s %s", a.ToolCalls[0].Name, raw)
			}
			if !strings.HasPrefix(got, c.want) {
				t.Errorf("answer = %q, want %q", got, c.want)
			}
		})
	}
	if a := fakeReactAnswer(model.Request{Messages: []engine.Message{msg("human", "hi")}}); a.Text != "hi" {
		t.Errorf("without tools the fake echoes: %q", a.Text)
	}
}

// recordingModel answers from a script and keeps the requests.
type recordingModel struct {
	mu   sync.Mutex
	fake *model.Fake
	reqs []model.Request
}

func (m *recordingModel) Info() model.Info { return m.fake.Info() }

func (m *recordingModel) Stream(ctx context.Context, req model.Request, on func(engine.MessageChunk) error) (engine.Message, error) {
	m.mu.Lock()
	m.reqs = append(m.reqs, req)
	m.mu.Unlock()
	return m.fake.Stream(ctx, req, on)
}

func runReact(t *testing.T, s ReactSettings, cfg graph.Config, input string) graph.State {
	t.Helper()
	g, err := NewReact(s)
	if err != nil {
		t.Fatal(err)
	}
	res, err := g.Run(context.Background(), graph.RunOptions{ThreadID: "t", Input: human(input), Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	return res.Values
}

func TestReactToolErrorsAndPrompt(t *testing.T) {
	m := &recordingModel{fake: model.NewFake(
		model.Call("nope", nil).Call("calculator", map[string]any{"expression": "1/0"}).Call("echo", map[string]any{"text": "ok"}),
		model.Text("done"))}
	boom := Tool{Name: "boom", Run: func(context.Context, map[string]any) (string, error) { panic("kaboom") }}
	echo, _ := BuiltinTool("echo")
	calc, _ := BuiltinTool("calculator")
	v := runReact(t, ReactSettings{Model: m, Tools: []Tool{echo, calc, boom}, SystemPrompt: "be brief"},
		graph.Config{Configurable: map[string]any{"system_prompt": "be very brief"}}, "go")
	msgs := graph.MessagesOf(v, "messages")
	var got []string
	for _, msg := range msgs[2:5] {
		got = append(got, msg.Status+" "+msg.ToolCallID+" "+msg.Text())
	}
	want := []string{
		`error ` + msgs[1].ToolCalls[0].ID + ` Error: unknown tool "nope" (available: echo, calculator, boom)`,
		`error ` + msgs[1].ToolCalls[1].ID + ` Error: division by zero`,
		`success ` + msgs[1].ToolCalls[2].ID + ` ok`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") || msgs[5].Text() != "done" {
		t.Errorf("tool messages:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if sys := m.reqs[0].Messages[0]; sys.Type != engine.MessageSystem || sys.Text() != "be very brief" {
		t.Errorf("system message = %+v", sys)
	}
	if n := len(m.reqs[0].Tools); n != 3 {
		t.Errorf("tools offered = %d", n)
	}
	// A panicking tool is an error message, not a crash.
	m2 := &recordingModel{fake: model.NewFake(model.Call("boom", nil), model.Text("done"))}
	v = runReact(t, ReactSettings{Model: m2, Tools: []Tool{boom}}, graph.Config{}, "go")
	if tm := graph.MessagesOf(v, "messages")[2]; tm.Status != "error" || !strings.Contains(tm.Text(), "kaboom") {
		t.Errorf("panicking tool: %+v", tm)
	}
}

func TestReactMaxIterations(t *testing.T) {
	m := &recordingModel{fake: model.NewFake(model.Call("echo", map[string]any{"text": "again"}))}
	v := runReact(t, ReactSettings{Model: m, MaxIterations: 3}, graph.Config{}, "loop")
	msgs := graph.MessagesOf(v, "messages")
	if len(m.reqs) != 3 || !strings.Contains(last(msgs).Text(), "stopped after 3 model calls") {
		t.Errorf("%d model calls, last message %q", len(m.reqs), last(msgs).Text())
	}
	if _, err := NewReact(ReactSettings{MaxIterations: -1}); err == nil {
		t.Error("negative max iterations accepted")
	}
	echo, _ := BuiltinTool("echo")
	if _, err := NewReact(ReactSettings{Tools: []Tool{echo, echo}}); err == nil {
		t.Error("a tool given twice accepted")
	}
}

// fakeOpenAI is a chat completions server: it calls calculator first, then answers with the
// tool's result. It records the Authorization header and the requests.
func fakeOpenAI(t *testing.T) (*httptest.Server, *[]string) {
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			Model    string           `json:"model"`
			Messages []map[string]any `json:"messages"`
		}
		_ = json.Unmarshal(body, &req)
		mu.Lock()
		seen = append(seen, r.URL.Path+" "+r.Header.Get("Authorization")+" "+req.Model)
		mu.Unlock()
		lastMsg := req.Messages[len(req.Messages)-1]
		w.Header().Set("Content-Type", "text/event-stream")
		chunk := func(delta string, finish any) {
			fmt.Fprintf(w, "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":%q,\"choices\":[{\"index\":0,\"delta\":%s,\"finish_reason\":%s}]}\n\n",
				req.Model, delta, must(json.Marshal(finish)))
		}
		if lastMsg["role"] == "tool" {
			chunk(`{"role":"assistant","content":"The answer is `+lastMsg["content"].(string)+`"}`, nil)
			chunk(`{}`, "stop")
		} else {
			chunk(`{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"calculator","arguments":"{\"expression\":\"6*7\"}"}}]}`, nil)
			chunk(`{}`, "tool_calls")
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv, &seen
}

func must(raw []byte, err error) string {
	if err != nil {
		panic(err)
	}
	return string(raw)
}

// A graph.json react agent on an OpenAI-compatible server: the settings or the env, and the
// key's variable, reach the server, and the loop runs the tool.
func TestReactWithOpenAICompatibleServer(t *testing.T) {
	srv, seen := fakeOpenAI(t)
	env := map[string]string{"SRV_URL": srv.URL, "MY_KEY": "sk-test", "OPENAI_API_KEY": "sk-default"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	for _, c := range []struct{ name, conf, want string }{
		{"settings", `{"graphs": {"assistant": {"template": "react", "tools": ["calculator"],
			"model": {"base_url": "` + srv.URL + `/v1", "model": "m1", "api_key_env": "MY_KEY"}}}}`,
			"/v1/chat/completions Bearer sk-test m1"},
		{"env", `{"graphs": {"assistant": {"template": "react", "tools": ["calculator"], "model": {}}},
			"env": {"OPENAI_BASE_URL": "${SRV_URL}/v1", "JETGRAPH_MODEL": "m2"}}`,
			"/v1/chat/completions Bearer sk-default m2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			*seen = nil
			reg, err := ParseConfig("graph.json", []byte(c.conf), lookup)
			if err != nil {
				t.Fatal(err)
			}
			g, err := reg.Build("assistant", graph.Config{})
			if err != nil {
				t.Fatal(err)
			}
			res, err := g.Run(context.Background(), graph.RunOptions{ThreadID: "t", Input: human("what is 6 times 7?")})
			if err != nil {
				t.Fatal(err)
			}
			wantTexts(t, res.Values, "messages", "what is 6 times 7?", "", "42", "The answer is 42")
			if got := strings.Join(*seen, "\n"); got != c.want+"\n"+c.want {
				t.Errorf("requests:\n%s", got)
			}
		})
	}
}
