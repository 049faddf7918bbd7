// Package hosting runs graphs written in other languages: it starts and supervises host
// processes (one per language, see PROTOCOL.md) that load the user's graphs with the user's own
// LangGraph library, and gives the runner a graph (Graph) that forwards a run to its host while
// serving the host's checkpointer and store calls from jetgraph's own saver and store. A host
// keeps no state: everything it writes goes through those calls onto the event log.
package hosting

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jetgraph/jetgraph/engine"
)

// ProtocolVersion is the version of PROTOCOL.md this jetgraph speaks.
const ProtocolVersion = 1

// Frame types of the protocol.
const (
	frameHello  = "hello"
	frameRun    = "run"
	frameState  = "state"
	frameHist   = "history"
	frameUpdate = "update_state"
	frameCancel = "cancel"
	frameReply  = "reply"
	frameEvent  = "event"
	frameDone   = "done"
	frameCall   = "call"
)

// Config says how to start a host.
type Config struct {
	// Language names the host in logs and errors ("python").
	Language string
	// Command is the program and its arguments (the interpreter, the host's file, its flags).
	Command []string
	// Dir is the working folder of the host (the config file's).
	Dir string
	// Env is the host's environment; nil is jetgraph's.
	Env []string
	// Graphs are the ids of the graphs the host serves, for its log lines.
	Graphs []string
	Logger *slog.Logger
	// StartTimeout bounds the wait for the host's hello (loading the user's graphs); 0 is 2 min.
	StartTimeout time.Duration
	// MinBackoff and MaxBackoff bound the wait before a host that died is started again; 0 is
	// 500 ms and 30 s.
	MinBackoff, MaxBackoff time.Duration
	// CancelGrace is how long a cancelled request waits for its host to confirm; 0 is 10 s.
	CancelGrace time.Duration
}

// GraphStatus is what a host said of one of its graphs when it started.
type GraphStatus struct {
	OK      bool   `json:"ok"`
	Factory bool   `json:"factory"`
	Error   string `json:"error,omitempty"`
}

type hello struct {
	Protocol int                    `json:"protocol"`
	Language string                 `json:"language"`
	Runtime  string                 `json:"runtime"`
	Library  string                 `json:"library"`
	Graphs   map[string]GraphStatus `json:"graphs"`
	// App is what the host said of the custom routes it loaded (--app); nil when it has none.
	App *AppStatus `json:"app,omitempty"`
	// Auth is what the host said of the auth handler it loaded (--auth); nil when it has none.
	Auth *AuthStatus `json:"auth,omitempty"`
}

// Host is a supervised host process: started again with backoff whenever it dies.
type Host struct {
	cfg    Config
	log    *slog.Logger
	cancel context.CancelFunc
	done   chan struct{}
	nextID atomic.Int64
	// draining is set by Drain: runs stop at their next checkpoint.
	draining atomic.Bool

	mu       sync.Mutex
	cur      *proc         // the running process, nil while there is none
	ready    chan struct{} // closed when cur is set
	health   error
	hello    hello
	restarts int
}

// Start starts the host and supervises it until Close.
func Start(cfg Config) *Host {
	if cfg.StartTimeout == 0 {
		cfg.StartTimeout = 2 * time.Minute
	}
	if cfg.MinBackoff == 0 {
		cfg.MinBackoff = 500 * time.Millisecond
	}
	if cfg.MaxBackoff == 0 {
		cfg.MaxBackoff = 30 * time.Second
	}
	if cfg.CancelGrace == 0 {
		cfg.CancelGrace = 10 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := &Host{cfg: cfg, cancel: cancel, done: make(chan struct{}), ready: make(chan struct{}),
		health: errors.New("starting"),
		log:    cfg.Logger.With("host", cfg.Language, "graphs", strings.Join(cfg.Graphs, ","))}
	go h.supervise(ctx)
	return h
}

// Health is nil while the host runs; otherwise why it does not.
func (h *Host) Health() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.health != nil {
		return fmt.Errorf("%s host (graphs %s): %w", h.cfg.Language, strings.Join(h.cfg.Graphs, ", "), h.health)
	}
	return nil
}

// Graphs returns what the running host said of its graphs (nil before it started).
func (h *Host) Graphs() map[string]GraphStatus {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.hello.Graphs
}

// Restarts counts the host's starts after the first.
func (h *Host) Restarts() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.restarts
}

// Drain has the host's runs stop at their next checkpoint, for a graceful stop (see Pool.Drain).
func (h *Host) Drain() {
	if !h.draining.Swap(true) {
		h.log.Info("draining: runs stop at their next checkpoint and are left to the next process")
	}
}

// Close stops the host (its runs in flight fail) and waits for it to exit.
func (h *Host) Close() {
	h.cancel()
	<-h.done
}

// WaitReady waits until the host has started (or ctx ends).
func (h *Host) WaitReady(ctx context.Context) error {
	_, err := h.proc(ctx)
	return err
}

func (h *Host) proc(ctx context.Context) (*proc, error) {
	// A host being restarted is waited for, as long as one start may take: a host that cannot
	// start fails its requests as unavailable instead of holding them (and their runs' leases)
	// until it is fixed.
	wait := time.NewTimer(h.cfg.StartTimeout + h.cfg.MaxBackoff)
	defer wait.Stop()
	for {
		h.mu.Lock()
		p, ready, health := h.cur, h.ready, h.health
		h.mu.Unlock()
		if p != nil {
			if !p.isDead() {
				return p, nil
			}
			// Exited, and the supervisor has not taken it down yet: a request sent to it would
			// fail without reaching a host, and a run would count it as a host it killed.
			ready = p.replaced
		}
		select {
		case <-ready:
		case <-wait.C:
			return nil, engine.E(engine.Op("hosting.run"), engine.Unavailable,
				fmt.Sprintf("The %s host is not running: %v", h.cfg.Language, health))
		case <-ctx.Done():
			return nil, engine.E(engine.Op("hosting.run"), engine.Unavailable,
				fmt.Sprintf("The %s host is not running: %v", h.cfg.Language, health), ctx.Err())
		}
	}
}

func (h *Host) supervise(ctx context.Context) {
	defer close(h.done)
	backoff := h.cfg.MinBackoff
	for ctx.Err() == nil {
		started := time.Now()
		p, hl, err := h.spawn(ctx)
		if err == nil {
			h.mu.Lock()
			h.cur, h.hello, h.health = p, hl, nil
			close(h.ready)
			h.mu.Unlock()
			h.log.Info("host started", "pid", p.cmd.Process.Pid, "runtime", hl.Runtime, "langgraph", hl.Library)
			for id, st := range hl.Graphs {
				if !st.OK {
					h.log.Error("graph not loaded", "graph_id", id, "error", st.Error)
				}
			}
			if hl.Auth != nil && !hl.Auth.OK {
				h.log.Error("auth handler (auth.path) not loaded: every request it guards fails", "error", hl.Auth.Error)
			}
			if hl.App != nil && !hl.App.OK {
				h.log.Error("custom routes (http.app) not loaded: not served", "error", hl.App.Error)
			}
			select {
			case <-p.exited:
			case <-ctx.Done():
				p.stop()
			}
			err = p.exitErr()
			h.mu.Lock()
			h.cur, h.ready = nil, make(chan struct{})
			h.mu.Unlock()
			close(p.replaced)
		}
		if ctx.Err() != nil {
			break
		}
		h.mu.Lock()
		h.health, h.restarts = err, h.restarts+1
		h.mu.Unlock()
		if time.Since(started) > 2*h.cfg.MaxBackoff {
			backoff = h.cfg.MinBackoff // it ran for a while: a new failure, not a crash loop
		}
		h.log.Error("host exited; starting it again", "error", err, "in", backoff)
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
		}
		backoff = min(2*backoff, h.cfg.MaxBackoff)
	}
	h.mu.Lock()
	h.health = errors.New("stopped")
	h.mu.Unlock()
}

// spawn starts a process and waits for its hello.
func (h *Host) spawn(ctx context.Context) (*proc, hello, error) {
	cmd := exec.Command(h.cfg.Command[0], h.cfg.Command[1:]...)
	cmd.Dir, cmd.Env = h.cfg.Dir, h.cfg.Env
	// Its own process group: a terminal's Ctrl-C (sent to the foreground group) reaches jetgraph
	// alone, which drains the host's runs before it stops the host (closing its stdin).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, hello{}, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, hello{}, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, hello{}, err
	}
	if err := cmd.Start(); err != nil {
		return nil, hello{}, fmt.Errorf("start %s: %w", h.cfg.Command[0], err)
	}
	p := &proc{h: h, cmd: cmd, in: stdin, exited: make(chan struct{}), replaced: make(chan struct{}), reqs: map[string]*request{}}
	logged := make(chan struct{})
	go func() { defer close(logged); h.copyLog(stderr, p) }()
	go func() {
		<-logged // the pipe is read to its end before Wait closes it
		p.err = cmd.Wait()
		p.failAll()
		close(p.exited)
	}()
	out := bufio.NewReaderSize(stdout, 1<<16)
	helloc := make(chan hello, 1)
	go p.read(out, helloc)
	timer := time.NewTimer(h.cfg.StartTimeout)
	defer timer.Stop()
	select {
	case hl := <-helloc:
		if hl.Protocol != ProtocolVersion {
			p.stop()
			return nil, hl, fmt.Errorf("the host speaks protocol %d, jetgraph speaks %d", hl.Protocol, ProtocolVersion)
		}
		return p, hl, nil
	case <-p.exited:
		return nil, hello{}, fmt.Errorf("exited before it was ready: %v%s", p.exitErr(), p.lastLog())
	case <-timer.C:
		p.stop()
		return nil, hello{}, fmt.Errorf("not ready after %s", h.cfg.StartTimeout)
	case <-ctx.Done():
		p.stop()
		return nil, hello{}, ctx.Err()
	}
}

// copyLog copies the host's stderr into jetgraph's log, a line a record, keeping the last lines
// for the error of a host that fails to start.
func (h *Host) copyLog(r io.Reader, p *proc) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		p.mu.Lock()
		p.tail = append(p.tail, line)
		if len(p.tail) > 20 {
			p.tail = p.tail[1:]
		}
		p.mu.Unlock()
		h.log.Info(line, "source", "host")
	}
}

// proc is one host process and its requests in flight.
type proc struct {
	h      *Host
	cmd    *exec.Cmd
	in     io.WriteCloser
	exited chan struct{}
	// replaced is closed once the supervisor no longer offers the process (Host.proc).
	replaced chan struct{}
	err      error

	wmu  sync.Mutex // one frame at a time on stdin
	mu   sync.Mutex
	reqs map[string]*request
	tail []string
	dead bool
}

// isDead reports whether the process exited (its requests were failed).
func (p *proc) isDead() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.dead
}

func (p *proc) exitErr() error {
	if p.err == nil {
		return errors.New("exited")
	}
	return p.err
}

func (p *proc) lastLog() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.tail) == 0 {
		return ""
	}
	return "; its last output:\n" + strings.Join(p.tail, "\n")
}

// stop closes the host's stdin (it finishes and exits) and kills it if it has not exited soon.
func (p *proc) stop() {
	_ = p.in.Close()
	select {
	case <-p.exited:
	case <-time.After(3 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

func (p *proc) send(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("hosting: encode frame: %w", err)
	}
	p.wmu.Lock()
	defer p.wmu.Unlock()
	_, err = p.in.Write(append(b, '\n'))
	return err
}

// frame is any frame a host writes; payloads stay raw for their receiver.
type frame struct {
	T      string          `json:"t"`
	ID     string          `json:"id"`
	Req    string          `json:"req"`
	Mode   string          `json:"mode"`
	NS     []string        `json:"ns"`
	Data   json.RawMessage `json:"data"`
	Result json.RawMessage `json:"result"`
	Error  *WireError      `json:"error"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// WireError is a failure as the protocol carries it.
type WireError struct {
	Class     string `json:"class"`
	Message   string `json:"message"`
	Traceback string `json:"traceback,omitempty"`
}

func (e *WireError) Error() string { return e.Class + ": " + e.Message }

func (p *proc) read(r *bufio.Reader, helloc chan<- hello) {
	first := true
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 1 {
			if first {
				first = false
				var hl hello
				if json.Unmarshal(line, &hl) == nil {
					helloc <- hl
					continue
				}
			}
			var f frame
			if err := json.Unmarshal(line, &f); err != nil {
				p.h.log.Error("host wrote what is not a frame", "error", err, "line", truncate(string(line), 200))
				continue
			}
			p.dispatch(f)
		}
		if err != nil {
			return
		}
	}
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

func (p *proc) dispatch(f frame) {
	p.mu.Lock()
	rid := f.ID
	if f.T == frameCall {
		rid = f.Req
	}
	req := p.reqs[rid]
	if f.T == frameDone {
		delete(p.reqs, rid)
	}
	p.mu.Unlock()
	if req == nil {
		if f.T == frameCall {
			_ = p.send(map[string]any{"t": frameReply, "id": f.ID, "error": WireError{Class: "LookupError", Message: "no request " + f.Req}})
		}
		return
	}
	switch f.T {
	case frameEvent:
		if req.onEvent != nil {
			req.onEvent(f.Mode, f.NS, f.Data)
		}
	case frameDone:
		req.done <- f
	case frameCall:
		go func() {
			result, err := req.onCall(req.ctx, f.Method, f.Params)
			reply := map[string]any{"t": frameReply, "id": f.ID, "result": result}
			if err != nil {
				class, msg := "Exception", err.Error()
				if engine.Is(engine.NotFound, err) {
					class = "LookupError"
				}
				reply = map[string]any{"t": frameReply, "id": f.ID, "error": WireError{Class: class, Message: msg}}
			}
			if err := p.send(reply); err != nil {
				p.h.log.Error("answer host call", "method", f.Method, "error", err)
			}
		}()
	}
}

// failAll ends the requests in flight of a process that exited.
func (p *proc) failAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dead = true
	for id, req := range p.reqs {
		req.done <- frame{T: frameDone, ID: id, Error: &WireError{Class: hostExited, Message: "the host exited during the request"}}
		delete(p.reqs, id)
	}
}

const hostExited = "HostExited"

// errHostExited is the cause of a request's failure when its host exited.
var errHostExited = errors.New("hosting: the host exited")

// request is one request in flight: its events and calls go to its handlers.
type request struct {
	ctx     context.Context
	onEvent func(mode string, ns []string, data json.RawMessage)
	onCall  func(ctx context.Context, method string, params json.RawMessage) (any, error)
	// started, when set, is called (in a goroutine of its own) once the request frame is sent,
	// with its id: it may send more frames of the request (a custom route's body).
	started func(id string, send func(any) error)
	done    chan frame
}

// do sends a request frame (fields besides "t" and "id") and waits for its end. When ctx ends
// first, the host is told to cancel and given CancelGrace to confirm.
func (h *Host) do(ctx context.Context, typ string, fields map[string]any, req *request) (json.RawMessage, error) {
	const op = "hosting.request"
	p, err := h.proc(ctx)
	if err != nil {
		return nil, err
	}
	id := typ[:1] + strconv.FormatInt(h.nextID.Add(1), 10)
	req.ctx, req.done = context.WithoutCancel(ctx), make(chan frame, 1)
	p.mu.Lock()
	if p.dead { // it died since proc offered it: a host lost, as during the request
		p.mu.Unlock()
		return nil, engine.E(engine.Op(op), engine.Unavailable, fmt.Sprintf("The %s host exited", h.cfg.Language), errHostExited)
	}
	p.reqs[id] = req
	p.mu.Unlock()
	fields["t"], fields["id"] = typ, id
	if err := p.send(fields); err != nil {
		p.mu.Lock()
		delete(p.reqs, id)
		p.mu.Unlock()
		return nil, engine.E(engine.Op(op), engine.Unavailable, fmt.Sprintf("The %s host does not answer", h.cfg.Language), err)
	}
	if req.started != nil {
		go req.started(id, p.send)
	}
	var f frame
	select {
	case f = <-req.done:
	case <-ctx.Done():
		_ = p.send(map[string]any{"t": frameCancel, "id": id})
		select {
		case <-req.done:
		case <-time.After(h.cfg.CancelGrace):
			h.log.Warn("host did not confirm a cancel", "request", id)
		}
		return nil, ctx.Err()
	}
	if f.Error != nil {
		if f.Error.Class == hostExited {
			return nil, engine.E(engine.Op(op), engine.Unavailable, fmt.Sprintf("The %s host exited during the request", h.cfg.Language), errHostExited)
		}
		return nil, f.Error
	}
	return f.Result, nil
}

// env is the process's environment with overrides.
func env(extra map[string]string) []string {
	out := os.Environ()
	for k, v := range extra {
		out = append(out, k+"="+v)
	}
	return out
}
