package engine

import (
	"context"
	"testing"
)

type allowAll struct{}

func (allowAll) Authorize(context.Context, *AuthRequest) (Filter, error) { return Filter{}, nil }

// TestAsked: the steps after an operation asked the rules run without them, as the same user;
// a context without rules is left as it is.
func TestAsked(t *testing.T) {
	ctx := WithAuthorizer(WithUser(context.Background(), User{Identity: "ada"}), allowAll{})
	asked := Asked(ctx)
	if AuthorizerFrom(asked) != nil {
		t.Error("Asked kept the rules")
	}
	if u, ok := UserFrom(asked); !ok || u.Identity != "ada" {
		t.Errorf("Asked lost the user: %+v %v", u, ok)
	}
	if AuthorizerFrom(ctx) == nil {
		t.Error("Asked changed the context it was given")
	}
	plain := context.Background()
	if Asked(plain) != plain {
		t.Error("a context without rules is not left as it is")
	}
}
