package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/jetgraph/jetgraph/engine/platform"
	"github.com/jetgraph/jetgraph/engine/replay"
	"github.com/jetgraph/jetgraph/engine/tracing"
	"github.com/jetgraph/jetgraph/engine/tracing/trace"
)

// tracedCalls reads runs' model calls from their self-traces (replay.ModelCalls): through the
// server holding --data (its /tracing API), or from the data folder's trace projection,
// brought up to date with the log first.
type tracedCalls struct {
	spans  func(ctx context.Context, runID string) ([]*trace.Run, error)
	closer func()
}

// openTracedCalls picks where the traces are read from, as withEvents does for events.
func openTracedCalls(ctx context.Context, o *options) (*tracedCalls, error) {
	data, err := existingData(o)
	if err != nil && o.natsURL != "" {
		return nil, nil // the log is elsewhere and no trace projection here: nothing to join
	}
	if err != nil {
		return nil, err
	}
	lock, err := lockData(data)
	var inUse errDataInUse
	if errors.As(err, &inUse) {
		info, err := runningServer(data)
		if err != nil {
			return nil, err
		}
		return &tracedCalls{closer: func() {}, spans: func(ctx context.Context, runID string) ([]*trace.Run, error) {
			return spansFromServer(ctx, info.Addr, runID)
		}}, nil
	}
	if err != nil {
		return nil, err
	}
	p, err := platform.Open(ctx, platform.Config{Data: data, Log: logConfig(o), Logger: o.logger,
		Tracing: platform.TracingConfig{PricesFile: o.trace.prices}}, nil)
	if err != nil {
		lock.release()
		return nil, err
	}
	// The projector folds what the log holds beyond the file's cursor; CatchUp waits for it.
	runCtx, stop := context.WithCancel(ctx)
	ran := make(chan struct{})
	go func() { defer close(ran); _ = p.TraceProjector.Run(runCtx) }()
	closer := func() { stop(); <-ran; p.Close(); lock.release() }
	if err := p.TraceProjector.CatchUp(ctx); err != nil {
		closer()
		return nil, fmt.Errorf("reading the trace projection: %w", err)
	}
	return &tracedCalls{closer: closer, spans: func(ctx context.Context, runID string) ([]*trace.Run, error) {
		page, err := p.Tracing.QueryRuns(ctx, tracing.Query{Trace: runID, Limit: maxTraceSpans})
		return page.Runs, err
	}}, nil
}

// maxTraceSpans bounds the spans read of one run's trace.
const maxTraceSpans = 1000

// spansFromServer asks the server's tracing API for the spans of a run's trace.
func spansFromServer(ctx context.Context, addr, runID string) ([]*trace.Run, error) {
	body, _ := json.Marshal(map[string]any{"trace": runID, "limit": maxTraceSpans})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/tracing/runs/query", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("asking the running server at %s: %w", addr, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return nil, fmt.Errorf("server at %s answered %s: %s", addr, resp.Status, b)
	}
	var page struct {
		Runs []*trace.Run `json:"runs"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil {
		return nil, fmt.Errorf("server at %s: %w", addr, err)
	}
	return page.Runs, nil
}

// ModelCalls finds a run's llm spans in its trace (root span id = run id) and the node of each:
// the langgraph_node of the task span it hangs under.
func (t *tracedCalls) ModelCalls(ctx context.Context, runID string) ([]replay.CallTiming, bool, error) {
	spans, err := t.spans(ctx, runID)
	if err != nil || len(spans) == 0 {
		return nil, false, err
	}
	nodes := map[string]string{}
	for _, s := range spans {
		if md, ok := s.Extra["metadata"].(map[string]any); ok {
			if n, ok := md["langgraph_node"].(string); ok {
				nodes[s.ID] = n
			}
		}
	}
	var out []replay.CallTiming
	for _, s := range spans {
		if s.RunType != trace.RunLLM || s.ParentRunID == nil {
			continue
		}
		c := replay.CallTiming{Node: nodes[*s.ParentRunID], Start: s.StartTime, Cost: s.TotalCost}
		if s.EndTime != nil {
			c.LatencyMS = ms(s.EndTime.Sub(s.StartTime).Seconds())
		}
		if s.FirstTokenTime != nil {
			ft := ms(s.FirstTokenTime.Sub(s.StartTime).Seconds())
			c.FirstTokenMS = &ft
		}
		out = append(out, c)
	}
	return out, true, nil
}

func ms(seconds float64) float64 { return seconds * 1000 }
