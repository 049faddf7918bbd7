package model

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/jetgraph/jetgraph/engine"
)

// Answer is one scripted reply of a Fake: text, tool calls, or both.
type Answer struct {
	// Text is the content of the AI message.
	Text string
	// ToolCalls are the calls the AI message makes. An empty ID is filled in deterministically;
	// Type is always "tool_call".
	ToolCalls []engine.ToolCall
}

// Text returns an answer of plain text.
func Text(s string) Answer { return Answer{Text: s} }

// Call returns an answer that calls tool name with args and says nothing.
func Call(name string, args map[string]any) Answer { return Answer{}.Call(name, args) }

// Call returns a copy of a that also calls tool name with args.
func (a Answer) Call(name string, args map[string]any) Answer {
	calls := make([]engine.ToolCall, len(a.ToolCalls), len(a.ToolCalls)+1)
	copy(calls, a.ToolCalls)
	a.ToolCalls = append(calls, engine.ToolCall{Name: name, Args: args, Type: "tool_call"})
	return a
}

// Fake is a deterministic scripted ChatModel for tests, demos and offline use. It gives its
// answers in turn, one per call, starting over after the last: NewFake(Text("begin"),
// Text("end")) answers "begin", "end", "begin", ... With no answers it echoes the text of the
// last human message.
//
// It streams one chunk per character (rune) of the answer's text, then one tool_call_chunk per
// tool call carrying the call's full arguments JSON; the last chunk also carries the usage and
// the response metadata. With an empty answer it streams one empty chunk.
//
// Everything it returns is a function of its seed, the number of calls it has answered and the
// conversation, so that two Fakes given the same script, options and requests return equal
// messages, and golden files stay stable:
//   - message id: "fake-" + a UUID v5 in the seed's namespace of the call's sequence number and a
//     SHA-256 of the conversation (type, text, tool calls and tool_call_id of each message, not
//     message ids), so that a Fake re-created on a longer thread does not reuse an id;
//   - tool call id, when the answer leaves it empty: "call_" + the first 12 hex digits of the
//     message's UUID + "_" + the call's index;
//   - usage: input_tokens = ceil(runes of the text of all request messages / 4), output_tokens =
//     ceil((runes of the answer's text + of each call's name and arguments JSON) / 4), and
//     total_tokens their sum.
//
// A Fake is safe for concurrent use; configure it (WithSeed, WithName, WithDelay) before sharing
// it.
type Fake struct {
	mu      sync.Mutex
	answers []Answer
	calls   int
	seed    uuid.UUID
	name    string
	delay   time.Duration
}

// DefaultFakeSeed is the seed of a Fake's message ids unless WithSeed changes it.
const DefaultFakeSeed = "jetgraph"

const fakeOp = engine.Op("model.fake")

// NewFake returns a Fake that gives answers in turn, cycling.
func NewFake(answers ...Answer) *Fake {
	f := &Fake{answers: append([]Answer(nil), answers...), name: "fake"}
	return f.WithSeed(DefaultFakeSeed)
}

// WithSeed sets the seed message ids derive from, so that two Fakes in one thread can answer
// with distinct ids. It returns f.
func (f *Fake) WithSeed(seed string) *Fake {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seed = uuid.NewSHA1(uuid.NameSpaceURL, []byte("jetgraph:model.fake:"+seed))
	return f
}

// WithName sets the model name that Info and response_metadata report ("fake" by default).
// It returns f.
func (f *Fake) WithName(name string) *Fake {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.name = name
	return f
}

// WithDelay makes f wait d before each chunk, to show streaming in demos (0 by default).
// It returns f.
func (f *Fake) WithDelay(d time.Duration) *Fake {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.delay = d
	return f
}

// Calls returns how many calls f has answered (or begun to answer).
func (f *Fake) Calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

// Info reports provider "fake" and the model name.
func (f *Fake) Info() Info {
	f.mu.Lock()
	defer f.mu.Unlock()
	return Info{Provider: "fake", Model: f.name}
}

// Stream answers with the next scripted answer, streaming it to onChunk. A call consumes its
// answer even when it is canceled part way. It stops with ctx's error, wrapped, when ctx is
// done before a chunk.
func (f *Fake) Stream(ctx context.Context, req Request, onChunk func(engine.MessageChunk) error) (engine.Message, error) {
	if err := ctx.Err(); err != nil {
		return engine.Message{}, engine.E(fakeOp, "the model call was canceled", err)
	}
	f.mu.Lock()
	n := f.calls
	f.calls++
	var ans Answer
	if len(f.answers) == 0 {
		ans = Text(lastHumanText(req.Messages))
	} else {
		ans = f.answers[n%len(f.answers)]
	}
	seed, name, delay := f.seed, f.name, f.delay
	f.mu.Unlock()

	msgUUID := uuid.NewSHA1(seed, []byte(fmt.Sprintf("%d:%x", n, conversationDigest(req.Messages))))
	id := "fake-" + msgUUID.String()
	callPrefix := "call_" + strings.ReplaceAll(msgUUID.String(), "-", "")[:12] + "_"

	out := newAIMessage(id, ans.Text)
	outputChars := utf8.RuneCountInString(ans.Text)
	var chunks []engine.MessageChunk
	for _, r := range ans.Text {
		c := newChunk(id)
		c.Content = string(r)
		chunks = append(chunks, c)
	}
	for i, tc := range ans.ToolCalls {
		raw, err := json.Marshal(tc.Args)
		if err != nil {
			return engine.Message{}, engine.E(fakeOp, engine.Invalid, "a scripted tool call's arguments are not JSON", err)
		}
		if tc.Args == nil {
			raw = []byte("{}")
		}
		args, _ := parseArgs(string(raw)) // a fresh copy, so that callers cannot change the script
		callID := tc.ID
		if callID == "" {
			callID = fmt.Sprintf("%s%d", callPrefix, i)
		}
		call := engine.ToolCall{Name: tc.Name, Args: args, ID: callID, Type: "tool_call"}
		out.ToolCalls = append(out.ToolCalls, call)
		outputChars += utf8.RuneCountInString(tc.Name) + utf8.RuneCount(raw)

		c := newChunk(id)
		c.ToolCallChunks = []engine.ToolCallChunk{{Name: tc.Name, Args: string(raw), ID: callID, Index: i, Type: "tool_call_chunk"}}
		chunkArgs, _ := parseArgs(string(raw))
		c.ToolCalls = []engine.ToolCall{{Name: tc.Name, Args: chunkArgs, ID: callID, Type: "tool_call"}}
		chunks = append(chunks, c)
	}
	if len(chunks) == 0 {
		chunks = append(chunks, newChunk(id))
	}

	inputChars := 0
	for _, m := range req.Messages {
		inputChars += utf8.RuneCountInString(m.Text())
	}
	in, outTokens := (inputChars+3)/4, (outputChars+3)/4
	out.UsageMetadata = &engine.UsageMetadata{InputTokens: in, OutputTokens: outTokens, TotalTokens: in + outTokens}
	finish := FinishStop
	if len(out.ToolCalls) > 0 {
		finish = FinishToolCalls
	}
	out.ResponseMetadata = map[string]any{"model_name": name, "model_provider": "fake", "finish_reason": finish}

	last := &chunks[len(chunks)-1]
	last.UsageMetadata = copyUsage(out.UsageMetadata)
	last.ResponseMetadata = map[string]any{"model_name": name, "model_provider": "fake", "finish_reason": finish}

	for _, c := range chunks {
		if err := engine.Sleep(ctx, delay); err != nil {
			return engine.Message{}, engine.E(fakeOp, "the model call was canceled", err)
		}
		if onChunk != nil {
			if err := onChunk(c); err != nil {
				return engine.Message{}, err
			}
		}
	}
	return out, nil
}

// lastHumanText is the text of the last human message, what a Fake without answers echoes.
func lastHumanText(msgs []engine.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Type == engine.MessageHuman {
			return msgs[i].Text()
		}
	}
	return ""
}

// conversationDigest hashes what a conversation says, leaving out message ids, which servers
// often assign at random.
func conversationDigest(msgs []engine.Message) []byte {
	type said struct {
		Type       string            `json:"t"`
		Text       string            `json:"x"`
		ToolCalls  []engine.ToolCall `json:"c,omitempty"`
		ToolCallID string            `json:"i,omitempty"`
	}
	h := sha256.New()
	enc := json.NewEncoder(h)
	for _, m := range msgs {
		// Encoding cannot fail: tool call args came from JSON or are plain values.
		_ = enc.Encode(said{Type: m.Type, Text: m.Text(), ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID})
	}
	return h.Sum(nil)
}
