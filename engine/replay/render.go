package replay

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Filter narrows what is shown: one run, one step.
type Filter struct {
	RunID string // "": every run
	Step  *int   // nil: every step
}

// Apply returns t narrowed to f (t itself is left as it is); a run t does not hold is an error.
func (t *Thread) Apply(f Filter) (*Thread, error) {
	out := &Thread{ThreadID: t.ThreadID, Runs: []*Run{}}
	for _, r := range t.Runs {
		if f.RunID != "" && r.RunID != f.RunID {
			continue
		}
		rc := *r
		if f.Step != nil {
			rc.Steps = []Step{}
			for _, s := range r.Steps {
				if s.Step == *f.Step {
					rc.Steps = append(rc.Steps, s)
				}
			}
		}
		out.Runs = append(out.Runs, &rc)
	}
	if f.RunID != "" && len(out.Runs) == 0 {
		return nil, fmt.Errorf("replay: run %s is not on thread %s", f.RunID, t.ThreadID)
	}
	if f.RunID == "" {
		for _, s := range t.Updates {
			if f.Step == nil || s.Step == *f.Step {
				out.Updates = append(out.Updates, s)
			}
		}
	}
	return out, nil
}

// Text writes t for a reader: a block per run, a few lines per step.
func Text(w io.Writer, t *Thread) error {
	p := &printer{w: w}
	p.f("thread %s: %d run(s)\n", t.ThreadID, len(t.Runs))
	for _, r := range t.Runs {
		p.f("\nrun %s  graph %s  %s", r.RunID, r.GraphID, r.Status)
		if r.FinishedAt != nil {
			p.f("  %s", r.FinishedAt.Sub(r.CreatedAt).Round(100_000))
		}
		p.f("\n")
		if r.Error != nil {
			p.f("  error    %s: %s\n", r.Error.Class, r.Error.Message)
		}
		if r.Resume != nil {
			p.f("  resumes  %s\n", compact(r.Resume, 200))
		} else if r.Input != nil {
			p.f("  input    %s\n", compact(r.Input, 200))
		} else {
			p.f("  resumes  without input, from the thread's last checkpoint\n")
		}
		for _, a := range r.Attempts {
			p.f("  attempt  %d on %s at %s", a.N, a.Worker, a.At.Format("15:04:05.000"))
			if a.N > 1 {
				p.f("  (takeover, from checkpoint %s)", a.Checkpoint)
			}
			p.f("\n")
		}
		if r.Trace == TraceAbsent {
			p.f("  trace    none (tracing off for this run, e.g. --no-self-trace): no model cost or latency\n")
		}
		for _, s := range r.Steps {
			p.step(s)
		}
	}
	if len(t.Updates) > 0 {
		p.f("\nstate updates\n")
		for _, s := range t.Updates {
			p.step(s)
		}
	}
	return p.err
}

type printer struct {
	w   io.Writer
	err error
}

func (p *printer) f(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}

func (p *printer) step(s Step) {
	ns := ""
	if s.NS != "" {
		ns = "  ns " + s.NS
	}
	p.f("  step %d  %s  %s  +%.1fms  checkpoint %s%s", s.Step, s.Source, strings.Join(s.Nodes, ","), s.DurationMS, s.CheckpointID, ns)
	if s.Worker != "" {
		p.f("  attempt %d on %s", s.Attempt, s.Worker)
	}
	p.f("\n")
	for _, c := range s.ModelCalls {
		p.f("    model   %s %s/%s  in %d out %d tokens  %s", c.Node, c.Provider, c.Model, c.InputTokens, c.OutputTokens, c.FinishReason)
		if c.LatencyMS != nil {
			p.f("  %.1fms", *c.LatencyMS)
			if c.FirstTokenMS != nil {
				p.f(" (first token %.1fms)", *c.FirstTokenMS)
			}
			if c.Cost != nil {
				p.f("  $%.6f", *c.Cost)
			} else {
				p.f("  no price")
			}
		}
		for _, tc := range c.ToolCalls {
			p.f("  calls %s(%s)", tc.Name, compact(tc.Args, 80))
		}
		if s, _ := c.Content.(string); s != "" {
			p.f("  %q", clip(s, 120))
		}
		p.f("\n")
	}
	for _, c := range s.ToolCalls {
		p.f("    tool    %s %s(%s) -> %s\n", c.Node, c.Name, compact(c.Args, 80), compact(c.Result, 120))
	}
	for _, c := range s.Diff {
		switch c.Op {
		case OpAppended:
			items, _ := c.New.([]any)
			for _, it := range items {
				p.f("    diff    %s += %s\n", c.Channel, item(it))
			}
		case OpAdded:
			p.f("    diff    %s = %s (new)\n", c.Channel, compact(c.New, 160))
		case OpRemoved:
			p.f("    diff    %s removed (was %s)\n", c.Channel, compact(c.Old, 80))
		default:
			p.f("    diff    %s: %s -> %s\n", c.Channel, compact(c.Old, 80), compact(c.New, 80))
		}
	}
	for _, i := range s.Interrupts {
		p.f("    interrupt %s\n", compact(i, 160))
	}
	for _, e := range s.Errors {
		p.f("    error   %s\n", compact(e, 160))
	}
	if len(s.Next) > 0 {
		p.f("    next    %s\n", strings.Join(s.Next, ","))
	}
}

// compact is v as one line of JSON, clipped to n characters.
func compact(v any, n int) string {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return clip(string(raw), n)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) { // never half a character
		n--
	}
	return s[:n] + "…"
}

// item shows a list item: a message as its type, name and content, anything else as JSON.
func item(v any) string {
	m, ok := v.(map[string]any)
	typ, isMsg := m["type"].(string)
	if !ok || !isMsg || m["content"] == nil {
		return compact(v, 160)
	}
	out := typ
	if name, _ := m["name"].(string); name != "" {
		out += "(" + name + ")"
	}
	out += " " + compact(m["content"], 120)
	if calls, _ := m["tool_calls"].([]any); len(calls) > 0 {
		out += " tool_calls " + compact(calls, 120)
	}
	return out
}
