package traces_test

import (
	"path/filepath"
	"testing"

	"github.com/jetgraph/jetgraph/engine/goldentest"
	"github.com/jetgraph/jetgraph/projections"
	"github.com/jetgraph/jetgraph/projections/projectionstest"
	"github.com/jetgraph/jetgraph/projections/traces"
)

func openDB(t *testing.T, path string) *projections.DB {
	t.Helper()
	return projectionstest.OpenDB(t, path)
}

func run(t *testing.T, p *projections.Projector) func() {
	t.Helper()
	return projectionstest.Run(t, p)
}

func waitFor(t *testing.T, p *projections.Projector, seq uint64) {
	t.Helper()
	projectionstest.WaitFor(t, p, seq)
}

// dump renders every bucket the projections own, in key order, the trace projection's binary
// records as text.
func dump(t *testing.T, db *projections.DB, ps ...projections.Projection) string {
	t.Helper()
	return projectionstest.Dump(t, db, traces.TraceRecordText, ps...)
}

// checkGolden compares got with testdata/name (goldentest rewrites it).
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	goldentest.Check(t, filepath.Join("testdata", name), []byte(got))
}
