package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/jetgraph/jetgraph/engine"
)

// events records a run's stream events as "<mode>[|ns]: <summary>" lines: values show their
// keys and messages, checkpoints their source and step.
type events struct {
	mu    sync.Mutex
	lines []string
	refs  []Ref // the checkpoints of the checkpoints events, in order
}

func (e *events) sink(ev Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	name := string(ev.Kind)
	if len(ev.NS) > 0 {
		name += "|" + strings.SplitN(ev.NS[0], ":", 2)[0]
	}
	switch ev.Kind {
	case KindValues:
		st := ev.Data.(State)
		var parts []string
		for _, k := range []string{"messages", "city", "note", "secret"} {
			if _, ok := st[k]; !ok {
				continue
			}
			if k == "messages" {
				parts = append(parts, "messages="+texts(st, k))
			} else {
				parts = append(parts, fmt.Sprintf("%s=%v", k, st[k]))
			}
		}
		e.lines = append(e.lines, name+": "+strings.Join(parts, " "))
	case KindCheckpoint:
		cp := ev.Data.(CheckpointSaved)
		e.refs = append(e.refs, cp.Checkpoint)
		e.lines = append(e.lines, fmt.Sprintf("%s: %v %v", name, cp.Metadata["source"], cp.Metadata["step"]))
	case KindUpdates:
		e.lines = append(e.lines, name+": "+ev.Data.(NodeUpdate).Node)
	}
}

// weatherGraph is the shape of the shipped weather graph: a subgraph that stops before its
// second node.
func weatherGraph() *Graph {
	sub := NewBuilder("weather_graph").Channel("messages", Messages()).Channel("city", LastValue())
	sub.Node("model_node", func(ctx context.Context, in any, rt *Runtime) (any, error) {
		return map[string]any{"city": "SF"}, nil
	})
	sub.Node("weather_node", func(ctx context.Context, in any, rt *Runtime) (any, error) {
		return map[string]any{"messages": []any{engine.NewMessage(engine.MessageAI, "sunny in "+in.(State)["city"].(string))}}, nil
	})
	sub.Edge(Start, "model_node").Edge("model_node", "weather_node")
	sg := sub.MustCompile(CompileOptions{InterruptBefore: []string{"weather_node"}})
	return NewBuilder("weather").Channel("messages", Messages()).Channel("note", LastValue()).
		Subgraph("weather_graph", sg).Edge(Start, "weather_graph").MustCompile(CompileOptions{})
}

// TestRunsFromACheckpointEmitTheirStateFirst pins what a run that continues from a checkpoint
// streams before its first step, as LangGraph's loop does: the state it resumes from (at the
// root and in each subgraph it resumes), and the checkpoint it resumes from; a Command that
// updates without resuming is saved as an "input" checkpoint and streamed as values.
func TestRunsFromACheckpointEmitTheirStateFirst(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name  string
		graph func(testing.TB) *Graph
		setup []RunOptions
		// run is the run under test; from, when set, picks its checkpoint_id from the setup's
		// history (the index of the checkpoint, newest first).
		run  RunOptions
		from int
		want []string
	}{{
		name:  "resume after a dynamic interrupt",
		graph: agentGraph,
		setup: []RunOptions{{Input: map[string]any{"messages": "foo", "interrupt": true}}},
		run:   RunOptions{Command: &Command{Resume: "ok"}},
		want: []string{"values: messages=foo", "checkpoints: loop 0", "checkpoints: loop 1", "updates: agent",
			"values: messages=foo,begin"},
	}, {
		name:  "continue after a static interrupt",
		graph: agentGraph,
		setup: []RunOptions{{Input: map[string]any{"messages": "foo"}, InterruptBefore: []string{"tool"}}},
		run:   RunOptions{},
		want:  []string{"values: messages=foo,begin", "checkpoints: loop 1", "checkpoints: loop 2", "updates: tool"},
	}, {
		// Settled against the Python reference server: command.resume on a thread stopped by
		// interrupt_before continues it as input null does, whatever the value.
		name:  "command resume after a static interrupt",
		graph: agentGraph,
		setup: []RunOptions{{Input: map[string]any{"messages": "foo"}, InterruptBefore: []string{"tool"}}},
		run:   RunOptions{Command: &Command{Resume: "yes"}},
		want:  []string{"values: messages=foo,begin", "checkpoints: loop 1", "checkpoints: loop 2", "updates: tool"},
	}, {
		name:  "command resume by id after a static interrupt in a subgraph",
		graph: func(testing.TB) *Graph { return weatherGraph() },
		setup: []RunOptions{{Input: map[string]any{"messages": "SF", "note": "n"}}},
		run:   RunOptions{Command: &Command{Resume: map[string]any{"any-id": "yes"}}},
		want: []string{"values: messages=SF note=n", "checkpoints: loop 0", "values|weather_graph: messages=SF city=SF",
			"checkpoints|weather_graph: loop 1", "checkpoints|weather_graph: loop 2", "updates|weather_graph: weather_node",
			"values|weather_graph: messages=SF,sunny in SF city=SF"},
	}, {
		name:  "regenerate from a checkpoint",
		graph: agentGraph,
		setup: []RunOptions{{Input: map[string]any{"messages": "foo"}}},
		run:   RunOptions{},
		from:  3, // the checkpoint after the first answer: agent runs again
		want:  []string{"values: messages=foo", "checkpoints: loop 0", "checkpoints: loop 1", "updates: agent"},
	}, {
		name:  "resume a subgraph",
		graph: func(testing.TB) *Graph { return weatherGraph() },
		setup: []RunOptions{{Input: map[string]any{"messages": "SF", "note": "n"}}},
		run:   RunOptions{},
		want: []string{"values: messages=SF note=n", "checkpoints: loop 0", "values|weather_graph: messages=SF city=SF",
			"checkpoints|weather_graph: loop 1", "checkpoints|weather_graph: loop 2", "updates|weather_graph: weather_node",
			"values|weather_graph: messages=SF,sunny in SF city=SF"},
	}, {
		name:  "update without resume on an idle thread",
		graph: agentGraph,
		setup: []RunOptions{{Input: map[string]any{"messages": "foo"}}},
		run:   RunOptions{Command: &Command{Update: map[string]any{"messages": "bar"}}},
		want:  []string{"checkpoints: input 4", "values: messages=foo,begin,tool_call__begin,end,bar"},
	}, {
		name:  "goto without resume",
		graph: agentGraph,
		setup: []RunOptions{{Input: map[string]any{"messages": "foo"}}},
		run:   RunOptions{Command: &Command{Goto: "tool"}},
		want:  []string{"checkpoints: input 4", "values: messages=foo,begin,tool_call__begin,end", "checkpoints: loop 5", "updates: tool"},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g, saver := c.graph(t), NewMemorySaver()
			for _, o := range c.setup {
				o.ThreadID, o.Saver = "t", saver
				if _, err := g.Run(ctx, o); err != nil {
					t.Fatal(err)
				}
			}
			if c.from > 0 {
				hist, err := g.History(ctx, saver, Ref{ThreadID: "t"}, ListOptions{})
				if err != nil {
					t.Fatal(err)
				}
				c.run.CheckpointID = hist[c.from].Ref.ID
			}
			var rec events
			c.run.ThreadID, c.run.Saver, c.run.Sink = "t", saver, rec.sink
			if _, err := g.Run(ctx, c.run); err != nil {
				t.Fatal(err)
			}
			if len(rec.lines) < len(c.want) || strings.Join(rec.lines[:len(c.want)], "\n") != strings.Join(c.want, "\n") {
				t.Fatalf("events:\n%s\nwant first:\n%s", strings.Join(rec.lines, "\n"), strings.Join(c.want, "\n"))
			}
		})
	}
}

// TestCommandUpdateIsAnInputCheckpoint: an update without resume on an idle thread is kept as
// an "input" checkpoint, the thread's new head.
func TestCommandUpdateIsAnInputCheckpoint(t *testing.T) {
	ctx := context.Background()
	g, saver := agentGraph(t), NewMemorySaver()
	if _, err := g.Run(ctx, RunOptions{ThreadID: "t", Input: map[string]any{"messages": "foo"}, Saver: saver}); err != nil {
		t.Fatal(err)
	}
	before, _ := g.State(ctx, saver, Ref{ThreadID: "t"}, false)
	res, err := g.Run(ctx, RunOptions{ThreadID: "t", Command: &Command{Update: map[string]any{"messages": "bar"}}, Saver: saver})
	if err != nil {
		t.Fatal(err)
	}
	st, _ := g.State(ctx, saver, Ref{ThreadID: "t"}, false)
	if st.Metadata["source"] != "input" || st.Parent == nil || st.Parent.ID != before.Ref.ID || len(st.Next) != 0 ||
		texts(st.Values, "messages") != "foo,begin,tool_call__begin,end,bar" || res.Checkpoint.ID != st.Ref.ID {
		t.Fatalf("state after the update: source %v next %v values %s", st.Metadata["source"], st.Next, texts(st.Values, "messages"))
	}
}

// TestNoValuesWithoutWrites: a step that writes no state key (here the input {}) emits no values
// event, as LangGraph's loop; the node's step does.
func TestNoValuesWithoutWrites(t *testing.T) {
	b := NewBuilder("empty").Channel("note", LastValue())
	b.Node("n", func(ctx context.Context, in any, rt *Runtime) (any, error) {
		return map[string]any{"note": "n"}, nil
	})
	g := b.Edge(Start, "n").MustCompile(CompileOptions{})
	var rec events
	if _, err := g.Run(context.Background(), RunOptions{ThreadID: "t", Input: map[string]any{}, Saver: NewMemorySaver(), Sink: rec.sink}); err != nil {
		t.Fatal(err)
	}
	var values []string
	for _, l := range rec.lines {
		if strings.HasPrefix(l, "values:") {
			values = append(values, l)
		}
	}
	if len(values) != 1 || values[0] != "values: note=n" {
		t.Errorf("values events = %q, want only the node's", values)
	}
}

// TestValuesCarryEveryChannel: the values stream mode and a run's Values carry every channel
// of the state; only Output (an in-process invoke, a subgraph's update to its parent) keeps to
// the output keys.
func TestValuesCarryEveryChannel(t *testing.T) {
	ctx := context.Background()
	b := NewBuilder("private").Channel("messages", Messages()).Channel("secret", LastValue()).OutputKeys("messages")
	b.Node("n", func(ctx context.Context, in any, rt *Runtime) (any, error) {
		return map[string]any{"messages": "out", "secret": "s"}, nil
	})
	g := b.Edge(Start, "n").MustCompile(CompileOptions{})
	var rec events
	saver := NewMemorySaver()
	res, err := g.Run(ctx, RunOptions{ThreadID: "t", Input: map[string]any{"messages": "in"}, Saver: saver, Sink: rec.sink})
	if err != nil {
		t.Fatal(err)
	}
	if got := rec.lines[len(rec.lines)-1]; got != "values: messages=in,out secret=s" {
		t.Errorf("last values event = %s", got)
	}
	vals, _ := json.Marshal(keysOf(res.Values))
	out, _ := json.Marshal(keysOf(res.Output))
	if string(vals) != `["messages","secret"]` || string(out) != `["messages"]` {
		t.Errorf("Values keys %s, Output keys %s", vals, out)
	}
	st, _ := g.State(ctx, saver, Ref{ThreadID: "t"}, false)
	if st.Values["secret"] != "s" {
		t.Errorf("thread state values = %v", st.Values)
	}
	// As a subgraph, it gives its parent only its output keys.
	parent := NewBuilder("p").Channel("messages", Messages()).Channel("secret", LastValue()).
		Subgraph("child", g).Edge(Start, "child").MustCompile(CompileOptions{})
	pres, err := parent.Run(ctx, RunOptions{Input: map[string]any{"messages": "in"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, leaked := pres.Values["secret"]; leaked || texts(pres.Values, "messages") != "in,out" {
		t.Errorf("parent values = %v", pres.Values)
	}
}

func keysOf(s State) []string {
	var ks []string
	for _, k := range []string{"messages", "secret"} {
		if _, ok := s[k]; ok {
			ks = append(ks, k)
		}
	}
	return ks
}

// TestResumeWithNothingToResume: a resume value on a thread with no interrupt and no task left
// to run is refused, static interrupts aside.
func TestResumeWithNothingToResume(t *testing.T) {
	ctx := context.Background()
	g, saver := agentGraph(t), NewMemorySaver()
	if _, err := g.Run(ctx, RunOptions{ThreadID: "t", Input: map[string]any{"messages": "foo"}, Saver: saver}); err != nil {
		t.Fatal(err)
	}
	_, err := g.Run(ctx, RunOptions{ThreadID: "t", Command: &Command{Resume: "yes"}, Saver: saver})
	if !engine.Is(engine.Invalid, err) || !strings.Contains(err.Error(), "no pending interrupt") {
		t.Fatalf("resume of a finished thread: %v", err)
	}
}
