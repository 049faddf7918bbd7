package supervise

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/jetgraph/jetgraph/engine/controlplane/scrub"
)

// Restart backoff of a crashed revision process: doubled at each crash up to the maximum, back
// to the minimum once a process has run for backoffReset.
const (
	backoffMin   = 100 * time.Millisecond
	backoffMax   = 10 * time.Second
	backoffReset = 30 * time.Second
	// maxStartExits is how many times a new revision's process may exit before it is healthy:
	// then it is not waited for any longer (DEPLOY_FAILED).
	maxStartExits = 3
	// healthPoll is how often a starting process's /ok is asked.
	healthPoll = 50 * time.Millisecond
)

// proc is one revision's runtime process, restarted when it exits until it is stopped.
type proc struct {
	deployment, revision string
	program              string
	args, env            []string
	addr                 string // host:port, loopback
	data                 string // its data folder, removed once it stopped
	logPath              string
	secrets              []string // values scrubbed from its output (the deployment's secrets)

	transport *http.Transport
	proxy     *httputil.ReverseProxy

	mu       sync.Mutex
	cmd      *exec.Cmd
	exits    int
	running  bool
	stopping bool
	inflight int
	idle     chan struct{} // closed when inflight drops to 0 while stopping

	stopc chan struct{} // closed by stop: no restart
	done  chan struct{} // closed when the supervision loop has ended
}

func newProc(deployment, revision, program string, args, env []string, addr, data, logPath string) (*proc, error) {
	target := &url.URL{Scheme: "http", Host: addr}
	p := &proc{deployment: deployment, revision: revision, program: program, args: args, env: env, addr: addr,
		data: data, logPath: logPath, stopc: make(chan struct{}), done: make(chan struct{}),
		transport: http.DefaultTransport.(*http.Transport).Clone()}
	p.transport.MaxIdleConnsPerHost = 64
	p.proxy = &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.SetXForwarded()
		},
		Transport:     p.transport,
		FlushInterval: -1, // SSE: every write reaches the client at once
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			writeDetail(w, http.StatusBadGateway, fmt.Sprintf("revision %s of deployment %s did not answer: %v", revision, deployment, err))
		},
	}
	return p, nil
}

// freePort returns a loopback address no listener holds now.
func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := ln.Addr().String()
	return addr, ln.Close()
}

// start runs the process and supervises it until stop.
func (p *proc) start(logger *slog.Logger) {
	go p.supervise(logger)
}

func (p *proc) supervise(logger *slog.Logger) {
	defer close(p.done)
	backoff := backoffMin
	for {
		started := time.Now()
		err := p.runOnce()
		p.mu.Lock()
		p.exits++
		p.running = false
		stopping := p.stopping
		p.mu.Unlock()
		select {
		case <-p.stopc:
			return
		default:
		}
		if stopping {
			return
		}
		if time.Since(started) > backoffReset {
			backoff = backoffMin
		}
		logger.Warn("revision process exited; restarting", "deployment", p.deployment, "revision", p.revision,
			"err", err, "restart_in", backoff)
		select {
		case <-p.stopc:
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, backoffMax)
	}
}

// runOnce runs the process once, its output appended to the revision's process log.
func (p *proc) runOnce() error {
	out, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer out.Close()
	// The process's output goes through the scrubber: a graph printing its environment does
	// not put the deployment's secrets in the log (nor, through outputTail, in the revision's).
	w := scrub.NewWriter(out, p.secrets)
	defer w.Flush()
	cmd := exec.Command(p.program, p.args...)
	cmd.Env = p.env
	cmd.Stdout, cmd.Stderr = w, w
	// With a writer that is not a file, Wait copies the output through a pipe: a grandchild
	// holding the pipe open must not keep Wait from returning once the process exited.
	cmd.WaitDelay = 5 * time.Second
	cmd.SysProcAttr = procAttr()
	p.mu.Lock()
	if p.stopping {
		p.mu.Unlock()
		return errors.New("stopping")
	}
	if err := cmd.Start(); err != nil {
		p.mu.Unlock()
		return err
	}
	p.cmd, p.running = cmd, true
	p.mu.Unlock()
	return cmd.Wait()
}

// waitHealthy waits until the process answers 200 on /ok.
func (p *proc) waitHealthy(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client := &http.Client{Transport: p.transport, Timeout: 2 * time.Second}
	tick := time.NewTicker(healthPoll)
	defer tick.Stop()
	var last error // the latest failure, named when the time is up
	p.mu.Lock()
	before := p.exits
	p.mu.Unlock()
	for {
		p.mu.Lock()
		exits := p.exits - before
		p.mu.Unlock()
		if exits >= maxStartExits {
			return fmt.Errorf("health check failed: the process exited %d times before /ok answered", exits)
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+p.addr+"/ok", nil)
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("/ok answered %s", resp.Status)
		}
		last = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("health check failed: no healthy /ok within %v: %v", timeout, last)
		case <-tick.C:
		}
	}
}

// enter counts a request the proxy forwards to p; false when p is stopping (the request must go
// to the revision that replaced it).
func (p *proc) enter() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopping {
		return false
	}
	p.inflight++
	return true
}

// leave ends a request enter counted.
func (p *proc) leave() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.inflight--
	if p.inflight == 0 && p.idle != nil {
		close(p.idle)
		p.idle = nil
	}
}

// stop drains and stops the process: no new request reaches it; the requests already forwarded
// finish (for up to grace), then SIGTERM lets the runtime finish its runs (its own
// --grace-period), and a process still there after grace and a margin is killed.
func (p *proc) stop(grace time.Duration) {
	p.mu.Lock()
	if p.stopping {
		p.mu.Unlock()
		<-p.done
		return
	}
	p.stopping = true
	var idle chan struct{}
	if p.inflight > 0 {
		idle = make(chan struct{})
		p.idle = idle
	}
	p.mu.Unlock()
	if idle != nil {
		select {
		case <-idle:
		case <-time.After(grace):
		}
	}
	close(p.stopc)
	p.signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace + 5*time.Second):
		p.signal(syscall.SIGKILL)
		<-p.done
	}
	p.transport.CloseIdleConnections()
	_ = os.RemoveAll(p.data)
}

func (p *proc) signal(sig os.Signal) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil && p.running {
		_ = p.cmd.Process.Signal(sig)
	}
}

// outputTail is the end of the process's output, for a failed start's log.
func (p *proc) outputTail() string {
	raw, err := os.ReadFile(p.logPath)
	if err != nil {
		return ""
	}
	const max = 8 << 10
	if len(raw) > max {
		raw = raw[len(raw)-max:]
	}
	return string(raw)
}
