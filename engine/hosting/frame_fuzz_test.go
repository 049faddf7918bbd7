package hosting

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
)

// FuzzHostOutput feeds arbitrary host output to the frame reader: whatever a host writes, the
// reader neither panics nor blocks, and a request only ever gets its own frames.
func FuzzHostOutput(f *testing.F) {
	for _, seed := range []string{
		`{"t":"hello","protocol":1,"graphs":{}}` + "\n" + `{"t":"event","id":"r1","mode":"values","ns":[],"data":{"a":1}}` + "\n" + `{"t":"done","id":"r1","result":{}}`,
		`{"t":"call","id":"c1","req":"r1","method":"checkpoint.get","params":{"ref":{}}}`,
		`{"t":"done","id":"nope","error":{"class":"X","message":"y"}}`,
		"not json\n{}\n\n{\"t\":3}",
		`{"t":"event","id":"r1","ns":"x"}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, out string) {
		h := &Host{cfg: Config{Language: "python"}, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
		p := &proc{h: h, in: nopWriteCloser{}, reqs: map[string]*request{}}
		events := 0
		req := &request{ctx: context.Background(), done: make(chan frame, 1),
			onEvent: func(string, []string, json.RawMessage) { events++ },
			onCall:  func(context.Context, string, json.RawMessage) (any, error) { return nil, nil }}
		p.reqs["r1"] = req
		helloc := make(chan hello, 1)
		p.read(bufio.NewReader(strings.NewReader(out)), helloc)
		select {
		case f := <-req.done:
			if f.ID != "r1" {
				t.Errorf("request r1 got the end of %q", f.ID)
			}
		default:
		}
	})
}

type nopWriteCloser struct{}

func (nopWriteCloser) Write(p []byte) (int, error) { return len(p), nil }
func (nopWriteCloser) Close() error                { return nil }
