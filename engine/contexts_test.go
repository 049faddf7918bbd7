package engine_test

import (
	"errors"
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The bounded contexts of the tree (README, Layout) and the one rule between them: the runtime,
// tracing and the control plane never import each other, except the self-tracing bridge, which the runtime
// drives through an interface it owns (runs.Streamer), and the few edges of allowedEdges into
// what the runtime's packages still share with every context (the projector machinery, the
// server's request kit). The shared kernel imports no context; the assembly imports them all.
const (
	kernel   = "kernel"   // ids, errors, tenant, time, messages; the event log
	runtime  = "runtime"  // threads, assistants, runs, checkpoints, store, graphs and their folds and handlers
	tracing  = "tracing"  // LLM tracing: ingestion, normalisation, queries, its folds and handlers
	control  = "control"  // the deployment control plane: deployments, revisions, builds, deploys, keys
	bridge   = "bridge"   // the runtime tracing itself: may import both
	assembly = "assembly" // wiring of a process: may import everything; only tests import it
)

// contextOf places the module's packages (paths relative to the module): the longest prefix
// wins; an entry ending in "/" holds only the packages below it, so a new package there must be
// placed here before the test passes.
var contextOf = map[string]string{
	"engine":                   kernel,
	"eventlog":                 kernel,
	"eventlog/":                kernel,
	"engine/goldentest":        kernel, // the tests' golden files, whatever their context
	"engine/jsoncount":         kernel, // the run path's JSON counters, read by the count benchmark
	"engine/graph":             runtime,
	"engine/graphs":            runtime,
	"engine/hosting":           runtime,
	"engine/model":             runtime,
	"engine/embedding":         runtime,
	"engine/threads":           runtime,
	"engine/owners":            runtime,
	"engine/assistants":        runtime,
	"engine/crons":             runtime,
	"engine/store":             runtime,
	"engine/runner":            runtime,
	"engine/runs":              runtime,
	"engine/checkpoints":       runtime,
	"engine/streaming":         runtime,
	"engine/threadstream":      runtime,
	"engine/webhooks":          runtime,
	"engine/truncate":          runtime,
	"engine/command":           runtime,
	"engine/replay":            runtime,
	"engine/extract":           runtime, // the paths of a thread search's extract
	"projections":              runtime,
	"projections/":             runtime,
	"httpapi":                  runtime,
	"httpapi/":                 runtime,
	"httpapi/a2a":              runtime, // the A2A protocol over the runtime's services
	"engine/tracing":           tracing,
	"engine/tracing/":          tracing,
	"projections/traces":       tracing,
	"httpapi/tracingapi":       tracing,
	"engine/tracing/selftrace": bridge,
	"engine/controlplane":      control,
	"engine/controlplane/":     control,
	"projections/deployments":  control,
	"projections/deployments/deploymentstest": control, // the control projection for the control plane's tests
	"httpapi/controlapi":                      control,
	"httpapi/routewalk":                       assembly, // the route walk: the whole server (runtime, tracing, control plane) in one test
	"engine/platform":                         assembly,
	"engine/platform/":                        assembly,
	"cmd/":                                    assembly,
	"scenarios":                               assembly,
	"scenarios/examples/":                     assembly, // example programs built on cli.Main
	"":                                        assembly, // the module's root package, if any: a process's entry point
}

// allowedEdges are the imports between the runtime and tracing that the rule allows, with why.
var allowedEdges = map[[2]string]string{
	{"projections/traces", "projections"}:                                      "the projector machinery (cursor, batches, rebuild) and its record helpers",
	{"engine/tracing", "projections"}:                                          "the projector machinery: a write waits for its projector",
	{"httpapi/tracingapi", "httpapi"}:                                          "the server's request kit (kit.go); its one error mapping answers the handlers' errors",
	{"projections/deployments", "projections"}:                                 "the projector machinery (cursor, batches, rebuild) and its record helpers",
	{"httpapi/controlapi", "httpapi"}:                                          "the server's request kit (kit.go); its one error mapping answers the handlers' errors",
	{"projections/deployments/deploymentstest", "projections"}:                 "the projector machinery, run for the control plane's tests",
	{"projections/deployments/deploymentstest", "projections/projectionstest"}: "the helpers every context's fold tests share",
}

// allowedTestEdges are the edges only tests take.
var allowedTestEdges = map[[2]string]string{
	{"projections/traces", "projections/projectionstest"}:      "the helpers every context's fold tests share",
	{"httpapi/tracingapi", "httpapi/httpapitest"}:              "the OpenAPI contract check every handler test's server goes through",
	{"httpapi", "httpapi/tracingapi"}:                          "the docs test checks the one document against every route the server can mount",
	{"projections/deployments", "projections/projectionstest"}: "the helpers every context's fold tests share",
	{"httpapi/controlapi", "httpapi/httpapitest"}:              "the OpenAPI contract check every handler test's server goes through",
	{"httpapi", "httpapi/controlapi"}:                          "the docs test checks the one document against every route the server can mount",
}

// place is the context of the package at rel, "" when it has none.
func place(rel string) string {
	best, ctx := -1, ""
	for prefix, c := range contextOf {
		var match bool
		if strings.HasSuffix(prefix, "/") {
			match = strings.HasPrefix(rel, prefix)
		} else {
			match = rel == prefix
		}
		if match && len(prefix) > best {
			best, ctx = len(prefix), c
		}
	}
	return ctx
}

// edgeProblem says why from may not import to ("" when it may); test: the import is a test's.
func edgeProblem(from, to string, test bool) string {
	cf, ct := place(from), place(to)
	switch {
	case cf == "":
		return from + " is in no bounded context: place it in contextOf"
	case ct == "":
		return to + " is in no bounded context: place it in contextOf"
	case cf == ct, cf == assembly:
		return ""
	case ct == assembly:
		if test {
			return "" // a test may start a whole process
		}
		return "only the assembly and tests import " + to
	case ct == kernel:
		return ""
	case cf == kernel:
		return "the shared kernel imports no context"
	case cf == bridge && (ct == runtime || ct == tracing):
		return ""
	case ct == bridge:
		return "only the assembly wires the self-tracing bridge"
	}
	if _, ok := allowedEdges[[2]string{from, to}]; ok {
		return ""
	}
	if _, ok := allowedTestEdges[[2]string{from, to}]; ok && test {
		return ""
	}
	return cf + " imports " + ct + ": the contexts meet only through interfaces their users own (runtime and tracing through the bridge, engine/tracing/selftrace)"
}

func TestEdgeProblem(t *testing.T) {
	cases := []struct {
		from, to string
		test     bool
		ok       bool
	}{
		{"engine/runs", "engine/threads", false, true},
		{"engine/runs", "engine", false, true},
		{"engine/runs", "engine/tracing", false, false},
		{"engine/runs", "engine/tracing/trace", false, false},
		{"projections", "projections/traces", false, false},
		{"httpapi", "httpapi/tracingapi", false, false},
		{"httpapi", "engine/tracing", false, false},
		{"engine/tracing", "engine/runs", false, false},
		{"engine/tracing/trace", "engine/graph", false, false},
		{"projections/traces", "projections", false, true},
		{"projections/traces", "projections/projectionstest", false, false},
		{"projections/traces", "projections/projectionstest", true, true},
		{"httpapi", "httpapi/tracingapi", true, true},
		{"httpapi/tracingapi", "httpapi", false, true},
		{"engine/tracing/selftrace", "engine/graph", false, true},
		{"engine/tracing/selftrace", "engine/tracing", false, true},
		{"engine/runs", "engine/tracing/selftrace", false, false},
		{"engine", "engine/tracing", false, false},
		{"eventlog", "engine/runs", false, false},
		{"engine/platform", "engine/tracing/selftrace", false, true},
		{"engine/runs", "engine/platform", false, false},
		{"engine/runs", "engine/platform/platformtest", true, true},
		{"engine/newthing", "engine", false, false},
		{"engine/tracing/newthing", "engine/tracing/trace", false, true},
		{"engine/controlplane/build", "engine/controlplane", false, true},
		{"engine/controlplane", "engine/runs", false, false},
		{"engine/controlplane", "engine/tracing", false, false},
		{"engine/runs", "engine/controlplane", false, false},
		{"httpapi/controlapi", "httpapi", false, true},
		{"projections/deployments", "projections/threads", false, false},
	}
	for _, c := range cases {
		if got := edgeProblem(c.from, c.to, c.test); (got == "") != c.ok {
			t.Errorf("%s -> %s (test %v): %q, want allowed %v", c.from, c.to, c.test, got, c.ok)
		}
	}
}

// TestBoundedContexts walks the imports of every package of the module, its tests' included,
// and fails on each one the rule forbids.
func TestBoundedContexts(t *testing.T) {
	root, module := moduleRoot(t)
	checked := 0
	err := filepath.WalkDir(root, func(dir string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if name := d.Name(); dir != root && (name == "testdata" || name == "node_modules" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			return filepath.SkipDir
		}
		pkg, err := build.ImportDir(dir, 0)
		var none *build.NoGoError
		if errors.As(err, &none) {
			return nil
		}
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, dir)
		from := filepath.ToSlash(rel)
		if from == "." {
			from = ""
		}
		checked++
		for _, imports := range []struct {
			list []string
			test bool
		}{{pkg.Imports, false}, {pkg.TestImports, true}, {pkg.XTestImports, true}} {
			for _, imp := range imports.list {
				to, ok := strings.CutPrefix(imp, module)
				if !ok || to != "" && !strings.HasPrefix(to, "/") {
					continue // not the module's
				}
				to = strings.TrimPrefix(to, "/")
				if to == from {
					continue // an external test package of its own package
				}
				if p := edgeProblem(from, to, imports.test); p != "" {
					t.Errorf("%s imports %s (test: %v): %s", from, to, imports.test, p)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 20 {
		t.Fatalf("only %d packages found under %s: the walk is broken", checked, root)
	}
}

// moduleRoot is the folder of go.mod above the test's folder, and the module's path.
func moduleRoot(t *testing.T) (dir, module string) {
	t.Helper()
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil {
			for line := range strings.Lines(string(data)) {
				if m, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
					return dir, strings.TrimSpace(m)
				}
			}
			t.Fatal("go.mod names no module")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test")
		}
		dir = parent
	}
}
