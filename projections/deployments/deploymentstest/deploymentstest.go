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
	return OpenAt(t, l, filepath.Join(t.TempDir(), "controlplane.db"), nil)
}

// OpenAt is Open with the projection file at path (a test that reads the file's bytes), and
// setup, when not nil, called on the view before the projector folds anything (to seal the
// secrets it folds, say).
func OpenAt(t testing.TB, l *eventlog.Log, path string, setup func(*deployments.View)) (*deployments.View, *projections.Projector) {
	t.Helper()
	db := projectionstest.OpenDB(t, path)
	view := deployments.New(db)
	if setup != nil {
		setup(view)
	}
	proj := projections.NewProjector(db, l, eventlog.ControlStream, view)
	projectionstest.Run(t, proj)
	return view, proj
}

// Restartable is a control projection file whose projector a test stops and starts again, as a
// process that stops and starts does.
type Restartable struct {
	View *deployments.View
	db   *projections.DB
	log  *eventlog.Log
}

// OpenRestartable opens a control projection file of the test on l; Start runs its projector.
func OpenRestartable(t testing.TB, l *eventlog.Log) *Restartable {
	t.Helper()
	db := projectionstest.OpenDB(t, filepath.Join(t.TempDir(), "controlplane.db"))
	return &Restartable{View: deployments.New(db), db: db, log: l}
}

// Start runs a new projector on the file until stop is called or the test ends.
func (r *Restartable) Start(t testing.TB) (proj *projections.Projector, stop func()) {
	t.Helper()
	proj = projections.NewProjector(r.db, r.log, eventlog.ControlStream, r.View)
	return proj, projectionstest.Run(t, proj)
}
