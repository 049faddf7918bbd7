package store_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/store"
	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
)

// ruleFunc is an engine.Authorizer from a function: the rules a test needs.
type ruleFunc func(req *engine.AuthRequest) (engine.Filter, error)

func (f ruleFunc) Authorize(_ context.Context, req *engine.AuthRequest) (engine.Filter, error) {
	return f(req)
}

// hostedRules answers as a hosted handler's decoded JSON does: the namespace a list of any,
// prefixed with "team"; a search is filtered to items whose value is public.
var hostedRules = ruleFunc(func(req *engine.AuthRequest) (engine.Filter, error) {
	var ns []any
	switch v := req.Value["namespace"].(type) {
	case []string:
		for _, s := range v {
			ns = append(ns, s)
		}
	case nil:
	default:
		return engine.Filter{}, engine.E(engine.Op("test"), engine.Other, "namespace of an unexpected type")
	}
	req.Value["namespace"] = append([]any{"team"}, ns...)
	if req.Action == engine.ActionListNamespaces {
		req.Value["suffix"] = []any{"shared"}
	}
	if req.Action == engine.ActionSearch {
		return engine.ParseFilter(map[string]any{"public": true})
	}
	return engine.Filter{}, nil
})

// TestAuthorizedStore: the rules' namespace (a []any, as a hosted handler answers) is where items
// go and are read; a search's rule filter is ANDed with the request's on the items' values; the
// rules' suffix narrows a listing; a namespace a rule makes invalid is the rule's fault (500); a
// refusal is the rule's error.
func TestAuthorizedStore(t *testing.T) {
	p := open(t, eventlogtest.Open(t))
	ctx := engine.WithAuthorizer(engine.WithUser(context.Background(), engine.User{Identity: "u"}), hostedRules)
	plain := context.Background()
	for key, v := range map[string]map[string]any{
		"a": {"public": true, "n": 1.0}, "b": {"public": true, "n": 2.0}, "c": {"public": false, "n": 1.0},
	} {
		if err := p.svc.Put(ctx, store.Put{Namespace: []string{"shared"}, Key: key, Value: v}); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok, _ := p.svc.Get(plain, []string{"team", "shared"}, "a", false); !ok {
		t.Fatal("the item is not where the rules put it")
	}
	if _, ok, _ := p.svc.Get(plain, []string{"shared"}, "a", false); ok {
		t.Fatal("the item is where the request named it")
	}
	if it, ok, err := p.svc.Get(ctx, []string{"shared"}, "c", false); err != nil || !ok || it.Value["n"] != 1.0 {
		t.Fatalf("get through the rules: %v %v %v", it, ok, err)
	}
	keys := func(items []engine.Item) []string {
		var ks []string
		for _, it := range items {
			ks = append(ks, it.Key)
		}
		return ks
	}
	for _, c := range []struct {
		name   string
		filter map[string]any
		want   int
	}{{"the rule's filter", nil, 2}, {"and the request's", map[string]any{"n": 1.0}, 1}} {
		items, err := p.svc.Search(ctx, engine.StoreQuery{Prefix: []string{"shared"}, Filter: c.filter}, false)
		if err != nil || len(items) != c.want {
			t.Errorf("%s: %v %v, want %d public items", c.name, keys(items), err, c.want)
		}
	}
	if err := p.svc.Put(plain, store.Put{Namespace: []string{"team", "other"}, Key: "x", Value: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	ns, err := p.svc.ListNamespaces(ctx, engine.NamespaceQuery{Limit: 10})
	if err != nil || !reflect.DeepEqual(ns, [][]string{{"team", "shared"}}) {
		t.Errorf("listing with the rules' prefix and suffix: %v %v", ns, err)
	}
	if err := p.svc.Delete(ctx, []string{"shared"}, "a"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := p.svc.Get(plain, []string{"team", "shared"}, "a", false); ok {
		t.Error("the delete missed the rules' namespace")
	}

	bad := engine.WithAuthorizer(ctx, ruleFunc(func(req *engine.AuthRequest) (engine.Filter, error) {
		req.Value["namespace"] = []any{"has.period"}
		return engine.Filter{}, nil
	}))
	if err := p.svc.Put(bad, store.Put{Namespace: []string{"n"}, Key: "k"}); !engine.Is(engine.Other, err) {
		t.Errorf("a rule's invalid namespace: %v, want the rule's fault", err)
	}
	refuse := engine.WithAuthorizer(ctx, ruleFunc(func(*engine.AuthRequest) (engine.Filter, error) {
		return engine.Filter{}, engine.E(engine.Op("rule"), engine.Forbidden, "read only")
	}))
	if _, err := p.svc.Search(refuse, engine.StoreQuery{}, false); !engine.Is(engine.Forbidden, err) {
		t.Errorf("a refusal: %v, want Forbidden", err)
	}
}
