package hosting

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/engine/graphs"
)

// Pool is the hosts of one language and project: the same graphs loaded in several processes,
// so that runs of a language whose library holds a global lock (Python's) use more than one
// core. A request goes to the running host with the fewest requests in flight.
type Pool struct {
	hosts []*Host
	// traced: the hosts post their runs' spans to jetgraph's tracing API (Options.Tracing),
	// so each run is given its trace's parent.
	traced bool
}

// Drain has the pool's runs in flight, and those it is given from now on, stop at their next
// checkpoint (graphs.ErrDrained), so that a process shutting down leaves them, with nothing
// lost, to the next process. Its hosts keep answering until they are closed.
func (p *Pool) Drain() {
	for _, h := range p.hosts {
		h.Drain()
	}
}

// draining reports whether the pool's runs are to stop at their next checkpoint.
func (p *Pool) draining() bool {
	for _, h := range p.hosts {
		if h.draining.Load() {
			return true
		}
	}
	return false
}

// NewPool returns a pool of started hosts (at least one).
func NewPool(hosts ...*Host) *Pool { return &Pool{hosts: hosts} }

// Hosts returns the pool's hosts.
func (p *Pool) Hosts() []*Host { return p.hosts }

// Factory returns the hosted graph id of the pool for a run's config (graphs.HostedFactory).
func (p *Pool) Factory(id string) graphs.HostedFactory {
	return func(cfg graph.Config) (graphs.Runnable, error) {
		for _, h := range p.hosts {
			if st, ok := h.Graphs()[id]; ok && !st.OK {
				return nil, fmt.Errorf("%s", st.Error)
			}
		}
		return &Graph{pool: p, id: id, cfg: cfg}, nil
	}
}

// Factory returns the hosted graph id of h alone (see Pool.Factory).
func (h *Host) Factory(id string) graphs.HostedFactory { return NewPool(h).Factory(id) }

// pick is the host a request goes to: the running one with the fewest requests in flight, or
// the first while none runs (the request waits for it).
func (p *Pool) pick() *Host {
	best, bestLoad := p.hosts[0], -1
	for _, h := range p.hosts {
		if n, ok := h.inFlight(); ok && (bestLoad < 0 || n < bestLoad) {
			best, bestLoad = h, n
		}
	}
	return best
}

func (p *Pool) do(ctx context.Context, typ string, fields map[string]any, req *request) (json.RawMessage, error) {
	return p.pick().do(ctx, typ, fields, req)
}

// inFlight is how many requests h's process has in flight; false while no process runs.
func (h *Host) inFlight() (int, bool) {
	h.mu.Lock()
	p := h.cur
	h.mu.Unlock()
	if p == nil {
		return 0, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.reqs), true
}
