// Package projectionstest holds what the tests of every context's folds share: a projection
// file closed when the test ends, a projector run in the background, a dump of a projection's
// buckets as text and its comparison with a golden file.
package projectionstest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/jetgraph/jetgraph/projections"
)

// OpenDB opens the projection file at path and closes it when the test ends.
func OpenDB(t testing.TB, path string) *projections.DB {
	t.Helper()
	db, err := projections.OpenDB(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Registered before any projector's stop, so it runs after it.
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// Run runs p until the test ends or the returned stop is called.
func Run(t testing.TB, p *projections.Projector) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = p.Run(ctx) }()
	stop = func() { cancel(); <-done }
	t.Cleanup(stop)
	return stop
}

// WaitFor waits until p has folded the event at seq.
func WaitFor(t testing.TB, p *projections.Projector, seq uint64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := p.WaitFor(ctx, seq); err != nil {
		t.Fatal(err)
	}
}

// RecordText renders a record of a projection's binary forms as text (ok false: not one of
// them), for the dumps of projections that store more than JSON.
type RecordText func(bucket string, v []byte) (text string, ok bool, err error)

// Dump renders the buckets of ps in db as text, key by key: a record as text renders it, else
// JSON as it is, else quoted.
func Dump(t testing.TB, db *projections.DB, text RecordText, ps ...projections.Projection) string {
	t.Helper()
	var b strings.Builder
	err := db.View(func(tx *bbolt.Tx) error {
		for _, p := range ps {
			for _, name := range p.Buckets() {
				fmt.Fprintf(&b, "[%s]\n", name)
				err := tx.Bucket([]byte(name)).ForEach(func(k, v []byte) error {
					var s string
					ok := false
					if text != nil {
						var err error
						if s, ok, err = text(name, v); err != nil {
							return fmt.Errorf("%s %q: %w", name, k, err)
						}
					}
					switch {
					case ok:
						fmt.Fprintf(&b, "%q = %s\n", k, s)
					case len(v) > 1 && json.Valid(v):
						fmt.Fprintf(&b, "%q = %s\n", k, v)
					default:
						fmt.Fprintf(&b, "%q = %q\n", k, v)
					}
					return nil
				})
				if err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}
