// Package extract reads one value out of a JSON document by a path such as
// `values.messages[-1].content`: the `extract` of a thread search (the Python SDK's
// threads.search(extract={"alias": "path"})) answers each alias with the value at its path.
package extract

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// A step of a path: a key of an object, or an index of an array (negative counts from the end).
type step struct {
	key   string
	index int
	isIdx bool
}

// Path is a parsed path: its first key (the root) and the steps after it.
type Path struct {
	root  string
	steps []step
}

// maxPathLen bounds a path's text: paths come from requests.
const maxPathLen = 1024

// Parse reads a path of keys separated by dots, each optionally followed by bracketed integer
// indices: `root(.key|[n])*`. Keys are non-empty and hold neither `.` nor `[` nor `]`.
func Parse(s string) (Path, error) {
	if s == "" {
		return Path{}, errors.New("the path is empty")
	}
	if len(s) > maxPathLen {
		return Path{}, fmt.Errorf("the path is longer than %d bytes", maxPathLen)
	}
	var p Path
	key, rest := splitKey(s)
	if key == "" {
		return Path{}, fmt.Errorf("path %q does not start with a key", s)
	}
	p.root = key
	for rest != "" {
		switch rest[0] {
		case '.':
			key, rest = splitKey(rest[1:])
			if key == "" {
				return Path{}, fmt.Errorf("path %q has an empty key", s)
			}
			p.steps = append(p.steps, step{key: key})
		case '[':
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return Path{}, fmt.Errorf("path %q has an unclosed [", s)
			}
			n, err := strconv.Atoi(rest[1:end])
			if err != nil || strings.HasPrefix(rest[1:end], "+") {
				return Path{}, fmt.Errorf("path %q has an index %q that is not an integer", s, rest[1:end])
			}
			p.steps = append(p.steps, step{index: n, isIdx: true})
			rest = rest[end+1:]
		default:
			return Path{}, fmt.Errorf("path %q has %q after an index", s, rest[0])
		}
	}
	return p, nil
}

// splitKey cuts the key at the start of s from what follows it.
func splitKey(s string) (key, rest string) {
	i := strings.IndexAny(s, ".[]")
	if i < 0 {
		return s, ""
	}
	if s[i] == ']' {
		return "", s
	}
	return s[:i], s[i:]
}

// Root is the path's first key.
func (p Path) Root() string { return p.root }

// String is the path as Parse reads it.
func (p Path) String() string {
	var b strings.Builder
	b.WriteString(p.root)
	for _, s := range p.steps {
		if s.isIdx {
			fmt.Fprintf(&b, "[%d]", s.index)
		} else {
			b.WriteString("." + s.key)
		}
	}
	return b.String()
}

// From returns the value at the path's steps below root (a decoded JSON value: maps, slices,
// scalars), nil when a step does not resolve.
func (p Path) From(root any) any {
	cur := root
	for _, s := range p.steps {
		switch x := cur.(type) {
		case map[string]any:
			if s.isIdx {
				return nil
			}
			cur = x[s.key]
		case []any:
			if !s.isIdx {
				return nil
			}
			i := s.index
			if i < 0 {
				i += len(x)
			}
			if i < 0 || i >= len(x) {
				return nil
			}
			cur = x[i]
		default:
			return nil
		}
	}
	return cur
}
