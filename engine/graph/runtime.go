package graph

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"

	"github.com/jetgraph/jetgraph/engine"
)

// Config is a run's configuration as nodes see it.
type Config struct {
	Configurable   map[string]any `json:"configurable"`
	Metadata       map[string]any `json:"metadata,omitempty"`
	Tags           []string       `json:"tags,omitempty"`
	RecursionLimit int            `json:"recursion_limit,omitempty"`
}

// String returns configurable[key] as a string, "" when absent.
func (c Config) String(key string) string {
	s, _ := c.Configurable[key].(string)
	return s
}

// Store is the key-value store as nodes reach it.
type Store interface {
	Get(ctx context.Context, namespace []string, key string) (map[string]any, bool, error)
	Put(ctx context.Context, namespace []string, key string, value map[string]any) error
}

// Sink receives a run's stream events, in order. It must not block for long.
type Sink func(Event)

// Runtime is what a node gets besides its input: the run's config and context, the store, the
// stream, and interrupts.
type Runtime struct {
	Config  Config
	Context map[string]any
	Store   Store
	// ThreadID is the thread the run is on ("" for a stateless run).
	ThreadID string

	task  *task
	sink  Sink
	ns    []string
	mu    sync.Mutex
	calls int // interrupts called so far in this task execution
}

// Interrupt pauses the run at this node with value shown to the client. When the run is resumed
// with a value for this interrupt, Interrupt returns it (the node runs again from its start, and
// its n-th call gets the n-th resume value). Otherwise it returns an error the node must return.
func (rt *Runtime) Interrupt(value any) (any, error) {
	rt.mu.Lock()
	i := rt.calls
	rt.calls++
	rt.mu.Unlock()
	if rt.task != nil && i < len(rt.task.resume) {
		return rt.task.resume[i], nil
	}
	return nil, &interruptError{interrupts: []InterruptValue{{Value: value, ID: interruptID(rt.task, i)}}}
}

// interruptID is stable for a task's n-th interrupt, so a client can answer it by id.
func interruptID(t *task, i int) string {
	id := ""
	if t != nil {
		id = t.id
	}
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s|%d", id, i)))
	return hex.EncodeToString(sum[:16])
}

// Task names what rt runs: the node, its super-step, and the subgraph path as node names (task
// ids aside). Unlike task ids, they are the same when a recorded run is executed again, so an
// offline replay keys recorded model and tool calls by them.
func (rt *Runtime) Task() (node string, step int, path []string) {
	for _, p := range rt.ns {
		name, _, _ := strings.Cut(p, ":")
		path = append(path, name)
	}
	if rt.task == nil {
		return "", 0, path
	}
	return rt.task.name, rt.task.step, path
}

// Write emits a custom stream event (KindCustom).
func (rt *Runtime) Write(v any) { rt.emit(KindCustom, v) }

// MessageChunk emits a streamed model token (KindMessages) with the metadata clients
// expect: node, step, triggers and the thread.
func (rt *Runtime) MessageChunk(chunk engine.MessageChunk) {
	md := map[string]any{"thread_id": rt.ThreadID}
	for k, v := range rt.Config.Metadata {
		md[k] = v
	}
	if rt.task != nil {
		md["langgraph_node"] = rt.task.name
		md["langgraph_step"] = rt.task.step
		md["langgraph_triggers"] = rt.task.triggers
		md["langgraph_path"] = rt.task.path
		md["langgraph_checkpoint_ns"] = strings.Join(append(rt.ns, rt.task.name+":"+rt.task.id), "|")
	}
	rt.emit(KindMessages, MessageChunk{Chunk: chunk, Metadata: md})
}

// Emit sends an internal observability event (a kind prefixed TraceModePrefix) to the run's sink.
// Its NS is the node's task path: the runtime's namespace plus "node:task_id", the same element a
// subgraph of this task would add, so that a consumer can tell which task the event belongs to.
func (rt *Runtime) Emit(kind Kind, data any) {
	if rt.sink == nil {
		return
	}
	ns := rt.ns
	if rt.task != nil {
		ns = append(ns[:len(ns):len(ns)], rt.task.name+":"+rt.task.id)
	}
	rt.sink(Event{Kind: kind, NS: ns, Data: data})
}

func (rt *Runtime) emit(kind Kind, data any) {
	if rt.sink != nil {
		rt.sink(Event{Kind: kind, NS: rt.ns, Data: data})
	}
}
