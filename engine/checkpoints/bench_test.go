package checkpoints_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/eventlog"
)

// BenchmarkSaverPut measures one checkpoint Put on the embedded log: build the event (diffed
// against the parent in bbolt), append it, and wait until the local projections (checkpoints and
// the thread record) have folded it. Each Put is a step of a thread whose state holds 20 chat
// messages (about 6 KiB) that change at every step:
//
//	step        the messages and a counter change
//	doc=64KiB   a 64 KiB channel that never changes sits in the state too (not in the events,
//	            but in the thread record, which every root checkpoint rewrites)
//	big=600KiB  a new 600 KiB value at every step goes through the object store
//	…/no_thread the thread was never created: no thread record to keep current
func BenchmarkSaverPut(b *testing.B) {
	doc := func(int) (string, bool) { return `"` + strings.Repeat("d", 64<<10) + `"`, false }
	for _, bc := range []struct {
		name     string
		extra    func(i int) (string, bool) // a "doc" value, and whether it changes
		noThread bool                       // no thread record to keep current
	}{
		{"step", nil, false},
		{"step/no_thread", nil, true},
		{"doc=64KiB", doc, false},
		{"doc=64KiB/no_thread", doc, true},
		{"big=600KiB", func(i int) (string, bool) { return fmt.Sprintf(`"%d%s"`, i, strings.Repeat("b", 600<<10)), true }, false},
	} {
		b.Run(bc.name, func(b *testing.B) {
			e := open(b)
			ctx := context.Background()
			created, _ := eventlog.New(eventlog.Aggregate{Kind: "thread", Tenant: engine.DefaultTenant, ID: "bench"}, engine.ThreadCreated, engine.ThreadCreatedData{})
			if bc.noThread {
			} else if _, err := e.log.Append(ctx, created, eventlog.At(0)); err != nil {
				b.Fatal(err)
			}
			msgs := make([]engine.Message, 20)
			for i := range msgs {
				msgs[i] = engine.NewMessage(engine.MessageHuman, strings.Repeat("some words ", 20))
				msgs[i].ID = uuid.NewString()
			}
			versions := map[string]int64{}
			var parent *graph.Ref
			i := 0
			for b.Loop() {
				i++
				msgs[len(msgs)-1].Content = fmt.Sprint("answer ", i)
				raw, _ := json.Marshal(msgs)
				versions["messages"]++
				versions["n"]++
				values := map[string]json.RawMessage{"messages": raw, "n": json.RawMessage(fmt.Sprint(i))}
				if bc.extra != nil {
					doc, changes := bc.extra(i)
					if changes || i == 1 {
						versions["doc"]++
					}
					values["doc"] = json.RawMessage(doc)
				}
				cp := graph.Checkpoint{V: 1, ID: uuid.Must(uuid.NewV7()).String(), TS: time.Now().UTC(), ChannelValues: values,
					ChannelVersions: clone(versions), VersionsSeen: map[string]map[string]int64{"agent": {"branch:to:agent": int64(i)}}}
				ref := graph.Ref{ThreadID: "bench", ID: cp.ID}
				if err := e.saver.Put(ctx, ref, cp, map[string]any{"source": "loop", "step": i, "parents": map[string]any{}}, parent); err != nil {
					b.Fatal(err)
				}
				parent = &ref
			}
		})
	}
}

func clone(m map[string]int64) map[string]int64 {
	out := make(map[string]int64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
