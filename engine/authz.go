package engine

import (
	"context"
	"net/http"
)

// AuthResource is what an authorization rule is about: the reference servers' resources.
type AuthResource string

// The resources of the runtime an auth handler's rules may name. Runs belong to their thread:
// creating one is threads' create_run, reading, cancelling or deleting one is threads' read,
// update or delete.
const (
	ResourceThreads    AuthResource = "threads"
	ResourceAssistants AuthResource = "assistants"
	ResourceCrons      AuthResource = "crons"
	ResourceStore      AuthResource = "store"
)

// AuthAction is what a request does to a resource.
type AuthAction string

// The actions of threads, assistants and crons (create_run only of threads) ...
const (
	ActionCreate    AuthAction = "create"
	ActionRead      AuthAction = "read"
	ActionUpdate    AuthAction = "update"
	ActionDelete    AuthAction = "delete"
	ActionSearch    AuthAction = "search"
	ActionCreateRun AuthAction = "create_run"
)

// ... and those of the store, whose rules may rewrite the namespace but return no filter.
const (
	ActionPut            AuthAction = "put"
	ActionGet            AuthAction = "get"
	ActionListNamespaces AuthAction = "list_namespaces"
	// The store's search and delete are ActionSearch and ActionDelete.
)

// AuthRequest is one question to the user's authorization rules: may User do Action to
// Resource, described by Value (the reference's typed dicts: ThreadsCreate, ThreadsRead, ...).
// Value is the request's own: a rule may change it (add owner metadata, prefix a store
// namespace) and the operation goes on with what it became.
type AuthRequest struct {
	User     User
	Resource AuthResource
	Action   AuthAction
	Value    map[string]any
}

// Authorizer decides what the user of a request may do: the user's @auth.on handlers (hosted),
// or a Go program's own. It answers nil and a zero Filter to allow all, a Filter to restrict the
// resource to the records whose metadata match it, a Forbidden error (with the rule's message)
// to refuse, or an error of another kind (an Unauthorized or Forbidden one with a status the
// rule raised, Other for a rule that failed).
type Authorizer interface {
	Authorize(ctx context.Context, req *AuthRequest) (Filter, error)
}

// AuthHandler is a Go program's own auth handler (cli.Program's Auth): who a request is and what
// each user may do, as a langgraph.json auth.path handler decides in Python or TypeScript.
type AuthHandler interface {
	// Authenticate returns the user a request's credential proves; its error is an Unauthorized
	// or Forbidden engine error whose detail the 401/403 answer carries.
	Authenticate(r *http.Request) (User, error)
	Authorizer
}

type authorizerKey struct{}

// WithAuthorizer returns a context whose operations ask a before acting for its user.
func WithAuthorizer(ctx context.Context, a Authorizer) context.Context {
	return context.WithValue(ctx, authorizerKey{}, a)
}

// AuthorizerFrom returns the rules ctx's operations obey, nil when there are none: an anonymous
// server, a built-in way of authenticating (which decides who, not what), or the platform's own
// work (a cron firing, a sweep).
func AuthorizerFrom(ctx context.Context) Authorizer {
	a, _ := ctx.Value(authorizerKey{}).(Authorizer)
	return a
}

// Authorize asks ctx's rules about action on resource; value builds the request's description
// only when there are rules, so a server without them pays nothing. It returns the value as the
// rules left it (nil without rules) and the filter the resource's records must match.
func Authorize(ctx context.Context, resource AuthResource, action AuthAction, value func() map[string]any) (map[string]any, Filter, error) {
	a := AuthorizerFrom(ctx)
	if a == nil {
		return nil, Filter{}, nil
	}
	u, _ := UserFrom(ctx)
	req := &AuthRequest{User: u, Resource: resource, Action: action, Value: value()}
	f, err := a.Authorize(ctx, req)
	if err != nil {
		return nil, Filter{}, E(Op("authorize "+string(resource)+"."+string(action)), err)
	}
	return req.Value, f, nil
}
