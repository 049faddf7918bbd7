package owners_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/owners"
)

func TestRules(t *testing.T) {
	alice := engine.User{Identity: "alice"}
	tests := []struct {
		name       string
		req        engine.AuthRequest
		wantValue  map[string]any
		mine, ours bool // whether the filter matches alice's metadata, and the shared one's
	}{
		{"create adds the owner", engine.AuthRequest{User: alice, Resource: engine.ResourceThreads, Action: engine.ActionCreate,
			Value: map[string]any{"metadata": map[string]any{"x": 1}}},
			map[string]any{"metadata": map[string]any{"x": 1, "owner": "alice"}}, true, false},
		{"create without metadata", engine.AuthRequest{User: alice, Resource: engine.ResourceAssistants, Action: engine.ActionCreate,
			Value: map[string]any{}}, map[string]any{"metadata": map[string]any{"owner": "alice"}}, true, false},
		{"create_run adds the owner", engine.AuthRequest{User: alice, Resource: engine.ResourceThreads, Action: engine.ActionCreateRun,
			Value: map[string]any{"thread_id": nil}}, map[string]any{"thread_id": nil, "metadata": map[string]any{"owner": "alice"}}, true, false},
		{"read is filtered", engine.AuthRequest{User: alice, Resource: engine.ResourceThreads, Action: engine.ActionRead,
			Value: map[string]any{"thread_id": "t"}}, map[string]any{"thread_id": "t"}, true, false},
		{"store namespace prefixed", engine.AuthRequest{User: alice, Resource: engine.ResourceStore, Action: engine.ActionPut,
			Value: map[string]any{"namespace": []string{"notes"}}}, map[string]any{"namespace": []any{"alice", "notes"}}, true, true},
		{"store namespace already the user's", engine.AuthRequest{User: alice, Resource: engine.ResourceStore, Action: engine.ActionGet,
			Value: map[string]any{"namespace": []any{"alice", "notes"}}}, map[string]any{"namespace": []any{"alice", "notes"}}, true, true},
		{"store listing everything", engine.AuthRequest{User: alice, Resource: engine.ResourceStore, Action: engine.ActionListNamespaces,
			Value: map[string]any{"namespace": nil}}, map[string]any{"namespace": []any{"alice"}}, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := owners.Rules{}.Authorize(context.Background(), &tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(tt.req.Value, tt.wantValue) {
				t.Errorf("value %v, want %v", tt.req.Value, tt.wantValue)
			}
			if got := f.Match(map[string]any{"owner": "alice"}); got != tt.mine {
				t.Errorf("filter matches alice's: %v, want %v", got, tt.mine)
			}
			if got := f.Match(map[string]any{"owner": "bob"}); got != tt.ours {
				t.Errorf("filter matches bob's: %v, want %v", got, tt.ours)
			}
		})
	}
	if _, err := (owners.Rules{}).Authorize(context.Background(), &engine.AuthRequest{Resource: engine.ResourceThreads, Action: engine.ActionRead}); !engine.Is(engine.Unauthorized, err) {
		t.Errorf("anonymous: %v, want Unauthorized", err)
	}
}

// The rules a Go program gives engine.Authorize: the thread it creates is alice's.
func ExampleRules() {
	ctx := engine.WithAuthorizer(engine.WithUser(context.Background(), engine.User{Identity: "alice"}), owners.Rules{})
	value, filter, err := engine.Authorize(ctx, engine.ResourceThreads, engine.ActionCreate, func() map[string]any {
		return map[string]any{"thread_id": "t1", "metadata": map[string]any{}}
	})
	fmt.Println(value["metadata"], err)
	fmt.Println(filter.Match(map[string]any{"owner": "alice"}), filter.Match(map[string]any{"owner": "bob"}))
	// Output:
	// map[owner:alice] <nil>
	// true false
}
