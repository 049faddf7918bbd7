package checkpoints_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/jetgraph/jetgraph/engine/checkpoints"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
	"github.com/jetgraph/jetgraph/projections"
)

// env is a log-backed saver on a real embedded log, with the threads and checkpoints
// projections kept current by a running projector.
type env struct {
	log     *eventlog.Log
	db      *projections.DB
	proj    *projections.Projector
	view    *projections.Checkpoints
	threads *projections.Threads
	saver   *checkpoints.Saver
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func open(t testing.TB) *env {
	t.Helper()
	l := eventlogtest.Open(t)
	db, err := projections.OpenDB(filepath.Join(t.TempDir(), "p.db"), quiet())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	e := &env{log: l, db: db, view: projections.NewCheckpoints(db), threads: projections.NewThreads(db)}
	e.proj = projections.NewProjector(db, l, eventlog.RuntimeStream, e.threads, e.view)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = e.proj.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	if err := e.proj.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	e.saver = checkpoints.New(l, e.proj, e.view)
	return e
}

// events returns the decoded checkpoint and writes events of a thread, in log order.
func (e *env) events(t testing.TB, tenant, thread string) []any {
	t.Helper()
	evs, err := e.log.Load(context.Background(), checkpoints.Aggregate(tenant, thread))
	if err != nil {
		t.Fatal(err)
	}
	var out []any
	for _, ev := range evs {
		v, err := checkpoints.Decode(ev)
		if err != nil {
			t.Fatal(err)
		}
		if v != nil {
			out = append(out, v)
		}
	}
	return out
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	raw, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

var (
	uuidRe      = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	interruptRe = regexp.MustCompile(`"[0-9a-f]{32}"`)
	timeRe      = regexp.MustCompile(`"\d{4}-\d\d-\d\dT[0-9:.]+(Z|[+-]\d\d:\d\d)"`)
)

// normalize replaces what differs between two identical runs (ids, times) by placeholders
// numbered in order of appearance, so that the JSON of two runs can be compared.
func normalize(s string) string {
	s = strings.ReplaceAll(s, bigContent, "<big>") // faster through the regular expressions
	number := func(s string, re *regexp.Regexp, format func(n int) string) string {
		seen := map[string]string{}
		return re.ReplaceAllStringFunc(s, func(m string) string {
			if _, ok := seen[m]; !ok {
				seen[m] = format(len(seen))
			}
			return seen[m]
		})
	}
	s = number(s, uuidRe, func(n int) string { return "uuid-" + strconv.Itoa(n) })
	s = number(s, interruptRe, func(n int) string { return `"interrupt-` + strconv.Itoa(n) + `"` })
	return timeRe.ReplaceAllString(s, `"<time>"`)
}
