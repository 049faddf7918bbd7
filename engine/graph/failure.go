package graph

import (
	"errors"
	"strings"
)

// taskFailure is the error of a failed task, marked with the path of the node it came from, so
// that whoever logs a run's failure can say where it happened. Its text is its cause's: what
// clients see of the error does not change.
type taskFailure struct {
	node string
	err  error
}

func (f *taskFailure) Error() string { return f.err.Error() }

func (f *taskFailure) Unwrap() error { return f.err }

// failed marks err, the error of task t, with t's node path; an error a subgraph's node already
// marked keeps its deeper path.
func (l *loop) failed(t *task, err error) error {
	var f *taskFailure
	if errors.As(err, &f) {
		return err
	}
	path := make([]string, 0, len(l.o.ns)+1)
	for _, level := range l.o.ns {
		name, _, _ := strings.Cut(level, ":") // a namespace level is "<node>:<task id>"
		path = append(path, name)
	}
	return &taskFailure{node: strings.Join(append(path, t.name), "|"), err: err}
}

// FailedNode returns the node a run's error came from: its name, preceded by those of the
// subgraph nodes it runs in, "|" between levels (as in checkpoint namespaces, without the task
// ids). It is "" for an error that no node raised (a bad input, a failed checkpoint).
func FailedNode(err error) string {
	var f *taskFailure
	if errors.As(err, &f) {
		return f.node
	}
	return ""
}
