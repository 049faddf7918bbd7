package engine

import (
	"context"
	"reflect"
	"testing"
)

// TestSetAuthConfigurable: the user of the context replaces what a body said of it; an
// anonymous context records none (nil, "", []), as the reference does; the user object has the
// reference's shape over the credential's fields, which cannot replace its four keys.
func TestSetAuthConfigurable(t *testing.T) {
	forged := func() map[string]any {
		return map[string]any{ConfigAuthUserID: "mallory", ConfigAuthUser: map[string]any{"identity": "mallory"},
			ConfigAuthPermissions: []any{"admin"}, "model": "m"}
	}
	cf := forged()
	SetAuthConfigurable(context.Background(), cf)
	if !reflect.DeepEqual(cf, map[string]any{"model": "m", ConfigAuthUser: nil, ConfigAuthUserID: "", ConfigAuthPermissions: []any{}}) {
		t.Errorf("anonymous: %v", cf)
	}
	u := User{Identity: "ada", Permissions: []string{"b", "a"}, Fields: map[string]any{"identity": "eve", "is_authenticated": false, "org": "x"}}
	cf = forged()
	SetAuthConfigurable(WithUser(context.Background(), u), cf)
	want := map[string]any{"model": "m", ConfigAuthUserID: "ada", ConfigAuthPermissions: []any{"b", "a"},
		ConfigAuthUser: map[string]any{"identity": "ada", "display_name": "ada", "is_authenticated": true, "permissions": []any{"b", "a"}, "org": "x"}}
	if !reflect.DeepEqual(cf, want) {
		t.Errorf("with a user:\n got %v\nwant %v", cf, want)
	}
	back, ok := UserOfConfigurable(cf)
	if !ok || back.Identity != "ada" || !reflect.DeepEqual(back.Permissions, []string{"b", "a"}) || back.Fields["org"] != "x" {
		t.Errorf("read back: %+v", back)
	}
	if _, ok := UserFrom(WithUser(context.Background(), User{})); ok {
		t.Error("a user without identity counted")
	}
}
