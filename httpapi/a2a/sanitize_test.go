package a2a

import (
	"strings"
	"testing"
)

func TestSanitize(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		{"plain text stays", "Boo! the value was 3.5", "Boo! the value was 3.5"},
		{"a connection string", "dial postgres://u:p@db:5432/x failed", "dial <redacted> failed"},
		{"any URL", "GET https://api.example.com/v1/x?key=1: 500", "GET <redacted>: 500"},
		{"an address", "dial tcp 10.0.0.7:4222: refused", "dial tcp <redacted>: refused"},
		{"a host with a port", "nats-0:4222 did not answer", "<redacted> did not answer"},
		{"an internal host name", "lookup redis.prod.internal: no such host", "lookup <redacted>: no such host"},
		{"a cluster service", "redis.cache.svc.cluster.local refused", "<redacted> refused"},
		{"an IPv6 address", "dial [fd00::1]:80: refused", "dial <redacted>: refused"},
		{"a path", "open /var/lib/jetgraph/nats/x: permission denied", "open <redacted>: permission denied"},
		{"a quoted path", `read "/etc/app/secret.json"`, `read "<redacted>"`},
		{"a word with a slash stays", "either/or and 3/4", "either/or and 3/4"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Sanitize(tc.in); got != tc.want {
				t.Errorf("Sanitize(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// FuzzReadRequest feeds arbitrary bodies to the JSON-RPC envelope and message checks: they
// never panic, a refusal is a JSON-RPC error code, and an accepted request has its method.
func FuzzReadRequest(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"role":"user","messageId":"m","parts":[{"kind":"text","text":"hi"}]}}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":"a","method":"tasks/get","params":{"id":"x"}}`))
	f.Add([]byte(`[1,2]`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":{},"method":1,"params":"x"}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"parts":[{"kind":"file","file":{}},{"kind":"data"}],"contextId":"c"}}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		req, rerr := readRequest(body)
		if rerr != nil {
			if rerr.Code != CodeParseError && rerr.Code != CodeInvalidRequest {
				t.Fatalf("envelope error code %d", rerr.Code)
			}
			return
		}
		if req.Method == "" || req.JSONRPC != "2.0" {
			t.Fatalf("accepted %q without a method", body)
		}
		for _, v := range []version{v03, v10} {
			p, rerr := decodeSend(req.Params, v)
			if rerr != nil {
				if rerr.Code != CodeInvalidParams {
					t.Fatalf("params error code %d", rerr.Code)
				}
				continue
			}
			for _, pr := range checkMessage(p.Message, v) {
				if len(pr.Loc) < 2 || pr.Msg == "" || !strings.HasPrefix(locString(pr.Loc), "params.message") {
					t.Fatalf("problem %+v", pr)
				}
			}
		}
		_ = Sanitize(string(body))
	})
}
