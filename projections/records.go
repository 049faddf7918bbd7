package projections

import (
	"fmt"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"

	"go.etcd.io/bbolt"

	"github.com/jetgraph/jetgraph/engine/jsoncount"
	"github.com/jetgraph/jetgraph/eventlog"
)

// putJSON stores v as JSON under key.
func putJSON(b *bbolt.Bucket, key []byte, v any) error {
	jsoncount.Encoded()
	raw, err := jsonv1.Marshal(v)
	if err != nil {
		return err
	}
	return b.Put(key, raw)
}

// PutJSON is putJSON for the folds of the contexts' sub-packages (projections/traces).
func PutJSON(b *bbolt.Bucket, key []byte, v any) error { return putJSON(b, key, v) }

// GetJSON is getJSON for the folds of the contexts' sub-packages (projections/traces).
func GetJSON(b *bbolt.Bucket, key []byte, v any) (bool, error) { return getJSON(b, key, v) }

// getJSON reads the JSON under key into v and reports whether it was there.
func getJSON(b *bbolt.Bucket, key []byte, v any) (bool, error) {
	raw := b.Get(key)
	if raw == nil {
		return false, nil
	}
	return true, decodeJSON(raw, v)
}

// readOptions make the v2 decoder read what encoding/json reads: records and events may hold a
// client's JSON passed through as it came, with invalid UTF-8 or a name twice.
var readOptions = jsonv2.JoinOptions(jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true))

// decodeJSON decodes what the folds read (event payloads, records) with the v2 engine of
// go-json-experiment/json, about twice as fast as encoding/json at it. Everything it reads was
// written by encoding/json or putJSON, with exact field names.
func decodeJSON(data []byte, v any) error {
	jsoncount.Decoded()
	return jsonv2.Unmarshal(data, v, readOptions)
}

// orMissing returns err, or an error saying e names a record the projection does not have.
func orMissing(err error, e eventlog.Event) error {
	if err != nil {
		return err
	}
	return fmt.Errorf("%s %s: no such %s", e.Type, e.Aggregate, e.Aggregate.Kind)
}

// orEmpty returns m, or an empty map for nil so that records never hold JSON null objects.
func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// anyMap widens m for engine.Contains.
func anyMap(m map[string]any) any { return m }

// page returns the slice of items from offset, at most limit long (limit <= 0: no limit).
func page[T any](items []T, offset, limit int) []T {
	if offset >= len(items) {
		return []T{}
	}
	items = items[offset:]
	if limit > 0 && limit < len(items) {
		items = items[:limit]
	}
	return items
}
