package engine

import "context"

// Asked returns ctx without its user's rules, for the reads and writes an operation does once it
// has asked them: the operation's own steps (a run's thread read, the thread a copy makes) must
// not ask again, with another action, what the rules already decided. The user stays.
func Asked(ctx context.Context) context.Context {
	if AuthorizerFrom(ctx) == nil {
		return ctx
	}
	return context.WithValue(ctx, authorizerKey{}, nil)
}
