package projections

import (
	"bytes"
	"errors"

	"go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/eventlog"
)

// What the projections take from a truncation (engine.Truncated, the dev server's
// /internal/truncate): each empties its buckets when a flag names it, in the transaction of the
// event, so that a truncation is folded whole or not at all, and at the same place on a rebuild.

// truncation reports whether e is a truncation, and reads it.
func truncation(e eventlog.Event) (engine.TruncatedData, bool, error) {
	if e.Aggregate.Kind != engine.SystemKind || e.Type != engine.Truncated {
		return engine.TruncatedData{}, false, nil // (every event asks: no allocation)
	}
	d, err := decodeTruncation(e.Data)
	return d, true, err
}

func decodeTruncation(data []byte) (engine.TruncatedData, error) {
	var d engine.TruncatedData
	err := decodeJSON(data, &d)
	return d, err
}

// onTruncate folds e when it is a truncation: it empties buckets when flag says the truncation
// names them. handled is false for any other event.
func onTruncate(tx *bbolt.Tx, e eventlog.Event, flag func(engine.TruncatedData) bool, buckets ...string) (handled bool, err error) {
	d, ok, err := truncation(e)
	if !ok || err != nil {
		return ok, err
	}
	if !flag(d) {
		return true, nil
	}
	return true, emptyBuckets(tx, buckets...)
}

// emptyBuckets drops and creates again each bucket of names.
func emptyBuckets(tx *bbolt.Tx, names ...string) error {
	for _, name := range names {
		if err := tx.DeleteBucket([]byte(name)); err != nil && !errors.Is(err, berrors.ErrBucketNotFound) {
			return err
		}
		b, err := tx.CreateBucket([]byte(name))
		if err != nil {
			return err
		}
		b.FillPercent = fillPercent
	}
	return nil
}

// keepOnly removes the assistants (and their versions) whose ids are not in keep, in every tenant.
func keepOnly(tx *bbolt.Tx, keep []string) error {
	kept := map[string]bool{}
	for _, id := range keep {
		kept[id] = true
	}
	var gone [][]byte
	c := fillBucket(tx, assistantsBucket).Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		if i := bytes.IndexByte(k, '/'); i < 0 || !kept[string(k[i+1:])] {
			gone = append(gone, bytes.Clone(k))
		}
	}
	for _, k := range gone {
		if err := fillBucket(tx, assistantsBucket).Delete(k); err != nil {
			return err
		}
		if err := deletePrefix(fillBucket(tx, assistantVersionsBucket), append(k, '/')); err != nil {
			return err
		}
	}
	return nil
}
