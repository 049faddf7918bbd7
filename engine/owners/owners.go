// Package owners is the authorization most deployments with several users want, ready for a Go
// program's auth handler: every user owns what they create and reaches only that. It is the Go
// twin of the reference documentation's owner-only @auth.on handler.
package owners

import (
	"context"
	"slices"

	"github.com/jetgraph/jetgraph/engine"
)

// DefaultKey is the metadata key that records a resource's owner.
const DefaultKey = "owner"

// Rules is an engine.Authorizer: creating a thread, assistant, cron or run records the user as
// its owner in its metadata, every other action is restricted to what the user owns, and the store
// is split by user, each namespace prefixed with the user's identity.
type Rules struct {
	// Key is the metadata key of the owner; empty means DefaultKey.
	Key string
}

// Authorize applies the rules to req, changing its value where they add the owner or prefix a
// namespace.
func (r Rules) Authorize(_ context.Context, req *engine.AuthRequest) (engine.Filter, error) {
	id := req.User.Identity
	if id == "" {
		return engine.Filter{}, engine.E(engine.Op("owners.authorize"), engine.Unauthorized, "Authentication required")
	}
	if req.Resource == engine.ResourceStore {
		prefixNamespace(req.Value, "namespace", id)
		return engine.Filter{}, nil
	}
	key := r.Key
	if key == "" {
		key = DefaultKey
	}
	// A run's creation records its owner too: the thread a stateless run (or if_not_exists
	// create) makes carries the run's metadata, and must be the user's.
	if req.Action == engine.ActionCreate || req.Action == engine.ActionCreateRun {
		md, _ := req.Value["metadata"].(map[string]any)
		if md == nil {
			md = map[string]any{}
		}
		md[key] = id
		req.Value["metadata"] = md
	}
	return engine.ParseFilter(map[string]any{key: id})
}

// prefixNamespace makes value[field], a namespace, start with id; a namespace that already does
// is left as it is, so a user reading back what they wrote names it either way.
func prefixNamespace(value map[string]any, field, id string) {
	var ns []any
	switch v := value[field].(type) {
	case []any:
		ns = v
	case []string:
		for _, s := range v {
			ns = append(ns, s)
		}
	}
	if len(ns) > 0 && ns[0] == id {
		return
	}
	value[field] = append([]any{id}, slices.Clone(ns)...)
}
