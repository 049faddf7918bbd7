package httpapi

import (
	"context"

	"github.com/jetgraph/jetgraph/engine"
)

// threadAccess is the user's rules' check of a thread (*threads.Service has it): see
// threads.Service.Access.
type threadAccess interface {
	Access(ctx context.Context, action engine.AuthAction, id string, value map[string]any) (context.Context, map[string]any, error)
}

// mayFollowThread asks the user's rules whether they may follow thread id's stream
// (threads.read), as the reference asks before it streams a thread: with a filter, the thread
// must exist and match it (404 otherwise, as for a missing one); without one, a thread not
// created yet may be followed. Without rules it asks nothing.
func (s *Server) mayFollowThread(ctx context.Context, id string) error {
	if engine.AuthorizerFrom(ctx) == nil {
		return nil
	}
	if a, ok := s.deps.Threads.(threadAccess); ok {
		_, _, err := a.Access(ctx, engine.ActionRead, id, nil)
		return err
	}
	_, err := s.deps.Threads.Get(ctx, id)
	return err
}
