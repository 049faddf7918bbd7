package engine

import (
	"context"
	"fmt"
	"maps"
)

// The operations read back the parts of an AuthRequest's value a rule may have changed: a Go rule
// leaves Go types, a hosted handler's answer is decoded JSON ([]any for a list), so both are
// accepted.

// ValueMap returns value[key] as the rules left it: given when there were no rules (a nil value)
// or the key is absent or null, the rules' object otherwise. A key holding something else than
// an object is the rules' fault.
func ValueMap(op string, value map[string]any, key string, given map[string]any) (map[string]any, error) {
	v, ok := value[key]
	if value == nil || !ok || v == nil {
		return given, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, E(Op(op), Other, fmt.Sprintf("Your auth handler set %s to %T; it must be an object.", key, v))
	}
	return m, nil
}

// ValueLabels returns value[key], a store namespace, as the rules left it: given when there were
// no rules or the key is absent, nil for null, the labels otherwise ([]string or a list of
// strings). Anything else is the rules' fault.
func ValueLabels(op string, value map[string]any, key string, given []string) ([]string, error) {
	v, ok := value[key]
	if value == nil || !ok {
		return given, nil
	}
	switch l := v.(type) {
	case nil:
		return nil, nil
	case []string:
		return l, nil
	case []any:
		out := make([]string, len(l))
		for i, x := range l {
			s, ok := x.(string)
			if !ok {
				return nil, E(Op(op), Other, fmt.Sprintf("Your auth handler set %s[%d] to %T; a namespace's labels are strings.", key, i, x))
			}
			out[i] = s
		}
		return out, nil
	}
	return nil, E(Op(op), Other, fmt.Sprintf("Your auth handler set %s to %T; a namespace is a list of strings.", key, v))
}

// LabelsValue is ns for an AuthRequest's value: a copy, so that a rule changing it in place
// changes nothing the operation holds; nil (no namespace given) is null.
func LabelsValue(ns []string) any {
	if ns == nil {
		return nil
	}
	return append([]string{}, ns...)
}

// AuthorizeRecord is Authorize for an action on one record: its value is {key: id} with the
// fields of extra.
func AuthorizeRecord(ctx context.Context, resource AuthResource, action AuthAction, key, id string, extra map[string]any) (map[string]any, Filter, error) {
	return Authorize(ctx, resource, action, func() map[string]any {
		v := make(map[string]any, len(extra)+1)
		maps.Copy(v, extra)
		v[key] = id
		return v
	})
}

// ObjectValue is m for an AuthRequest's value: an empty object for a rule to fill when m is nil.
func ObjectValue(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// StringValue is s for an AuthRequest's value: null when it is empty (not given).
func StringValue(s string) any {
	if s == "" {
		return nil
	}
	return s
}
