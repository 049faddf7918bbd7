package cli

import (
	"net"
	"strings"
	"testing"
)

// The hosts reach jetgraph's tracing API on the address it listens on, by loopback when it
// listens on every interface, with a key of this process's own.
func TestHostTracingOf(t *testing.T) {
	for _, tt := range []struct{ addr, want string }{
		{"127.0.0.1:8123", "http://127.0.0.1:8123/tracing"},
		{"0.0.0.0:8123", "http://127.0.0.1:8123/tracing"},
		{"[::]:8123", "http://[::1]:8123/tracing"},
		{"[::1]:9000", "http://[::1]:9000/tracing"},
		{"192.168.1.5:80", "http://192.168.1.5:80/tracing"},
	} {
		addr, err := net.ResolveTCPAddr("tcp", tt.addr)
		if err != nil {
			t.Fatal(err)
		}
		got, err := hostTracingOf(addr)
		if err != nil {
			t.Fatal(err)
		}
		if got.URL != tt.want {
			t.Errorf("%s: URL %q, want %q", tt.addr, got.URL, tt.want)
		}
		if !strings.HasPrefix(got.Key, "jgh_") || len(got.Key) < 30 {
			t.Errorf("%s: key %q", tt.addr, got.Key)
		}
	}
	a, _ := hostTracingOf(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1})
	b, _ := hostTracingOf(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1})
	if a.Key == b.Key {
		t.Error("two processes' keys are the same")
	}
}
