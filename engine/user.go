package engine

import (
	"context"
	"maps"
)

// User is who a request to the runtime is, as its authentication decided: an API key's tenant,
// a JWT's subject, or (later) the user's own auth handler's answer. It reaches the graph as the
// reference servers' langgraph_auth_user, _user_id and _permissions of config.configurable.
type User struct {
	// Identity is the user's stable id (a JWT's identity or sub claim, a key's tenant name).
	Identity string
	// Display is the name to show; empty means Identity.
	Display string
	// Permissions are the scopes the credential grants (a JWT's permissions, or its scope split
	// on spaces); an admin API key has AdminPermission.
	Permissions []string
	// Fields are what the credential says of the user besides (a JWT's verified claims): the
	// graph reads them in langgraph_auth_user. Never a credential itself.
	Fields map[string]any
}

// AdminPermission is the permission of a user authenticated with an admin API key.
const AdminPermission = "admin"

// The config.configurable keys that carry the user to the graph (the reference servers' names).
const (
	ConfigAuthUser        = "langgraph_auth_user"
	ConfigAuthUserID      = "langgraph_auth_user_id"
	ConfigAuthPermissions = "langgraph_auth_permissions"
)

type userKey struct{}

// WithUser returns a context acting for u.
func WithUser(ctx context.Context, u User) context.Context {
	return context.WithValue(ctx, userKey{}, u)
}

// UserFrom returns the user ctx acts for; ok is false for an anonymous request (the server
// authenticates nobody) and for the work the platform does on its own.
func UserFrom(ctx context.Context) (User, bool) {
	u, ok := ctx.Value(userKey{}).(User)
	return u, ok && u.Identity != ""
}

// DisplayName is Display, or Identity without one.
func (u User) DisplayName() string {
	if u.Display != "" {
		return u.Display
	}
	return u.Identity
}

// Object is the user as a graph reads langgraph_auth_user: the reference's shape (identity,
// display_name, is_authenticated, permissions) over the credential's other fields, which never
// replace those four.
func (u User) Object() map[string]any {
	o := make(map[string]any, len(u.Fields)+4)
	maps.Copy(o, u.Fields)
	o["identity"] = u.Identity
	o["display_name"] = u.DisplayName()
	o["is_authenticated"] = true
	o["permissions"] = u.permissionList()
	return o
}

// permissionList is Permissions as a JSON list, empty rather than null.
func (u User) permissionList() []any {
	out := make([]any, 0, len(u.Permissions))
	for _, p := range u.Permissions {
		out = append(out, p)
	}
	return out
}

// authKeys are the configurable keys of the user.
var authKeys = []string{ConfigAuthUser, ConfigAuthUserID, ConfigAuthPermissions}

// SetAuthConfigurable writes the user of ctx into configurable under the reference's keys, over
// whatever the request's body gave for them; an anonymous ctx sets them to the reference's
// nil, "" and []: a client never speaks for an identity.
func SetAuthConfigurable(ctx context.Context, configurable map[string]any) {
	if configurable == nil {
		return
	}
	u, ok := UserFrom(ctx)
	if !ok {
		// What the reference records for a request without a user: no user, an empty id, no
		// permissions.
		configurable[ConfigAuthUser], configurable[ConfigAuthUserID], configurable[ConfigAuthPermissions] = nil, "", []any{}
		return
	}
	configurable[ConfigAuthUser] = u.Object()
	configurable[ConfigAuthUserID] = u.Identity
	configurable[ConfigAuthPermissions] = u.permissionList()
}

// CopyAuthConfigurable copies the user's keys of from (a run's own recorded configurable) into
// to, which layers of config that never carry a user (the assistant's, the thread's) made.
func CopyAuthConfigurable(to, from map[string]any) {
	for _, k := range authKeys {
		if v, ok := from[k]; ok {
			to[k] = v
		}
	}
}

// UserOfConfigurable is the user SetAuthConfigurable wrote into configurable (a cron's stored
// payload), ok false when there is none.
func UserOfConfigurable(configurable map[string]any) (User, bool) {
	obj, _ := configurable[ConfigAuthUser].(map[string]any)
	id, _ := configurable[ConfigAuthUserID].(string)
	if obj == nil || id == "" {
		return User{}, false
	}
	u := User{Identity: id, Fields: map[string]any{}}
	u.Display, _ = obj["display_name"].(string)
	for k, v := range obj {
		switch k {
		case "identity", "display_name", "is_authenticated", "permissions":
		default:
			u.Fields[k] = v
		}
	}
	perms, _ := configurable[ConfigAuthPermissions].([]any)
	for _, p := range perms {
		if s, ok := p.(string); ok {
			u.Permissions = append(u.Permissions, s)
		}
	}
	return u, true
}
