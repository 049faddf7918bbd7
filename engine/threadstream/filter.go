package threadstream

import (
	"slices"
	"strings"

	"github.com/jetgraph/jetgraph/engine"
)

// MaxDepth bounds a filter's depth, as deep as subgraphs may nest in a namespace.
const MaxDepth = 64

// Filter is what a subscription (an SSE event stream, or a subscription.subscribe on a
// WebSocket) asks for: events of Channels, in a namespace under one of Namespaces (every
// namespace when nil) at most Depth levels below it (any depth when nil). Since, on an SSE
// stream, is the seq of the last event the client has: the stream sends the events after it.
type Filter struct {
	Channels   []Channel  `json:"channels"`
	Namespaces [][]string `json:"namespaces,omitempty"`
	Depth      *int       `json:"depth,omitempty"`
	Since      *uint64    `json:"since,omitempty"`
}

// Validate records in v every problem of f, at loc.
func (f Filter) Validate(v *engine.Violations, loc ...any) {
	at := func(k ...any) []any { return append(slices.Clone(loc), k...) }
	if len(f.Channels) == 0 {
		v.Add("missing", "channels must name at least one channel", at("channels")...)
	}
	for i, c := range f.Channels {
		if name, ok := strings.CutPrefix(c, ChannelCustom+":"); ok && name != "" {
			continue
		}
		if !slices.Contains(Channels, c) {
			v.Add("enum", "channel must be one of "+strings.Join(Channels, ", ")+", or custom:<name>", at("channels", i)...)
		}
	}
	if f.Depth != nil && (*f.Depth < 0 || *f.Depth > MaxDepth) {
		v.Add("value_error", "depth must be between 0 and 64", at("depth")...)
	}
}

// ChannelOf is the channel an event belongs to: its method's, "input" for input requests, and
// "custom:<name>" for a named custom event.
func ChannelOf(e *Event) Channel {
	switch e.Method {
	case EventInputRequested:
		return ChannelInput
	case EventCustom:
		if d, ok := e.Params.Data.(CustomData); ok && d.Name != "" {
			return ChannelCustom + ":" + d.Name
		}
		return ChannelCustom
	}
	return e.Method
}

// Matches reports whether f asks for e.
func (f Filter) Matches(e *Event) bool {
	ch := ChannelOf(e)
	if !slices.Contains(f.Channels, ch) && !(strings.HasPrefix(ch, ChannelCustom+":") && slices.Contains(f.Channels, ChannelCustom)) {
		return false
	}
	if len(f.Namespaces) == 0 {
		return f.Depth == nil || len(e.Params.Namespace) <= *f.Depth
	}
	for _, prefix := range f.Namespaces {
		if under(e.Params.Namespace, prefix) && (f.Depth == nil || len(e.Params.Namespace)-len(prefix) <= *f.Depth) {
			return true
		}
	}
	return false
}

// under reports whether ns starts with prefix. A namespace segment is "<node>:<task id>"; a
// prefix segment without ":" matches on the node alone.
func under(ns, prefix []string) bool {
	if len(prefix) > len(ns) {
		return false
	}
	for i, p := range prefix {
		if ns[i] == p {
			continue
		}
		node, _, _ := strings.Cut(ns[i], ":")
		if strings.Contains(p, ":") || node != p {
			return false
		}
	}
	return true
}
