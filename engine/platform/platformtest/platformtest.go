// Package platformtest starts platforms for tests: real ones, on an embedded JetStream log, with
// their files in a folder of the test's own.
package platformtest

import (
	"context"
	"testing"

	"github.com/jetgraph/jetgraph/engine/platform"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
)

// Start opens a platform as cfg says on l and starts it; it is closed when the test ends.
// Without cfg.Data its files go in a temporary folder; without l it runs on an embedded log of
// its own.
func Start(t testing.TB, cfg platform.Config, l *eventlog.Log) *platform.Platform {
	t.Helper()
	return StartWith(t, cfg, l, nil)
}

// StartWith is Start with before called on the platform between its opening and its start
// (to set what must be set before its projectors run).
func StartWith(t testing.TB, cfg platform.Config, l *eventlog.Log, before func(*platform.Platform)) *platform.Platform {
	t.Helper()
	ctx := context.Background()
	if cfg.Data == "" {
		cfg.Data = t.TempDir()
	}
	if l == nil {
		l = eventlogtest.Open(t)
	}
	p, err := platform.Open(ctx, cfg, l)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	if before != nil {
		before(p)
	}
	if err := p.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return p
}
