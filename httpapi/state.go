package httpapi

import (
	"encoding/json"
	"maps"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/engine/replay"
	"github.com/jetgraph/jetgraph/engine/runner"
	"github.com/jetgraph/jetgraph/engine/streaming"
)

func (s *Server) stateRoutes() {
	s.echo.GET("/threads/:thread_id/state", s.getState)
	s.echo.GET("/threads/:thread_id/state/:checkpoint_id", s.getState)
	s.echo.POST("/threads/:thread_id/state/checkpoint", s.getStateAt)
	s.echo.POST("/threads/:thread_id/state", s.updateState)
	s.echo.PATCH("/threads/:thread_id/state", s.patchState)
	s.echo.POST("/threads/:thread_id/copy", s.copyThread)
	s.echo.POST("/threads/:thread_id/fork", s.forkThread)
	s.echo.POST("/threads/import", s.importThread)
	s.echo.GET("/threads/:thread_id/history", s.history)
	s.echo.POST("/threads/:thread_id/history", s.history)
}

// checkpointJSON is a checkpoint reference as the API shows it.
func checkpointJSON(r *graph.Ref) any {
	if r == nil {
		return nil
	}
	var id any
	if r.ID != "" {
		id = r.ID
	}
	return map[string]any{"thread_id": r.ThreadID, "checkpoint_ns": r.NS, "checkpoint_id": id, "checkpoint_map": nil}
}

// checkpointRefJSON is a thread state's checkpoint r, whose ancestors' checkpoints are parents
// (its metadata's "parents": namespace -> checkpoint id). As in LangGraph's thread state, a
// subgraph's checkpoint names its checkpoint_map (the parents' and its own); the root's has no
// checkpoint_map.
func checkpointRefJSON(r *graph.Ref, parents any) any {
	if r == nil {
		return nil
	}
	var id any
	if r.ID != "" {
		id = r.ID
	}
	out := map[string]any{"thread_id": r.ThreadID, "checkpoint_ns": r.NS, "checkpoint_id": id}
	if r.NS != "" {
		cm := map[string]any{}
		switch p := parents.(type) {
		case map[string]string:
			for k, v := range p {
				cm[k] = v
			}
		case map[string]any:
			maps.Copy(cm, p)
		}
		cm[r.NS] = id
		out["checkpoint_map"] = cm
	}
	return out
}

// stateJSON shapes a snapshot as the thread state of the API; nil is the state of a thread that
// has no checkpoint yet.
func stateJSON(threadID string, s *graph.Snapshot) map[string]any {
	if s == nil {
		return map[string]any{
			"values": map[string]any{}, "next": []string{}, "tasks": []any{}, "metadata": map[string]any{},
			"created_at": nil, "checkpoint": map[string]any{"thread_id": threadID, "checkpoint_ns": "", "checkpoint_id": nil, "checkpoint_map": nil},
			"parent_checkpoint": nil, "interrupts": []any{}, "checkpoint_id": nil, "parent_checkpoint_id": nil,
		}
	}
	tasks := make([]any, len(s.Tasks))
	for i, t := range s.Tasks {
		// A subgraph task names its checkpoint namespace, or, when subgraph state was asked
		// for, carries the subgraph's state instead, as the reference servers' thread state.
		var state, checkpoint any
		if t.SubState != nil {
			state = stateJSON(threadID, t.SubState)
		} else if t.State != nil {
			checkpoint = streaming.TaskCheckpointJSON(t.State)
		}
		tasks[i] = map[string]any{"id": t.ID, "name": t.Name, "path": t.Path, "error": t.Error,
			"interrupts": t.Interrupts, "checkpoint": checkpoint, "state": state, "result": t.Result}
	}
	var parentID any
	if s.Parent != nil {
		parentID = s.Parent.ID
	}
	return map[string]any{
		"values": s.Values, "next": s.Next, "tasks": tasks, "metadata": s.Metadata,
		"created_at": engine.At(s.CreatedAt), "checkpoint": checkpointRefJSON(&s.Ref, s.Metadata["parents"]),
		"parent_checkpoint": checkpointRefJSON(s.Parent, s.Metadata["parents"]), "interrupts": s.Interrupts,
		"checkpoint_id": s.Ref.ID, "parent_checkpoint_id": parentID,
	}
}

// readCheckpointRef reads a {"checkpoint_id", "checkpoint_ns"} object at name.
func readCheckpointRef(f *Fields, name string, threadID string) graph.Ref {
	ref := graph.Ref{ThreadID: threadID}
	m := f.Object(name)
	if m == nil {
		return ref
	}
	if id, ok := m["checkpoint_id"].(string); ok && id != "" {
		if _, err := ParseUUID(id); err != nil {
			f.errs.Add("uuid_parsing", "Input should be a valid UUID", f.loc, name, "checkpoint_id")
		}
		ref.ID = id
	}
	if ns, ok := m["checkpoint_ns"].(string); ok {
		ref.NS = ns
	}
	return ref
}

func (s *Server) getState(c echo.Context) error {
	var errs engine.Violations
	id := PathUUID(c, "thread_id", &errs)
	ref := graph.Ref{ThreadID: id, ID: c.Param("checkpoint_id")}
	if ref.ID != "" {
		if _, err := ParseUUID(ref.ID); err != nil {
			errs.Add("uuid_parsing", "Input should be a valid UUID", "path", "checkpoint_id")
		}
	}
	q := QueryFields(c, &errs)
	subgraphs := q.Bool("subgraphs", false)
	ref.NS = q.String("checkpoint_ns")
	if err := errs.Err("threads.state"); err != nil {
		return err
	}
	snap, err := s.deps.Runner.State(c.Request().Context(), ref, subgraphs)
	if err != nil {
		return err
	}
	return OK(c, stateJSON(id, snap))
}

func (s *Server) getStateAt(c echo.Context) error {
	var errs engine.Violations
	id := PathUUID(c, "thread_id", &errs)
	f, err := ReadBody(c, &errs)
	if err != nil {
		return err
	}
	f.Require("checkpoint")
	ref := readCheckpointRef(f, "checkpoint", id)
	subgraphs := f.Bool("subgraphs", false)
	if err := errs.Err("threads.state"); err != nil {
		return err
	}
	snap, err := s.deps.Runner.State(c.Request().Context(), ref, subgraphs)
	if err != nil {
		return err
	}
	return OK(c, stateJSON(id, snap))
}

func (s *Server) updateState(c echo.Context) error {
	var errs engine.Violations
	id := PathUUID(c, "thread_id", &errs)
	f, err := ReadBody(c, &errs)
	if err != nil {
		return err
	}
	if err := stateWithin(f, "threads.update_state", "values"); err != nil {
		return err
	}
	ref := readCheckpointRef(f, "checkpoint", id)
	if cid := f.UUID("checkpoint_id"); cid != "" {
		ref.ID = cid
	}
	u := graph.Update{Values: f.Any("values"), AsNode: f.String("as_node")}
	if err := errs.Err("threads.update_state"); err != nil {
		return err
	}
	newRef, err := s.deps.Runner.UpdateState(c.Request().Context(), ref, [][]graph.Update{{u}})
	if err != nil {
		return err
	}
	return OK(c, map[string]any{"checkpoint": checkpointJSON(&newRef)})
}

func (s *Server) history(c echo.Context) error {
	var errs engine.Violations
	id := PathUUID(c, "thread_id", &errs)
	var f *Fields
	if c.Request().Method == http.MethodGet {
		f = QueryFields(c, &errs)
	} else {
		var err error
		if f, err = ReadBody(c, &errs); err != nil {
			return err
		}
	}
	opts := graph.ListOptions{Limit: f.Limit(10, 1), Metadata: f.Object("metadata")}
	ref := readCheckpointRef(f, "checkpoint", id)
	if b := f.Any("before"); b != nil {
		switch v := b.(type) {
		case string:
			opts.Before = v
		case map[string]any:
			opts.Before, _ = v["checkpoint_id"].(string)
		}
	}
	if err := errs.Err("threads.history"); err != nil {
		return err
	}
	snaps, err := s.deps.Runner.History(c.Request().Context(), ref, opts)
	if err != nil {
		return err
	}
	out := make([]any, len(snaps))
	for i := range snaps {
		out[i] = stateJSON(id, &snaps[i])
	}
	return OK(c, out)
}

// waitJSON is the answer of a waited run: the values, the interrupts under "__interrupt__", or the
// error under "__error__".
func waitJSON(values graph.State, interrupts []graph.InterruptValue, runErr error) any {
	if runErr != nil {
		class, msg := graph.ClassOf(runErr)
		return map[string]any{"__error__": map[string]any{"error": class, "message": msg}}
	}
	out := map[string]any{}
	for k, v := range values {
		out[k] = v
	}
	if len(interrupts) > 0 {
		out["__interrupt__"] = interrupts
	}
	return out
}

// decodeCommand reads a run's command.
func decodeCommand(f *Fields) *graph.Command {
	if !f.Present("command") {
		return nil
	}
	var cmd graph.Command
	if err := json.Unmarshal(f.raw["command"], &cmd); err != nil {
		f.Add("model_type", "Input should be an object with update, goto and resume", "command")
		return nil
	}
	return &cmd
}

// readSupersteps reads the supersteps of a thread creation: [{"updates": [{values, command, as_node}]}].
func readSupersteps(f *Fields) [][]graph.Update {
	if !f.Present("supersteps") {
		return nil
	}
	var raw []struct {
		Updates []graph.Update `json:"updates"`
	}
	if err := json.Unmarshal(f.raw["supersteps"], &raw); err != nil {
		f.Add("list_type", `Input should be a list of {"updates": [{"values", "command", "as_node"}]}`, "supersteps")
		return nil
	}
	out := make([][]graph.Update, len(raw))
	for i, st := range raw {
		if len(st.Updates) == 0 {
			f.errs.Add("too_short", "A superstep needs at least one update", f.loc, "supersteps", i, "updates")
		}
		out[i] = st.Updates
	}
	return out
}

func (s *Server) patchState(c echo.Context) error {
	var errs engine.Violations
	id := PathUUID(c, "thread_id", &errs)
	f, err := ReadBody(c, &errs)
	if err != nil {
		return err
	}
	f.Require("metadata")
	md := f.Object("metadata")
	ref := readCheckpointRef(f, "checkpoint", id)
	if cid := f.UUID("checkpoint_id"); cid != "" {
		ref.ID = cid
	}
	if err := errs.Err("threads.patch_state"); err != nil {
		return err
	}
	if err := s.deps.Runner.PatchState(c.Request().Context(), ref, md); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

func (s *Server) copyThread(c echo.Context) error {
	var errs engine.Violations
	id := PathUUID(c, "thread_id", &errs)
	if err := errs.Err("threads.copy"); err != nil {
		return err
	}
	th, err := s.deps.Runner.Copy(c.Request().Context(), id)
	if err != nil {
		return err
	}
	th.TTL = nil
	return OK(c, th)
}

// forkThread is POST /threads/{thread_id}/fork: a new thread from a step of this one (its
// checkpoint_id, or its step on the current branch), with an optional state update on it.
func (s *Server) forkThread(c echo.Context) error {
	var errs engine.Violations
	id := PathUUID(c, "thread_id", &errs)
	f, err := ReadBody(c, &errs)
	if err != nil {
		return err
	}
	if err := stateWithin(f, "threads.fork", "values"); err != nil {
		return err
	}
	fork := runner.Fork{ThreadID: id, CheckpointID: f.UUID("checkpoint_id"), Metadata: f.Object("metadata")}
	if f.Present("step") {
		step := f.Int("step", 0, -1)
		fork.Step = &step
	}
	switch {
	case fork.CheckpointID == "" && fork.Step == nil:
		errs.Add("missing", "Field required: checkpoint_id or step", "body", "checkpoint_id")
	case fork.CheckpointID != "" && fork.Step != nil:
		errs.Add("value_error", "Give checkpoint_id or step, not both", "body", "step")
	}
	if f.Present("values") || f.Present("as_node") {
		fork.Update = &graph.Update{Values: f.Any("values"), AsNode: f.String("as_node")}
	}
	if err := errs.Err("threads.fork"); err != nil {
		return err
	}
	th, err := s.deps.Runner.Fork(c.Request().Context(), fork)
	if err != nil {
		return err
	}
	th.TTL = nil
	return OK(c, th)
}

// importThread is POST /threads/import: a thread made from an export file (replay.File, what
// `jetgraph export thread` writes), under a new id, or the file's with ?keep_id=true.
func (s *Server) importThread(c echo.Context) error {
	var errs engine.Violations
	keep := QueryFields(c, &errs).Bool("keep_id", false)
	f, err := ReadBody(c, &errs)
	if err != nil {
		return err
	}
	file := replay.File{JGX: f.Int("jgx", 0, 0), ThreadID: f.String("thread_id"), Metadata: f.Object("metadata")}
	if f.Require("events") && !f.decode("events", &file.Events) {
		f.Add("list_type", "Input should be a list of events", "events")
	}
	if err := errs.Err("threads.import"); err != nil {
		return err
	}
	if err := file.Check(); err != nil {
		return err
	}
	id := ""
	if keep {
		id = file.ThreadID
	}
	th, err := s.deps.Runner.Import(c.Request().Context(), id, file.Metadata, file.Events)
	if err != nil {
		return err
	}
	th.TTL = nil
	return OK(c, th)
}
