package eventlogtest

import (
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
)

// Proxy relays TCP connections to a NATS server, so that a test can cut one process off the
// log (a network partition: its connections drop and it cannot connect again) while others,
// connected to the server directly, keep using it.
type Proxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	conns map[net.Conn]struct{}
	cut   bool
}

// NewProxy relays to the server at serverURL (nats://host:port) and returns the proxy; its
// URL is what the process to cut off connects to. It stops when the test ends.
func NewProxy(t testing.TB, serverURL string) *Proxy {
	t.Helper()
	u, err := url.Parse(serverURL)
	if err != nil {
		t.Fatalf("eventlogtest: proxy to %s: %v", serverURL, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("eventlogtest: proxy: %v", err)
	}
	p := &Proxy{ln: ln, target: u.Host, conns: map[net.Conn]struct{}{}}
	go p.accept()
	t.Cleanup(func() {
		_ = ln.Close()
		p.Cut()
	})
	return p
}

// URL is the proxy's client URL.
func (p *Proxy) URL() string { return "nats://" + p.ln.Addr().String() }

// Cut drops every relayed connection and refuses new ones until Heal.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	for c := range p.conns {
		_ = c.Close()
	}
	clear(p.conns)
}

// Heal relays connections again.
func (p *Proxy) Heal() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = false
}

func (p *Proxy) accept() {
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.relay(in)
	}
}

// relay copies both ways between in and a new connection to the server.
func (p *Proxy) relay(in net.Conn) {
	p.mu.Lock()
	cut := p.cut
	p.mu.Unlock()
	if cut {
		_ = in.Close()
		return
	}
	out, err := net.Dial("tcp", p.target)
	if err != nil {
		_ = in.Close()
		return
	}
	p.mu.Lock()
	if p.cut {
		p.mu.Unlock()
		_ = in.Close()
		_ = out.Close()
		return
	}
	p.conns[in], p.conns[out] = struct{}{}, struct{}{}
	p.mu.Unlock()
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		_ = dst.Close()
		_ = src.Close()
		done <- struct{}{}
	}
	go pipe(out, in)
	go pipe(in, out)
	<-done
	<-done
	p.mu.Lock()
	delete(p.conns, in)
	delete(p.conns, out)
	p.mu.Unlock()
}
