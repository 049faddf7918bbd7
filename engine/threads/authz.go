package threads

import (
	"context"

	"github.com/jetgraph/jetgraph/engine"
)

// Access asks ctx's rules whether action may be done to thread id (value is the rules' value
// dict, thread_id added; nil for one holding only the id) and answers NotFound, as for a thread
// that does not exist, when the thread exists but the rules' filter hides it. It returns the
// context the operation goes on with (engine.Asked: its own steps do not ask again) and the
// value as the rules left it (nil without rules). Without rules it reads nothing.
func (s *Service) Access(ctx context.Context, action engine.AuthAction, id string, value map[string]any) (context.Context, map[string]any, error) {
	v, f, err := s.ask(ctx, action, id, value)
	if err != nil || f.IsZero() {
		return engine.Asked(ctx), v, err
	}
	ctx = engine.Asked(ctx)
	th, err := s.read(ctx, id, s.view.Info)
	if err != nil {
		return ctx, nil, err
	}
	if !f.Match(th.Metadata) {
		return ctx, nil, NotFound("threads.get", id)
	}
	return ctx, v, nil
}

// ask asks ctx's rules about action on thread id, without reading the thread.
func (s *Service) ask(ctx context.Context, action engine.AuthAction, id string, value map[string]any) (map[string]any, engine.Filter, error) {
	return engine.Authorize(ctx, engine.ResourceThreads, action, func() map[string]any {
		if value == nil {
			value = map[string]any{}
		}
		value["thread_id"] = id
		return value
	})
}

// Metadata reads a metadata map out of a value the rules returned (a host answers JSON); ok is
// false when the value holds none.
func Metadata(value map[string]any) (map[string]any, bool) {
	md, ok := value["metadata"].(map[string]any)
	return md, ok
}

// ttlValue is a time to live as the rules' value dicts show it.
func ttlValue(ttl *engine.TTLSpec) any {
	if ttl == nil {
		return nil
	}
	return map[string]any{"strategy": ttl.Strategy, "ttl": ttl.Minutes}
}
