// Package deploymentstest opens the control projection on a log for the control plane's tests,
// so that they need nothing of the projector machinery themselves.
package deploymentstest

import (
	"path/filepath"
	"testing"

	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/projections"
	"github.com/jetgraph/jetgraph/projections/deployments"
	"github.com/jetgraph/jetgraph/projections/projectionstest"
)

// Open folds l's control stream into a projection file of the test, running until it ends.
func Open(t testing.TB, l *eventlog.Log) (*deployments.View, *projections.Projector) {
	t.Helper()
	db := projectionstest.OpenDB(t, filepath.Join(t.TempDir(), "controlplane.db"))
	view := deployments.New(db)
	proj := projections.NewProjector(db, l, eventlog.ControlStream, view)
	projectionstest.Run(t, proj)
	return view, proj
}
