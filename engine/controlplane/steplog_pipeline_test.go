package controlplane_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	cp "github.com/jetgraph/jetgraph/engine/controlplane"
	"github.com/jetgraph/jetgraph/engine/controlplane/build"
	"github.com/jetgraph/jetgraph/engine/controlplane/cptest"
	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
	"github.com/jetgraph/jetgraph/projections/deployments/deploymentstest"
)

// TestPipelineStreamsTheBuildLog builds a Go module revision whose build_command prints, then
// waits for a file the test makes: the revision's log shows the first output while it still
// builds, and once it is deployed the log holds every line once.
func TestPipelineStreamsTheBuildLog(t *testing.T) {
	p := openPlane(t)
	objs, err := p.log.OpenObjects(context.Background(), "TEST_REVISIONS", 0)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	gate := filepath.Join(dir, "gate")
	// The program only has to pass `config check`: a script that names the graph.
	program := filepath.Join(dir, "program")
	if err := os.WriteFile(program, []byte("#!/bin/sh\necho agent\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	repo := filepath.Join(dir, "repo")
	cptest.Commit(t, repo, "main", map[string]string{"go.mod": "module example.com/agent\n", "graph.json": `{"graphs": {"agent": "echo"}}`})
	builder := &build.Builder{Dir: filepath.Join(dir, "builds"), Jetgraph: program, Objects: objs, Timeout: time.Minute}
	rec := newRecorder()
	p.start(t, cp.Ports{Builder: builder, Deployer: rec})

	d, err := p.svc.CreateDeployment(p.ctx, map[string]any{"name": "slow", "source": "git_host",
		"source_config": map[string]any{"repo_url": repo, "build_command": "echo 'step 'one: compiling; " + // quoted apart: the echoed command line is not its output
			"while [ ! -f " + gate + " ]; do sleep 0.05; done; echo 'step 'two: linking; cp " + program + " \"$JETGRAPH_BUILD_OUTPUT\""},
		"source_revision_config": map[string]any{"repo_ref": "main"}, "secrets": []any{}})
	if err != nil {
		t.Fatal(err)
	}
	rev := *d.LatestRevisionID
	deadline := time.After(30 * time.Second)
	for {
		ch := p.proj.Changed()
		text, err := p.svc.RevisionLog(p.ctx, d.ID, rev)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(text, "step one: compiling") {
			r, _ := p.svc.GetRevision(p.ctx, d.ID, rev)
			if r.Status != cp.RevisionBuilding || strings.Contains(text, "step two") {
				t.Fatalf("status %s, log %q: want the first output while the build waits", r.Status, text)
			}
			if !strings.Contains(r.LogTail, "step one: compiling") {
				t.Errorf("log_tail %q while building", r.LogTail)
			}
			break
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("the build's first output never reached the revision's log while it built: %q", text)
		}
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	p.waitRevision(t, d.ID, rev, cp.RevisionDeployed)
	text, _ := p.svc.RevisionLog(p.ctx, d.ID, rev)
	for _, line := range []string{"cloning " + repo, "step one: compiling", "step two: linking", "graphs: agent", "switched traffic"} {
		if n := strings.Count(text, line); n != 1 {
			t.Errorf("%q %d times in the log, want once:\n%s", line, n, text)
		}
	}
	if i, j := strings.Index(text, "step two"), strings.Index(text, "switched traffic"); i > j {
		t.Errorf("the build's output after the rollout's:\n%s", text)
	}
}

// TestPipelineStopsPromptlyMidBuild stops the pipeline and the projection together, as serve
// does, while a build runs: the build's output so far is appended without waiting for the
// stopped projection, and the resumed build's log holds the interrupted attempt's output once.
func TestPipelineStopsPromptlyMidBuild(t *testing.T) {
	l := eventlogtest.Open(t)
	file := deploymentstest.OpenRestartable(t, l)
	view := file.View
	proj, stopProj := file.Start(t)
	first := &plane{log: l, proj: proj, view: view, svc: cp.NewService(l, proj, view, nil, nil),
		ctx: engine.WithTenant(context.Background(), "6f1c6a56-8e0a-4c55-9d9f-7d6c4b0c7a01")}
	rec := newRecorder()
	stopPipe := first.start(t, cp.Ports{Builder: rec, Deployer: rec})
	d := first.create(t, "app", "hold")
	<-rec.building

	start := time.Now()
	stopProj()
	stopPipe()
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the pipeline took %v to stop mid-build", took)
	}

	proj, _ = file.Start(t)
	again := &plane{log: l, proj: proj, view: view, svc: cp.NewService(l, proj, view, nil, nil), ctx: first.ctx}
	next := newRecorder()
	close(next.release)
	again.start(t, cp.Ports{Builder: next, Deployer: next})
	again.waitRevision(t, d.ID, *d.LatestRevisionID, cp.RevisionDeployed)
	text, err := again.svc.RevisionLog(again.ctx, d.ID, *d.LatestRevisionID)
	if n := strings.Count(text, "cloning /repos/app at hold"); err != nil || n != 2 {
		t.Errorf("%d clones in the log, want 2 (the interrupted attempt's, the resumed one's): %v\n%s", n, err, text)
	}
}
