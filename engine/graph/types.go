// Package graph is jetgraph's graph runtime: LangGraph's execution model in Go. A graph is
// state channels, nodes and edges; a run executes it in super-steps, the nodes of one step
// concurrently, and saves one checkpoint per step through a Saver.
//
// Invariants:
//   - Writes of a step become visible only in the next step, applied in task order (tasks of
//     nodes in the order the nodes were added, then Send tasks in the order they were sent), so
//     a run is deterministic whatever the scheduling of its nodes.
//   - A checkpoint is saved after every step; step -1 holds the input (source "input").
//   - A task is identified by its checkpoint, step, namespace and name, so the same task gets the
//     same id when a step is run again after an interrupt, and its finished siblings' writes
//     (saved as pending writes) are reused instead of running them twice.
//
// The package has no persistence or transport of its own: checkpoints go to a Saver, stream
// events to a Sink, and nodes reach the store through the Store interface.
package graph

import (
	"errors"
	"fmt"

	"github.com/jetgraph/jetgraph/engine"
)

// Names with a meaning to the runtime.
const (
	Start     = "__start__"
	End       = "__end__"
	Input     = "__input__"
	Interrupt = "__interrupt__"
	resumeKey = "__resume__"
	errorKey  = "__error__"
	tasksKey  = "__pregel_tasks"
)

// State is what a node reads: the values of the graph's channels.
type State map[string]any

// Send asks for node to run in the next step with Arg as its input (map-reduce fan-out).
type Send struct {
	Node string `json:"node"`
	Arg  any    `json:"arg"`
}

// Command is what a node may return instead of a plain update, and what a run may be given as
// input: Update is written to the state, Goto names the next nodes (string, []string, Send or
// []Send), Resume answers pending interrupts (a value, or a map of interrupt id to value).
type Command struct {
	Update map[string]any `json:"update,omitempty"`
	Goto   any            `json:"goto,omitempty"`
	Resume any            `json:"resume,omitempty"`
}

// InterruptValue is a pending interrupt as the API shows it.
type InterruptValue struct {
	Value any    `json:"value"`
	ID    string `json:"id"`
}

// interruptError is how a node's call to Runtime.Interrupt stops the node.
type interruptError struct{ interrupts []InterruptValue }

func (e *interruptError) Error() string { return fmt.Sprintf("graph interrupted: %v", e.interrupts) }

// ErrInterrupted reports that a run stopped at an interrupt; the caller resumes it later.
var ErrInterrupted = errors.New("graph: run interrupted")

// NodeError is a failure of a node or of the run, with the class name clients see
// ({"error": Class, "message": Message}).
type NodeError struct {
	Class   string
	Message string
	Node    string
}

func (e *NodeError) Error() string {
	if e.Node != "" {
		return fmt.Sprintf("node %s: %s: %s", e.Node, e.Class, e.Message)
	}
	return e.Class + ": " + e.Message
}

// Errorf returns an error of the given class, as a node raises an exception.
func Errorf(class, format string, args ...any) error {
	return &NodeError{Class: class, Message: fmt.Sprintf(format, args...)}
}

// RunErrorOf is the failure of a run that ended with err, classed as ClassOf does; nil for nil.
func RunErrorOf(err error) *engine.RunError {
	if err == nil {
		return nil
	}
	class, msg := ClassOf(err)
	return &engine.RunError{Class: class, Message: msg, Cause: err}
}

// ClassOf returns the error class of err and the message clients see: a NodeError's class, or a
// generic one. An engine error shows its detail only: its cause is for the server's log.
func ClassOf(err error) (class, message string) {
	var ne *NodeError
	if errors.As(err, &ne) {
		return ne.Class, ne.Message
	}
	var iu *InvalidUpdateError
	if errors.As(err, &iu) {
		return "InvalidUpdateError", iu.Msg
	}
	var ee *engine.Error
	if errors.As(err, &ee) && ee.Detail != "" {
		return "Exception", ee.Detail
	}
	return "Exception", err.Error()
}

// recursionError is what a run that exceeds its step budget fails with.
func recursionError(limit int) error {
	return &NodeError{Class: "GraphRecursionError", Message: fmt.Sprintf(
		"Recursion limit of %d reached without hitting a stop condition. You can increase the limit by setting the `recursion_limit` config key.", limit)}
}
