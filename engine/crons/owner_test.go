package crons_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/crons"
	"github.com/jetgraph/jetgraph/engine/platform/platformtest"
	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
)

// TestCronFiresAsItsOwner: a cron made by an authenticated user fires runs that carry that user
// in their configurable, over a user its body named, and the cron's metadata under the payload's;
// a cron made anonymously names nobody.
func TestCronFiresAsItsOwner(t *testing.T) {
	l := eventlogtest.Open(t)
	p := platformtest.Start(t, config(10*time.Millisecond), l)
	ada := engine.User{Identity: "ada", Display: "Ada", Permissions: []string{"crons"}, Fields: map[string]any{"email": "ada@example.test"}}
	forged := func() engine.CronPayload {
		pl := echoPayload("tick")
		pl.Config = map[string]any{"configurable": map[string]any{engine.ConfigAuthUserID: "mallory"}}
		return pl
	}
	for _, c := range []struct {
		name string
		ctx  context.Context
		want string
	}{
		{"owned", engine.WithUser(context.Background(), ada), "ada"},
		{"anonymous", context.Background(), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			thread := newThread(t, p)
			pl := forged()
			pl.Metadata = map[string]any{"k": "payload's"}
			cron, err := p.Crons.Create(c.ctx, crons.Create{ThreadID: thread, Schedule: "* * * * * *", Payload: pl,
				Metadata: map[string]any{"owner": "ada", "k": "cron's"}})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Crons.Delete(context.Background(), cron.CronID)
			var cf, md map[string]any
			eventually(t, "a fire made a run", func() bool {
				runs, err := p.Runs.List(context.Background(), thread, "", 10, 0)
				if err != nil || len(runs) == 0 {
					return false
				}
				cf, _ = runs[0].Kwargs.Config["configurable"].(map[string]any)
				md = runs[0].Metadata
				return true
			})
			// The cron's metadata (its owner) under the payload's, as the reference's runs carry.
			if want := map[string]any{"owner": "ada", "k": "payload's"}; !reflect.DeepEqual(md, want) {
				t.Errorf("the fired run's metadata: %v, want %v", md, want)
			}
			id, _ := cf[engine.ConfigAuthUserID].(string)
			if id != c.want {
				t.Fatalf("the fired run's user: %q, want %q (%v)", id, c.want, cf)
			}
			if c.want != "" {
				u, ok := engine.UserOfConfigurable(cf)
				if !ok || u.Display != "Ada" || u.Fields["email"] != "ada@example.test" || len(u.Permissions) != 1 {
					t.Errorf("the fired run's user: %+v", u)
				}
			}
		})
	}
}
