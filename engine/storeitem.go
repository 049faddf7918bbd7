package engine

import (
	"encoding/binary"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Item is one entry of the key-value store: a JSON object under a key in a namespace. It marshals
// to the wire shape of the LangGraph API.
type Item struct {
	Namespace []string       `json:"namespace"`
	Key       string         `json:"key"`
	Value     map[string]any `json:"value"`
	CreatedAt Time           `json:"created_at"`
	UpdatedAt Time           `json:"updated_at"`
	// Score is set only on the results of a search with a query.
	Score *float64 `json:"score,omitempty"`
}

// Store event types, stored on subject store.<tenant>.<item id>.<type>, where the item id is a
// hash of the namespace and key.
const (
	StorePut     = "put"
	StoreDeleted = "deleted"
	StoreTouched = "touched"
)

// StorePutData is the payload of StorePut: the whole item as the client gave it. A put replaces
// the value, the index setting and the time to live of an existing item; created_at is kept.
type StorePutData struct {
	Namespace []string       `json:"namespace"`
	Key       string         `json:"key"`
	Value     map[string]any `json:"value"`
	// Index is what a query searches: nil (the whole value), false (nothing) or a list of paths.
	Index any `json:"index,omitempty"`
	// TTL is the time to live in minutes, counted from the event; nil: the item never expires.
	TTL *float64 `json:"ttl,omitempty"`
	// Embedding names the embedding of Vectors (see engine/embedding: "local:256",
	// "openai:<model>"); empty when the item was put without a semantic index.
	Embedding string `json:"embedding,omitempty"`
	// Vectors are the embeddings of the indexed fields, computed when the put was accepted: they
	// are log data, so that a projection rebuilt from the log has them without calling an
	// embeddings server, and a put the server cannot embed is refused before it is appended.
	Vectors []StoreVector `json:"vectors,omitempty"`
}

// StoreVector is the embedding of the text at one path of an item's value.
type StoreVector struct {
	Path string `json:"path"`
	// Vector is the unit vector as little-endian float32s (base64 in JSON: a quarter of the
	// size of a list of numbers).
	Vector []byte `json:"vector"`
}

// PackVector encodes v as StoreVector.Vector does.
func PackVector(v []float32) []byte {
	out := make([]byte, 0, 4*len(v))
	for _, x := range v {
		out = binary.LittleEndian.AppendUint32(out, math.Float32bits(x))
	}
	return out
}

// UnpackVector decodes a StoreVector.Vector; a length that is not a multiple of 4 is nil.
func UnpackVector(b []byte) []float32 {
	if len(b)%4 != 0 {
		return nil
	}
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

// ValueAt returns the value at a path of an item's value: "$" or "" is the whole value, else
// dot-separated object keys; a [..] suffix on a segment (a list index or [*]) is ignored and the
// whole list taken. It returns false when the path leads nowhere.
func ValueAt(value map[string]any, path string) (any, bool) {
	if path == "$" || path == "" {
		return value, true
	}
	var v any = value
	for _, seg := range strings.Split(path, ".") {
		if i := strings.IndexByte(seg, '['); i >= 0 {
			seg = seg[:i]
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[seg]; !ok {
			return nil, false
		}
	}
	return v, v != nil
}

// StoreDeletedData is the payload of StoreDeleted. Reason is "ttl" when the sweeper deleted it.
type StoreDeletedData struct {
	Namespace []string `json:"namespace"`
	Key       string   `json:"key"`
	Reason    string   `json:"reason,omitempty"`
}

// StoreTouchedData is the payload of StoreTouched: a read refreshed the item's time to live, which
// now counts from the event.
type StoreTouchedData struct {
	Namespace []string `json:"namespace"`
	Key       string   `json:"key"`
}

// CheckNamespace enforces the label rule of the reference servers: every label is non-empty and
// holds no period. The detail is the reference text, the namespace printed as a Python tuple.
func CheckNamespace(op string, namespace []string) error {
	if len(namespace) > MaxNamespaceDepth {
		return E(Op(op), Invalid, fmt.Sprintf("A namespace has at most %d labels (MaxNamespaceDepth); this one has %d", MaxNamespaceDepth, len(namespace)))
	}
	for _, l := range namespace {
		if l == "" || strings.Contains(l, ".") {
			return E(Op(op), Invalid, "Namespace labels cannot be empty or contain periods. Received: "+PyTuple(namespace))
		}
		if len(l) > MaxNamespaceLabelBytes {
			return E(Op(op), Invalid, fmt.Sprintf("A namespace label is at most %d bytes (MaxNamespaceLabelBytes); one has %d", MaxNamespaceLabelBytes, len(l)))
		}
	}
	return nil
}

// PyTuple renders labels as Python prints a tuple of strings: (), ('a',), ('a', 'b').
func PyTuple(labels []string) string {
	var b strings.Builder
	b.WriteByte('(')
	for i, l := range labels {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(pyRepr(l))
	}
	if len(labels) == 1 {
		b.WriteByte(',')
	}
	b.WriteByte(')')
	return b.String()
}

// pyRepr quotes s as Python's repr does.
func pyRepr(s string) string {
	quote := byte('\'')
	if strings.Contains(s, "'") && !strings.Contains(s, `"`) {
		quote = '"'
	}
	var b strings.Builder
	b.WriteByte(quote)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\\' || r == rune(quote):
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case unicode.IsPrint(r):
			b.WriteRune(r)
		case r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r < 0x10000:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
		i += size
	}
	b.WriteByte(quote)
	return b.String()
}

// FilterOps are the comparison operators of a store search filter.
var FilterOps = []string{"$eq", "$ne", "$gt", "$gte", "$lt", "$lte"}

// CheckFilter records every problem of a store search filter in v, at loc followed by the field
// (and operator). A filter maps top-level value fields to a value that must equal the field's,
// or to an object of operators that must all hold.
func CheckFilter(filter map[string]any, v *Violations, loc ...any) {
	at := func(more ...any) []any { return append(append([]any{}, loc...), more...) }
	for _, field := range slices.Sorted(maps.Keys(filter)) {
		ops, ok := operators(filter[field])
		if !ok {
			continue
		}
		for _, op := range slices.Sorted(maps.Keys(ops)) {
			arg := ops[op]
			switch op {
			case "$eq", "$ne":
			case "$gt", "$gte", "$lt", "$lte":
				if _, isNum := Number(arg); !isNum {
					if _, isStr := arg.(string); !isStr {
						v.Add("value_error", fmt.Sprintf("Operator %s compares numbers or strings", op), at(field, op)...)
					}
				}
			default:
				v.Add("value_error", fmt.Sprintf("Unknown filter operator %q: use one of %s", op, strings.Join(FilterOps, ", ")), at(field, op)...)
			}
		}
	}
}

// operators returns cond as an operator object: an object with at least one key starting with $.
func operators(cond any) (map[string]any, bool) {
	m, ok := cond.(map[string]any)
	if !ok {
		return nil, false
	}
	for k := range m {
		if strings.HasPrefix(k, "$") {
			return m, true
		}
	}
	return nil, false
}

// MatchFilter reports whether value satisfies filter (checked with CheckFilter). As on the
// reference Postgres store, a field missing from value satisfies no condition, $ne included;
// equality is JSON equality with numbers compared by value; $gt, $gte, $lt and $lte compare two
// numbers numerically or two strings lexically and fail on any other pair.
func MatchFilter(value, filter map[string]any) bool {
	for field, cond := range filter {
		v, present := value[field]
		if !present {
			return false
		}
		ops, ok := operators(cond)
		if !ok {
			if !JSONEqual(v, cond) {
				return false
			}
			continue
		}
		for op, arg := range ops {
			if !applyOp(op, v, arg) {
				return false
			}
		}
	}
	return true
}

func applyOp(op string, v, arg any) bool {
	switch op {
	case "$eq":
		return JSONEqual(v, arg)
	case "$ne":
		return !JSONEqual(v, arg)
	}
	c, ok := compare(v, arg)
	if !ok {
		return false
	}
	switch op {
	case "$gt":
		return c > 0
	case "$gte":
		return c >= 0
	case "$lt":
		return c < 0
	case "$lte":
		return c <= 0
	}
	return false
}

// compare orders two numbers or two strings.
func compare(a, b any) (int, bool) {
	if _, ok := Number(a); ok {
		return CompareNumbers(a, b)
	}
	as, ok := a.(string)
	if !ok {
		return 0, false
	}
	bs, ok := b.(string)
	if !ok {
		return 0, false
	}
	return strings.Compare(as, bs), true
}

// JSONEqual reports whether two decoded JSON values are equal, numbers compared by value.
func JSONEqual(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !JSONEqual(xv, yv) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !JSONEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return scalarEqual(a, b)
}
