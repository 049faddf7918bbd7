package controlplane_test

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	cp "github.com/jetgraph/jetgraph/engine/controlplane"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
)

// stuckBuilder is a Builder whose builds go on until their context ends: it tells when each
// started and when it stopped.
type stuckBuilder struct {
	started chan string    // revision ids
	stopped chan time.Time // when a build saw its context end
}

func (b *stuckBuilder) Build(ctx context.Context, spec cp.BuildSpec, log io.Writer) (cp.Artifact, error) {
	b.started <- spec.RevisionID
	<-ctx.Done()
	b.stopped <- time.Now()
	return cp.Artifact{}, ctx.Err()
}

// TestPipelineBuildStopsWithItsLease: a process cut off from the log in the middle of a build
// (its lease renewals fail) has the build cancelled before the deployment's lease can expire;
// only then does another process, still on the log, take the deployment over and build the
// revision again, and the first build writes no result.
func TestPipelineBuildStopsWithItsLease(t *testing.T) {
	url := eventlogtest.Server(t)
	proxy := eventlogtest.NewProxy(t, url)
	a := openPlaneOn(t, eventlogtest.OpenURLs(t, proxy.URL(), 1))
	b := openPlaneOn(t, eventlogtest.OpenURLs(t, url, 1))
	stuck := &stuckBuilder{started: make(chan string, 4), stopped: make(chan time.Time, 4)}
	a.start(t, cp.Ports{Builder: stuck, Deployer: newRecorder()})
	d := a.create(t, "app", "main")
	select {
	case <-stuck.started:
	case <-time.After(30 * time.Second):
		t.Fatal("the build never started")
	}
	next := newRecorder()
	close(next.release)
	b.start(t, cp.Ports{Builder: next, Deployer: next})

	cut := time.Now()
	proxy.Cut()
	var stopped time.Time
	select {
	case stopped = <-stuck.stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("the build goes on without its lease")
	}
	if took := stopped.Sub(cut); took > eventlog.GiveUpAfter(2*time.Second)+500*time.Millisecond {
		t.Errorf("the build stopped %v after the cut, want within %v", took, eventlog.GiveUpAfter(2*time.Second))
	}
	r := b.waitRevision(t, d.ID, *d.LatestRevisionID, cp.RevisionDeployed)
	// The other process built it once, after the first stopped: never two builds at once.
	if builds, _ := next.calls(); len(builds) != 1 {
		t.Fatalf("builds on the other process: %v, want the revision once", builds)
	}
	var resumed *cp.StatusChange
	for i, h := range r.StatusHistory {
		if h.Status == cp.RevisionBuildFailed {
			t.Fatalf("the cancelled build wrote a result: %s", statuses(r))
		}
		if h.Status == cp.RevisionBuilding && strings.HasPrefix(h.Note, "resumed by ") {
			resumed = &r.StatusHistory[i]
		}
	}
	if resumed == nil {
		t.Fatalf("history %s: no resumption by the other process", statuses(r))
	}
	if !stopped.Before(resumed.At) {
		t.Fatalf("the first build stopped at %v, after the other process resumed it at %v", stopped, resumed.At)
	}
	proxy.Heal() // before the logs close
}
