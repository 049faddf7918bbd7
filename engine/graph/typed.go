package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// Channels adds a channel for every JSON field of struct S, so a graph's state can be declared as
// a Go type: a field tagged `reducer:"messages"` is a Messages channel, `reducer:"append"` an
// Append channel, any other a LastValue channel.
//
//	type State struct {
//		Messages []engine.Message `json:"messages" reducer:"messages"`
//		Count    int              `json:"count"`
//	}
//	b := graph.Channels[State](graph.NewBuilder("counter"))
func Channels[S any](b *Builder) *Builder {
	t := reflect.TypeFor[S]()
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return b.fail("Channels: %s is not a struct", t)
	}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		switch f.Tag.Get("reducer") {
		case "messages":
			b.Channel(name, Messages())
		case "append":
			b.Channel(name, Append())
		case "":
			b.Channel(name, LastValue())
		default:
			return b.fail("Channels: field %s: unknown reducer %q", f.Name, f.Tag.Get("reducer"))
		}
	}
	return b
}

// Typed adapts a node written against Go types: its input (the state, or a Send's argument) is
// decoded into S through its JSON form, and its update U (a struct, a pointer to one, or a map)
// is encoded back, so only the fields it sets (with omitempty) are written.
func Typed[S, U any](fn func(ctx context.Context, state S, rt *Runtime) (U, error)) NodeFunc {
	return func(ctx context.Context, input any, rt *Runtime) (any, error) {
		var s S
		if err := convert(input, &s); err != nil {
			return nil, &InvalidUpdateError{Msg: fmt.Sprintf("typed node input: %v", err)}
		}
		u, err := fn(ctx, s, rt)
		if err != nil {
			return nil, err
		}
		return typedUpdate(u)
	}
}

// TypedRoute adapts a route written against the state type S.
func TypedRoute[S any](fn func(ctx context.Context, state S, rt *Runtime) (any, error)) RouteFunc {
	return func(ctx context.Context, state State, rt *Runtime) (any, error) {
		var s S
		if err := convert(state, &s); err != nil {
			return nil, &InvalidUpdateError{Msg: fmt.Sprintf("typed route input: %v", err)}
		}
		return fn(ctx, s, rt)
	}
}

func convert(in, out any) error {
	raw, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, out)
}

// typedUpdate turns a typed node's result into the update the runtime applies.
func typedUpdate(u any) (any, error) {
	switch v := u.(type) {
	case nil, map[string]any, State, Command, *Command:
		return v, nil
	}
	rv := reflect.ValueOf(u)
	if rv.Kind() == reflect.Pointer && rv.IsNil() {
		return nil, nil
	}
	var m map[string]any
	if err := convert(u, &m); err != nil {
		return nil, &InvalidUpdateError{Msg: fmt.Sprintf("typed node update: %v", err)}
	}
	return m, nil
}
