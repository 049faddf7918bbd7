package model

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/jetgraph/jetgraph/engine"
)

func conversation(texts ...string) Request {
	var req Request
	for _, s := range texts {
		req.Messages = append(req.Messages, engine.NewMessage(engine.MessageHuman, s))
	}
	return req
}

func TestFakeStream(t *testing.T) {
	tests := []struct {
		name       string
		answer     Answer
		req        Request
		wantChunks int
		wantFinish string
		wantUsage  engine.UsageMetadata
	}{
		{
			name: "text", answer: Text("begin"), req: conversation("hi there"), // 8 chars in, 5 out
			wantChunks: 5, wantFinish: FinishStop,
			wantUsage: engine.UsageMetadata{InputTokens: 2, OutputTokens: 2, TotalTokens: 4},
		},
		{
			name: "multibyte text", answer: Text("héllo, wörld ✓"), req: conversation("é"),
			wantChunks: 14, wantFinish: FinishStop,
			wantUsage: engine.UsageMetadata{InputTokens: 1, OutputTokens: 4, TotalTokens: 5},
		},
		{
			name: "empty", answer: Text(""), req: conversation(),
			wantChunks: 1, wantFinish: FinishStop,
			wantUsage: engine.UsageMetadata{},
		},
		{
			// "search" (6) + `{"q":"go"}` (10) = 16 chars out.
			name: "tool call", answer: Call("search", map[string]any{"q": "go"}), req: conversation("find go"),
			wantChunks: 1, wantFinish: FinishToolCalls,
			wantUsage: engine.UsageMetadata{InputTokens: 2, OutputTokens: 4, TotalTokens: 6},
		},
		{
			// 2 + "a" + "{}" + "b" + `{"n":1}` = 13 chars out.
			name: "text and two calls", answer: Text("ok").Call("a", nil).Call("b", map[string]any{"n": 1}),
			req:        conversation("do both"),
			wantChunks: 4, wantFinish: FinishToolCalls,
			wantUsage: engine.UsageMetadata{InputTokens: 2, OutputTokens: 4, TotalTokens: 6},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var chunks []engine.MessageChunk
			m, err := NewFake(tt.answer).Stream(context.Background(), tt.req, collect(&chunks))
			if err != nil {
				t.Fatal(err)
			}
			checkAIMessage(t, m)
			checkChunks(t, chunks, m)
			if len(chunks) != tt.wantChunks {
				t.Fatalf("%d chunks, want %d", len(chunks), tt.wantChunks)
			}
			for i, c := range chunks[:utf8.RuneCountInString(tt.answer.Text)] {
				if utf8.RuneCountInString(c.Content) != 1 {
					t.Errorf("chunk %d content %q is not one character", i, c.Content)
				}
			}
			if m.Text() != tt.answer.Text {
				t.Errorf("content %q, want %q", m.Text(), tt.answer.Text)
			}
			if len(m.ToolCalls) != len(tt.answer.ToolCalls) {
				t.Fatalf("%d tool calls, want %d", len(m.ToolCalls), len(tt.answer.ToolCalls))
			}
			for i, tc := range m.ToolCalls {
				if tc.Name != tt.answer.ToolCalls[i].Name || tc.Type != "tool_call" || tc.Args == nil ||
					!strings.HasPrefix(tc.ID, "call_") {
					t.Errorf("tool call %d = %+v", i, tc)
				}
			}
			if m.UsageMetadata == nil || !reflect.DeepEqual(*m.UsageMetadata, tt.wantUsage) {
				t.Errorf("usage = %+v, want %+v", m.UsageMetadata, tt.wantUsage)
			}
			if got := m.ResponseMetadata["finish_reason"]; got != tt.wantFinish {
				t.Errorf("finish_reason = %v, want %s", got, tt.wantFinish)
			}
			last := chunks[len(chunks)-1]
			if last.UsageMetadata == nil || !reflect.DeepEqual(*last.UsageMetadata, tt.wantUsage) || last.ResponseMetadata["finish_reason"] != tt.wantFinish {
				t.Errorf("last chunk carries usage %+v and metadata %v", last.UsageMetadata, last.ResponseMetadata)
			}
		})
	}
}

func TestFakeCycles(t *testing.T) {
	f := NewFake(Text("begin"), Text("end"))
	req := conversation("go")
	ids := map[string]bool{}
	for i, want := range []string{"begin", "end", "begin", "end", "begin"} {
		m, err := f.Stream(context.Background(), req, nil)
		if err != nil {
			t.Fatal(err)
		}
		if m.Text() != want {
			t.Errorf("call %d answered %q, want %q", i, m.Text(), want)
		}
		if ids[m.ID] {
			t.Errorf("call %d reused id %s", i, m.ID)
		}
		ids[m.ID] = true
	}
	if f.Calls() != 5 {
		t.Errorf("Calls() = %d, want 5", f.Calls())
	}
}

func TestFakeDeterministic(t *testing.T) {
	script := []Answer{Text("hello"), Call("lookup", map[string]any{"k": "v"})}
	run := func(f *Fake, req Request) (out []any) {
		for range 3 {
			var chunks []engine.MessageChunk
			m, err := f.Stream(context.Background(), req, collect(&chunks))
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, m, chunks)
		}
		return out
	}
	req := conversation("hi")
	a := run(NewFake(script...), req)
	if b := run(NewFake(script...), req); !reflect.DeepEqual(a, b) {
		t.Error("two Fakes with the same script answered differently")
	}
	if b := run(NewFake(script...).WithSeed("other"), req); reflect.DeepEqual(a, b) {
		t.Error("a different seed gave the same ids")
	}
	if b := run(NewFake(script...), conversation("hi", "again")); reflect.DeepEqual(a, b) {
		t.Error("a different conversation gave the same ids")
	}
	// Message ids of the conversation do not matter.
	withIDs := conversation("hi")
	withIDs.Messages[0].ID = "random-id"
	if b := run(NewFake(script...), withIDs); !reflect.DeepEqual(a, b) {
		t.Error("a conversation's message ids changed the answer")
	}
}

func TestFakeGolden(t *testing.T) {
	f := NewFake(Text("Hi!"), Text("Let me look.").Call("search", map[string]any{"query": "jetgraph", "limit": 3}))
	req := Request{Messages: []engine.Message{
		engine.NewMessage(engine.MessageSystem, "You are terse."),
		engine.NewMessage(engine.MessageHuman, "Find jetgraph"),
	}}
	type call struct {
		Chunks  []engine.MessageChunk `json:"chunks"`
		Message engine.Message        `json:"message"`
	}
	var calls []call
	for range 2 {
		var c call
		m, err := f.Stream(context.Background(), req, collect(&c.Chunks))
		if err != nil {
			t.Fatal(err)
		}
		c.Message = m
		calls = append(calls, c)
		req.Messages = append(req.Messages, m)
	}
	golden(t, "fake_stream.json", calls)
}

func TestFakeEchoesWithoutScript(t *testing.T) {
	req := Request{Messages: []engine.Message{
		engine.NewMessage(engine.MessageHuman, "first"),
		engine.NewMessage(engine.MessageHuman, "second"),
		engine.NewMessage(engine.MessageSystem, "note"),
	}}
	m, err := NewFake().Stream(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m.Text() != "second" {
		t.Errorf("echo = %q, want second", m.Text())
	}
}

func TestFakeScriptIsNotShared(t *testing.T) {
	f := NewFake(Call("t", map[string]any{"x": 1}))
	m, _ := f.Stream(context.Background(), Request{}, nil)
	m.ToolCalls[0].Args["x"] = 2
	m, _ = f.Stream(context.Background(), Request{}, nil)
	if m.ToolCalls[0].Args["x"] != float64(1) {
		t.Errorf("changing an answer changed the script: %v", m.ToolCalls[0].Args)
	}
}

func TestFakeCancellation(t *testing.T) {
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name       string
		fake       *Fake
		ctx        func() (context.Context, context.CancelFunc)
		cancelAt   int // cancel in onChunk at this chunk, when > 0
		wantChunks int // at most
		wantErr    error
	}{
		{
			name: "before the call", fake: NewFake(Text("abcdef")),
			ctx:        func() (context.Context, context.CancelFunc) { return canceled, func() {} },
			wantChunks: 0, wantErr: context.Canceled,
		},
		{
			name: "between chunks", fake: NewFake(Text("abcdef")), cancelAt: 3,
			ctx:        func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) },
			wantChunks: 3, wantErr: context.Canceled,
		},
		{
			name: "during a delay", fake: NewFake(Text("abcdefghij")).WithDelay(40 * time.Millisecond),
			ctx: func() (context.Context, context.CancelFunc) {
				return context.WithTimeout(context.Background(), 100*time.Millisecond)
			},
			wantChunks: 3, wantErr: context.DeadlineExceeded,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := tt.ctx()
			defer cancel()
			var chunks []engine.MessageChunk
			_, err := tt.fake.Stream(ctx, conversation("x"), func(c engine.MessageChunk) error {
				chunks = append(chunks, c)
				if len(chunks) == tt.cancelAt {
					cancel()
				}
				return nil
			})
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if len(chunks) > tt.wantChunks {
				t.Errorf("%d chunks after cancellation, want at most %d", len(chunks), tt.wantChunks)
			}
		})
	}
}

func TestFakeOnChunkError(t *testing.T) {
	stop := errors.New("stop")
	n := 0
	_, err := NewFake(Text("abc")).Stream(context.Background(), Request{}, func(engine.MessageChunk) error {
		n++
		return stop
	})
	if err != stop || n != 1 {
		t.Errorf("err = %v after %d chunks, want the callback's error after 1", err, n)
	}
}

func TestFakeConcurrent(t *testing.T) {
	f := NewFake(Text("one"), Text("two"), Call("three", nil))
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10 {
				var chunks []engine.MessageChunk
				m, err := f.Stream(context.Background(), conversation("hi"), collect(&chunks))
				if err != nil {
					t.Error(err)
					return
				}
				if len(chunks) == 0 || chunks[0].ID != m.ID {
					t.Error("chunks do not share the message id")
				}
			}
		}()
	}
	wg.Wait()
	if f.Calls() != 80 {
		t.Errorf("Calls() = %d, want 80", f.Calls())
	}
	if got := f.WithName("scripted").Info(); got != (Info{Provider: "fake", Model: "scripted"}) {
		t.Errorf("Info() = %+v", got)
	}
}
