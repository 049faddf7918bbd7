package controlplane

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"

	"github.com/jetgraph/jetgraph/engine"
)

// shape checks a decoded JSON document against the Go type it will be decoded into, the way the
// Kubernetes API server's strict field validation would: every member unknown to the type and
// every value of the wrong type is reported at its own loc (encoding/json stops at the first, and
// names no list index). What is wrong is cut out of the document, so that the rest decodes and
// the rules that follow see only what the user wrote well; pruned keeps where, so that a rule
// does not report again what is already reported (a required field cut for its type).
type shape struct {
	v      *engine.Violations
	pruned [][]any
}

var unmarshaler = reflect.TypeFor[json.Unmarshaler]()

// conform returns v fitted to t (numbers as json.Number), nil where nothing of v fits.
func (s *shape) conform(v any, t reflect.Type, loc []any) any {
	if v == nil {
		return nil
	}
	if t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(unmarshaler) {
		raw, _ := json.Marshal(v)
		if err := json.Unmarshal(raw, reflect.New(t).Interface()); err != nil {
			return s.cut(loc, "value_error", unmarshalMessage(err))
		}
		return v
	}
	switch t.Kind() {
	case reflect.Pointer:
		return s.conform(v, t.Elem(), loc)
	case reflect.Struct:
		o, ok := v.(map[string]any)
		if !ok {
			return s.cut(loc, "dict_type", "Input should be a valid dictionary")
		}
		fields := jsonFields(t)
		out := make(map[string]any, len(o))
		for _, k := range sortedKeys(o) {
			f, ok := fields[k]
			if !ok {
				s.cut(at(loc, k), "extra_forbidden", "Extra inputs are not permitted"+suggest(k, fields))
				continue
			}
			if c := s.conform(o[k], f, at(loc, k)); c != nil || o[k] == nil {
				out[k] = c
			}
		}
		return out
	case reflect.Map:
		o, ok := v.(map[string]any)
		if !ok {
			return s.cut(loc, "dict_type", "Input should be a valid dictionary")
		}
		out := make(map[string]any, len(o))
		for _, k := range sortedKeys(o) {
			if c := s.conform(o[k], t.Elem(), at(loc, k)); c != nil || o[k] == nil {
				out[k] = c
			}
		}
		return out
	case reflect.Slice:
		l, ok := v.([]any)
		if !ok {
			return s.cut(loc, "list_type", "Input should be a valid list")
		}
		out := make([]any, len(l)) // an element cut stays as null, so the indexes hold
		for i, e := range l {
			out[i] = s.conform(e, t.Elem(), at(loc, i))
		}
		return out
	case reflect.String:
		if _, ok := v.(string); !ok {
			return s.cut(loc, "string_type", "Input should be a valid string")
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			return s.cut(loc, "bool_type", "Input should be a valid boolean")
		}
	case reflect.Float32, reflect.Float64:
		n, ok := v.(json.Number)
		if !ok {
			return s.cut(loc, "float_type", "Input should be a valid number")
		}
		if f, err := n.Float64(); err != nil || math.IsInf(f, 0) {
			return s.cut(loc, "float_type", "Input should be a valid number")
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return s.integer(v, t, loc)
	case reflect.Interface:
	default:
		return s.cut(loc, "value_error", "This value cannot be given")
	}
	return v
}

// integer fits an integer of t's range; a number with a zero fraction (4.0) is the integer.
func (s *shape) integer(v any, t reflect.Type, loc []any) any {
	n, ok := v.(json.Number)
	if !ok {
		return s.cut(loc, "int_type", "Input should be a valid integer")
	}
	f, err := n.Float64()
	if err != nil || f != math.Trunc(f) || math.IsInf(f, 0) {
		return s.cut(loc, "int_type", "Input should be a valid integer")
	}
	lo, hi := intRange(t)
	switch {
	case f < lo:
		return s.cut(loc, "greater_than_equal", fmt.Sprintf("Input should be greater than or equal to %.0f", lo))
	case f > hi:
		return s.cut(loc, "less_than_equal", fmt.Sprintf("Input should be less than or equal to %.0f", hi))
	}
	return json.Number(fmt.Sprintf("%.0f", f))
}

// intRange is the range of an integer type, within what a float64 holds exactly.
func intRange(t reflect.Type) (float64, float64) {
	bits := float64(t.Bits())
	if t.Kind() >= reflect.Uint && t.Kind() <= reflect.Uint64 {
		return 0, math.Min(math.Exp2(bits)-1, 1<<53)
	}
	return math.Max(-math.Exp2(bits-1), -(1 << 53)), math.Min(math.Exp2(bits-1)-1, 1<<53)
}

func (s *shape) cut(loc []any, typ, msg string) any {
	s.v.Add(typ, msg, loc...)
	s.pruned = append(s.pruned, loc)
	return nil
}

// reported tells whether loc is at or under a part already cut.
func (s *shape) reported(loc []any) bool {
	for _, p := range s.pruned {
		if len(p) <= len(loc) && slices.EqualFunc(p, loc[:len(p)], func(a, b any) bool { return a == b }) {
			return true
		}
	}
	return false
}

// jsonFields are the JSON members of struct t and their types, inline members flattened.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-" || !f.IsExported() && !f.Anonymous:
		case f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct:
			for k, ft := range jsonFields(f.Type) {
				out[k] = ft
			}
		case name == "":
			out[f.Name] = f.Type
		default:
			out[name] = f.Type
		}
	}
	return out
}

// suggest names the member a key differs from only in case (mountpath for mountPath).
func suggest(key string, fields map[string]reflect.Type) string {
	for k := range fields {
		if strings.EqualFold(k, key) {
			return ": did you mean " + k + "?"
		}
	}
	return ""
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// unmarshalMessage is a value's own parser's complaint (a quantity, an int-or-string), without
// encoding/json's prefix.
func unmarshalMessage(err error) string {
	msg := strings.TrimPrefix(err.Error(), "json: ")
	if strings.Contains(msg, "cannot unmarshal") {
		return "Input is not a valid value of this field"
	}
	return msg
}
