package tracingapi_test

import (
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/engine/platform"
	"github.com/jetgraph/jetgraph/engine/tracing/forward"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
	"github.com/jetgraph/jetgraph/httpapi"
	"github.com/jetgraph/jetgraph/httpapi/httpapitest"
)

// taggedTransport names the forwarder a request comes from.
type taggedTransport struct{ name string }

func (tt taggedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Test-Forwarder", tt.name)
	return http.DefaultTransport.RoundTrip(r)
}

// TestForwarderStopsWithItsLease: a forwarder cut off from the log while it sends a batch
// (the target is slow) stops sending it before the batch's AckWait can run out; only then does
// another forwarder of the same target, still on the log, read the batch again and send it.
func TestForwarderStopsWithItsLease(t *testing.T) {
	const ackWait = 2 * time.Second
	url := eventlogtest.Server(t)
	proxy := eventlogtest.NewProxy(t, url)
	direct := eventlogtest.OpenURLs(t, url, 1)
	src := startTracingOn(t, platform.TracingConfig{}, direct)

	var mu sync.Mutex
	var sentBy []string          // the forwarder of each request with the root's post
	var stopped, other time.Time // when the cut-off forwarder's request ended; the other's came
	blocked := make(chan struct{}, 1)
	var rootPart string
	// The target stands for another LangSmith endpoint, an API jetgraph's document does not
	// describe: every request passes unchecked.
	target := httpapitest.NewServerPassing(t, httpapi.OpenAPI(), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		by := r.Header.Get("X-Test-Forwarder")
		mu.Lock()
		part := rootPart
		mu.Unlock()
		if part == "" || !strings.Contains(string(body), part) {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		mu.Lock()
		sentBy = append(sentBy, by)
		if by == "other" && other.IsZero() {
			other = time.Now()
		}
		mu.Unlock()
		if by == "cut-off" {
			// A target slow to answer: the request lasts until the forwarder gives it up.
			blocked <- struct{}{}
			<-r.Context().Done()
			mu.Lock()
			stopped = time.Now()
			mu.Unlock()
			return
		}
		w.WriteHeader(http.StatusAccepted)
	}), "/")
	cfg := func(name string) forward.Config {
		return forward.Config{URL: target.URL, Project: "forwarded", AckWait: ackWait,
			Client: &http.Client{Transport: taggedTransport{name}}, Logger: slog.New(slog.DiscardHandler)}
	}
	cutOff := eventlogtest.OpenURLs(t, proxy.URL(), 1)
	f, err := forward.New(cutOff, src.P.TraceObjects, cfg("cut-off"))
	if err != nil {
		t.Fatal(err)
	}
	stopA := runForwarderOf(t, f)
	defer stopA()

	// The root is known to the target before it is posted: a forwarder may send it at once.
	root, child := newTrace("source-project")
	mu.Lock()
	rootPart = `name="post.` + root["id"].(string) + `"`
	mu.Unlock()
	src.postRuns(t, root, child)
	select {
	case <-blocked:
	case <-time.After(30 * time.Second):
		t.Fatal("the root was never sent")
	}
	g, err := forward.New(direct, src.P.TraceObjects, cfg("other"))
	if err != nil {
		t.Fatal(err)
	}
	runForwarderOf(t, g)

	cut := time.Now()
	proxy.Cut()
	deadline := time.Now().Add(30 * time.Second)
	for {
		mu.Lock()
		done := !other.IsZero()
		mu.Unlock()
		if done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the other forwarder never sent the batch")
		}
		time.Sleep(20 * time.Millisecond)
	}
	mu.Lock()
	stopped, other, by := stopped, other, strings.Join(sentBy, ",")
	mu.Unlock()
	proxy.Heal() // before the logs close
	if stopped.IsZero() {
		t.Fatalf("the other forwarder sent the batch %v after the cut while the cut-off one still sends it", other.Sub(cut))
	}
	if !stopped.Before(other) {
		t.Fatalf("the cut-off forwarder stopped at +%v, the other sent at +%v", stopped.Sub(cut), other.Sub(cut))
	}
	if took := stopped.Sub(cut); took > eventlog.GiveUpAfter(ackWait)+500*time.Millisecond {
		t.Errorf("the cut-off forwarder stopped %v after the cut, want within %v", took, eventlog.GiveUpAfter(ackWait))
	}
	if by != "cut-off,other" {
		t.Errorf("the root was sent by %s, want the cut-off forwarder then the other", by)
	}
}
