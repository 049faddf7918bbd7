// Package assistants is the write and read side of assistants: versioned configurations of the
// graphs registered in the binary. Every graph has a system assistant, created at start-up, whose
// id is derived from the graph id; a graph id is accepted wherever an assistant id is.
package assistants

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/google/uuid"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/command"
	"github.com/jetgraph/jetgraph/engine/threads"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/projections"
)

// GraphNamespace is the UUID namespace of system assistant ids, as on the reference servers.
const GraphNamespace = "6ba7b821-9dad-11d1-80b4-00c04fd430c8"

var graphNamespace = uuid.MustParse(GraphNamespace)

// SystemID is the id of graph's system assistant: UUIDv5(GraphNamespace, graph).
func SystemID(graph string) string { return uuid.NewSHA1(graphNamespace, []byte(graph)).String() }

// SystemMetadata is the metadata of every system assistant.
func SystemMetadata() map[string]any { return map[string]any{"created_by": "system"} }

// maxDeleteThreads bounds the threads deleted with an assistant: they go in one atomic batch with
// the assistant's own event, and a batch holds at most 1000 events.
const maxDeleteThreads = 999

// Service manages assistants.
type Service struct {
	cmd     *command.Runner
	view    *projections.Assistants
	threads *projections.Threads
	log     *slog.Logger

	mu     sync.RWMutex
	graphs []string // registered graph ids, sorted; set by EnsureSystem
}

// New returns the assistant service writing through cmd and reading view; threads is read to find
// the threads deleted with an assistant. No graph is registered until EnsureSystem.
func New(cmd *command.Runner, view *projections.Assistants, threads *projections.Threads, log *slog.Logger) *Service {
	if log == nil {
		log = slog.Default()
	}
	return &Service{cmd: cmd, view: view, threads: threads, log: log}
}

// Aggregate names assistant id of the context's tenant in the log.
func Aggregate(ctx context.Context, id string) eventlog.Aggregate {
	return eventlog.Aggregate{Kind: "assistant", Tenant: engine.TenantFrom(ctx), ID: id}
}

// NotFound is the error for an assistant that does not exist, with the reference servers' text.
func NotFound(op string) error {
	return engine.E(engine.Op(op), engine.NotFound, "Assistant not found")
}

// NoAssistantDetail is the reference servers' text when a run names an assistant (or graph) that
// does not exist.
func NoAssistantDetail(id string) string {
	return fmt.Sprintf("No assistant found for %q. Make sure the assistant ID is for a valid assistant or a valid graph ID.", id)
}

// NoAssistant is the NotFound error with NoAssistantDetail, for run creation.
func NoAssistant(op, id string) error {
	return engine.E(engine.Op(op), engine.NotFound, NoAssistantDetail(id))
}

// Graphs returns the registered graph ids, sorted.
func (s *Service) Graphs() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return slices.Clone(s.graphs)
}

// IsGraph reports whether id is a registered graph.
func (s *Service) IsGraph(id string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, ok := slices.BinarySearch(s.graphs, id)
	return ok
}

// CheckGraph records a violation at loc when graphID is not a registered graph.
func (s *Service) CheckGraph(v *engine.Violations, graphID string, loc ...any) {
	if s.IsGraph(graphID) {
		return
	}
	graphs := s.Graphs()
	if len(graphs) == 0 {
		v.Add("literal_error", "No graph is registered on this server", loc...)
		return
	}
	q := make([]string, 0, len(graphs))
	for _, g := range graphs {
		q = append(q, "'"+g+"'")
	}
	v.Add("literal_error", "Input should be a registered graph: "+strings.Join(q, ", "), loc...)
}

// ID returns the assistant id that idOrGraph names: the system assistant's id for a registered
// graph id, the canonical form of a UUID, or false when it is neither.
func (s *Service) ID(idOrGraph string) (string, bool) {
	if s.IsGraph(idOrGraph) {
		return SystemID(idOrGraph), true
	}
	id, err := uuid.Parse(idOrGraph)
	if err != nil {
		return "", false
	}
	return id.String(), true
}

// Create is a request to create an assistant.
type Create struct {
	AssistantID string // empty: a new UUID
	GraphID     string
	Config      map[string]any
	Context     map[string]any
	Metadata    map[string]any
	IfExists    string // engine.IfExistsRaise (default) or engine.IfExistsDoNothing
	Name        string // empty: the graph id
	Description *string
}

// Create makes an assistant at version 1, or returns the existing one when IfExists is do_nothing.
func (s *Service) Create(ctx context.Context, c Create) (engine.Assistant, error) {
	const op = "assistants.create"
	var v engine.Violations
	s.CheckGraph(&v, c.GraphID, "body", "graph_id")
	// Nothing is stored yet: a masked placeholder (copied from another answer) is refused.
	engine.KeepSecretsMap(&v, c.Config, nil, "body", "config")
	engine.KeepSecretsMap(&v, c.Context, nil, "body", "context")
	if err := v.Err(op); err != nil {
		return engine.Assistant{}, err
	}
	if c.AssistantID == "" {
		c.AssistantID = uuid.NewString()
	}
	if c.Name == "" {
		c.Name = c.GraphID
	}
	filter, err := s.authorizeCreate(ctx, op, &c)
	if err != nil {
		return engine.Assistant{}, err
	}
	agg := Aggregate(ctx, c.AssistantID)
	_, err = s.cmd.Run(ctx, op, func() (command.Decision, error) {
		old, exists, err := s.view.Get(agg.Tenant, agg.ID)
		if err != nil {
			return nil, engine.E(engine.Op(op), err)
		}
		if exists {
			// One the user may not read exists as far as they know, and cannot be returned.
			if c.IfExists == engine.IfExistsDoNothing && old.Visible(filter) {
				return nil, nil
			}
			return nil, engine.E(engine.Op(op), engine.Exists, "Assistant already exists")
		}
		spec := engine.AssistantSpec{GraphID: c.GraphID, Config: c.Config, Context: c.Context,
			Metadata: c.Metadata, Name: c.Name, Description: c.Description}
		return s.decide(op, agg, engine.AssistantCreated, engine.AssistantCreatedData{AssistantSpec: spec})
	})
	if err != nil {
		return engine.Assistant{}, err
	}
	return s.get(ctx, op, agg.ID)
}

// authorizeCreate asks the user's rules about c and takes what they changed of its config,
// context and metadata (an owner, say). It returns the filter an existing assistant of that id
// must match to be returned by do_nothing.
func (s *Service) authorizeCreate(ctx context.Context, op string, c *Create) (engine.Filter, error) {
	value, filter, err := engine.Authorize(ctx, engine.ResourceAssistants, engine.ActionCreate, func() map[string]any {
		return map[string]any{"assistant_id": c.AssistantID, "graph_id": c.GraphID, "config": engine.ObjectValue(c.Config),
			"context": engine.ObjectValue(c.Context), "metadata": engine.ObjectValue(c.Metadata), "if_exists": c.IfExists, "name": c.Name}
	})
	if err != nil {
		return filter, err
	}
	return filter, takeObjects(op, value, &c.Config, &c.Context, &c.Metadata)
}

// authorize asks the user's rules about action on the record id and returns the filter it must
// match; extra adds the fields of the action to the value.
func authorize(ctx context.Context, action engine.AuthAction, id string, extra map[string]any) (map[string]any, engine.Filter, error) {
	return engine.AuthorizeRecord(ctx, engine.ResourceAssistants, action, "assistant_id", id, extra)
}

// decide is the one-event decision of a command on agg.
func (s *Service) decide(op string, agg eventlog.Aggregate, typ string, data any) (command.Decision, error) {
	return s.cmd.One(op, agg, typ, data)
}

// Get returns the assistant idOrGraph names (an assistant id or a registered graph id), when the
// user's rules let them read it (NotFound otherwise, as if it did not exist). System assistants
// are readable whatever the rules' filter, though the rules are asked.
func (s *Service) Get(ctx context.Context, idOrGraph string) (engine.Assistant, error) {
	return s.resolve(ctx, "assistants.get", idOrGraph)
}

// Resolve returns the assistant idOrGraph names for a run or a cron: an assistant id, or a
// registered graph id for the graph's system assistant. A missing one, or one the user's rules
// do not let them read, is NotFound ("Assistant not found"); run creation replaces the text with
// NoAssistantDetail. As on the reference servers, the rules are not asked about a system
// assistant: every authenticated user may run the graphs.
func (s *Service) Resolve(ctx context.Context, idOrGraph string) (engine.Assistant, error) {
	const op = "assistants.resolve"
	id, ok := s.ID(idOrGraph)
	if !ok {
		return engine.Assistant{}, NotFound(op)
	}
	a, err := s.get(ctx, op, id)
	if err != nil {
		return a, err
	}
	if err := Readable(ctx, a); err != nil {
		return engine.Assistant{}, err
	}
	return a, nil
}

// Readable answers nil when ctx's rules let the user read a, NotFound (as for a missing
// assistant) when their assistants.read filter hides it, or the rules' refusal. A system
// assistant every user may use: the rules are not asked about it, as on the reference.
func Readable(ctx context.Context, a engine.Assistant) error {
	if a.IsSystem() {
		return nil
	}
	_, filter, err := authorize(ctx, engine.ActionRead, a.AssistantID, nil)
	if err != nil {
		return err
	}
	if !a.Visible(filter) {
		return NotFound("assistants.read")
	}
	return nil
}

// resolve is Get: the assistant idOrGraph names if the user may read it.
func (s *Service) resolve(ctx context.Context, op, idOrGraph string) (engine.Assistant, error) {
	id, ok := s.ID(idOrGraph)
	if !ok {
		return engine.Assistant{}, NotFound(op)
	}
	_, filter, err := authorize(ctx, engine.ActionRead, id, nil)
	if err != nil {
		return engine.Assistant{}, err
	}
	a, err := s.get(ctx, op, id)
	if err != nil {
		return a, err
	}
	if !a.Visible(filter) {
		return engine.Assistant{}, NotFound(op)
	}
	return a, nil
}

// getFiltered is get for a change the user's rules filter with f: an assistant that does not
// match is NotFound, system assistants included.
func (s *Service) getFiltered(ctx context.Context, op, id string, f engine.Filter) (engine.Assistant, error) {
	a, err := s.get(ctx, op, id)
	if err == nil && !f.Match(a.Metadata) {
		return engine.Assistant{}, NotFound(op)
	}
	return a, err
}

func (s *Service) get(ctx context.Context, op, id string) (engine.Assistant, error) {
	a, ok, err := s.view.Get(engine.TenantFrom(ctx), id)
	if err == nil && !ok {
		// Perhaps created through another process: catch up with the log once.
		if cerr := s.cmd.Projector.CatchUp(ctx); cerr == nil {
			a, ok, err = s.view.Get(engine.TenantFrom(ctx), id)
		}
	}
	if err != nil {
		return engine.Assistant{}, engine.E(engine.Op(op), err)
	}
	if !ok {
		return engine.Assistant{}, NotFound(op)
	}
	return a, nil
}

// Patch is a change to an assistant. Absent (nil, empty GraphID) fields keep their value; config
// and context replace the old ones, metadata is merged over the old.
type Patch struct {
	GraphID     string
	Config      map[string]any
	Context     map[string]any
	Metadata    map[string]any
	Name        *string
	Description *string
}

// Patch makes a new version of the assistant (one more than its highest) from its latest version
// and p, and makes it the latest.
func (s *Service) Patch(ctx context.Context, idOrGraph string, p Patch) (engine.Assistant, error) {
	const op = "assistants.patch"
	if p.GraphID != "" {
		var v engine.Violations
		s.CheckGraph(&v, p.GraphID, "body", "graph_id")
		if err := v.Err(op); err != nil {
			return engine.Assistant{}, err
		}
	}
	id, ok := s.ID(idOrGraph)
	if !ok {
		return engine.Assistant{}, NotFound(op)
	}
	filter, err := s.authorizePatch(ctx, op, id, &p)
	if err != nil {
		return engine.Assistant{}, err
	}
	agg := Aggregate(ctx, id)
	_, err = s.cmd.Run(ctx, op, func() (command.Decision, error) {
		old, err := s.getFiltered(ctx, op, id, filter)
		if err != nil {
			return nil, err
		}
		max, err := s.view.MaxVersion(agg.Tenant, id)
		if err != nil {
			return nil, engine.E(engine.Op(op), err)
		}
		// A client writing back what a GET showed sends masked placeholders: keep the secrets.
		kept := p
		var v engine.Violations
		kept.Config = engine.KeepSecretsMap(&v, p.Config, old.Config, "body", "config")
		kept.Context = engine.KeepSecretsMap(&v, p.Context, old.Context, "body", "context")
		if err := v.Err(op); err != nil {
			return nil, err
		}
		return s.decide(op, agg, engine.AssistantUpdated, engine.AssistantUpdatedData{
			Version: max + 1, AssistantSpec: kept.apply(old)})
	})
	if err != nil {
		return engine.Assistant{}, err
	}
	return s.get(ctx, op, id)
}

// takeObjects sets config, context and metadata to what the user's rules left of them in value.
// An empty object the rules left alone (given for them to fill) changes nothing.
func takeObjects(op string, value map[string]any, config, contextObj, metadata *map[string]any) error {
	for key, dst := range map[string]*map[string]any{"config": config, "context": contextObj, "metadata": metadata} {
		v, err := engine.ValueMap(op, value, key, *dst)
		if err != nil {
			return err
		}
		if v != nil && (len(v) > 0 || *dst != nil) {
			*dst = v
		}
	}
	return nil
}

// authorizePatch asks the user's rules about p and takes what they changed of its config,
// context and metadata; it returns the filter the assistant must match.
func (s *Service) authorizePatch(ctx context.Context, op, id string, p *Patch) (engine.Filter, error) {
	var name any
	if p.Name != nil {
		name = *p.Name
	}
	var graph any
	if p.GraphID != "" {
		graph = p.GraphID
	}
	value, filter, err := authorize(ctx, engine.ActionUpdate, id, map[string]any{"graph_id": graph,
		"config": engine.ObjectValue(p.Config), "context": p.Context, "metadata": engine.ObjectValue(p.Metadata), "name": name})
	if err != nil {
		return filter, err
	}
	return filter, takeObjects(op, value, &p.Config, &p.Context, &p.Metadata)
}

// apply returns the content of old with p applied.
func (p Patch) apply(old engine.Assistant) engine.AssistantSpec {
	spec := engine.AssistantSpec{GraphID: old.GraphID, Config: old.Config, Context: old.Context,
		Metadata: old.Metadata, Name: old.Name, Description: old.Description}
	if p.GraphID != "" {
		spec.GraphID = p.GraphID
	}
	if p.Config != nil {
		spec.Config = p.Config
	}
	if p.Context != nil {
		spec.Context = p.Context
	}
	if p.Metadata != nil {
		spec.Metadata = maps.Clone(old.Metadata)
		if spec.Metadata == nil {
			spec.Metadata = map[string]any{}
		}
		maps.Copy(spec.Metadata, p.Metadata)
	}
	if p.Name != nil {
		spec.Name = *p.Name
	}
	if p.Description != nil {
		spec.Description = p.Description
	}
	return spec
}

// SetLatest makes an existing version of the assistant the current one.
func (s *Service) SetLatest(ctx context.Context, idOrGraph string, version int) (engine.Assistant, error) {
	const op = "assistants.set_latest"
	id, ok := s.ID(idOrGraph)
	if !ok {
		return engine.Assistant{}, NotFound(op)
	}
	_, filter, err := authorize(ctx, engine.ActionUpdate, id, map[string]any{"version": version})
	if err != nil {
		return engine.Assistant{}, err
	}
	agg := Aggregate(ctx, id)
	_, err = s.cmd.Run(ctx, op, func() (command.Decision, error) {
		if _, err := s.getFiltered(ctx, op, id, filter); err != nil {
			return nil, err
		}
		if _, ok, err := s.view.Version(agg.Tenant, id, version); err != nil || !ok {
			if err != nil {
				return nil, engine.E(engine.Op(op), err)
			}
			return nil, engine.E(engine.Op(op), engine.NotFound, "Assistant version not found")
		}
		return s.decide(op, agg, engine.AssistantLatestSet, engine.AssistantLatestSetData{Version: version})
	})
	if err != nil {
		return engine.Assistant{}, err
	}
	return s.get(ctx, op, id)
}

// Versions returns a page of the assistant's versions whose metadata contains metadata, newest
// first, and how many match in all.
func (s *Service) Versions(ctx context.Context, idOrGraph string, metadata map[string]any, limit, offset int) ([]engine.AssistantVersion, int, error) {
	const op = "assistants.versions"
	a, err := s.resolve(ctx, op, idOrGraph) // the rules' read filter, on the assistant
	if err != nil {
		return nil, 0, err
	}
	vs, total, err := s.view.Versions(engine.TenantFrom(ctx), a.AssistantID, metadata, limit, offset)
	if err != nil {
		return nil, 0, engine.E(engine.Op(op), err)
	}
	return vs, total, nil
}

// Delete removes the assistant and its versions. With deleteThreads, every thread of the tenant
// whose metadata.assistant_id is the assistant's id is deleted in the same atomic batch.
func (s *Service) Delete(ctx context.Context, idOrGraph string, deleteThreads bool) error {
	const op = "assistants.delete"
	id, ok := s.ID(idOrGraph)
	if !ok {
		return NotFound(op)
	}
	_, filter, err := authorize(ctx, engine.ActionDelete, id, nil)
	if err != nil {
		return err
	}
	agg := Aggregate(ctx, id)
	_, err = s.cmd.Run(ctx, op, func() (command.Decision, error) {
		if _, err := s.getFiltered(ctx, op, id, filter); err != nil {
			return nil, err
		}
		var doomed []engine.Thread
		if deleteThreads {
			var err error
			doomed, _, err = s.threads.Search(agg.Tenant, engine.ThreadQuery{Metadata: map[string]any{"assistant_id": id}})
			if err != nil {
				return nil, engine.E(engine.Op(op), err)
			}
			if doomed, err = deletable(ctx, doomed); err != nil {
				return nil, err
			}
			if len(doomed) > maxDeleteThreads {
				return nil, engine.E(engine.Op(op), engine.TooLarge, fmt.Sprintf(
					"The assistant has %d threads; at most %d can be deleted with it. Delete some threads first.", len(doomed), maxDeleteThreads))
			}
		}
		data := engine.AssistantDeletedData{}
		for _, th := range doomed {
			data.Threads = append(data.Threads, th.ThreadID)
		}
		d, err := s.decide(op, agg, engine.AssistantDeleted, data)
		if err != nil {
			return nil, err
		}
		for _, th := range doomed {
			tagg := threads.Aggregate(ctx, th.ThreadID)
			expect, err := s.cmd.Version(tagg)
			if err != nil {
				return nil, err
			}
			e, err := threads.DeleteEvent(tagg, "assistant_deleted")
			if err != nil {
				return nil, engine.E(engine.Op(op), err)
			}
			d = append(d, eventlog.Pending{Event: e, Expect: expect})
		}
		return d, nil
	})
	return err
}

// deletable keeps the threads the user's rules let them delete: as on the reference servers,
// deleting an assistant with its threads leaves those of others (and those a rule refuses).
func deletable(ctx context.Context, ths []engine.Thread) ([]engine.Thread, error) {
	if engine.AuthorizerFrom(ctx) == nil {
		return ths, nil
	}
	var keep []engine.Thread
	for _, th := range ths {
		_, f, err := engine.Authorize(ctx, engine.ResourceThreads, engine.ActionDelete, func() map[string]any {
			return map[string]any{"thread_id": th.ThreadID}
		})
		switch {
		case engine.Is(engine.Forbidden, err):
			continue
		case err != nil:
			return nil, err
		case f.Match(th.Metadata):
			keep = append(keep, th)
		}
	}
	return keep, nil
}

// Search returns a page of the tenant's assistants matching q that the user's rules let them
// read (system assistants always), and how many match in all.
func (s *Service) Search(ctx context.Context, q engine.AssistantQuery) ([]engine.Assistant, int, error) {
	const op = "assistants.search"
	var graph any
	if q.GraphID != "" {
		graph = q.GraphID
	}
	value, filter, err := engine.Authorize(ctx, engine.ResourceAssistants, engine.ActionSearch, func() map[string]any {
		return map[string]any{"graph_id": graph, "metadata": engine.ObjectValue(q.Metadata), "limit": q.Limit, "offset": q.Offset}
	})
	if err != nil {
		return nil, 0, err
	}
	if q.Metadata, err = engine.ValueMap(op, value, "metadata", q.Metadata); err != nil {
		return nil, 0, err
	}
	q.Auth = q.Auth.And(filter)
	as, total, err := s.view.Search(engine.TenantFrom(ctx), q)
	if err != nil {
		return nil, 0, engine.E(engine.Op("assistants.search"), err)
	}
	return as, total, nil
}

// SystemGraph is a graph assistants may use, with the defaults of its system assistant.
type SystemGraph struct {
	ID string
	// Config ({"configurable": ...}) and Context are the system assistant's, as created.
	Config  map[string]any
	Context map[string]any
}

// EnsureSystem registers graphs (the graphs assistants may use) and creates the system assistant
// of each that lacks one: id SystemID(graph), name the graph id, metadata created_by=system,
// version 1, and the graph's Config and Context. An existing system assistant is left as it is,
// even when the defaults have changed since it was made. It is idempotent, and safe when several
// processes start at once: the loser of the append race finds the assistant made and does
// nothing.
func (s *Service) EnsureSystem(ctx context.Context, graphs []SystemGraph) error {
	const op = "assistants.ensure_system"
	byID := make(map[string]SystemGraph, len(graphs))
	set := make([]string, 0, len(graphs))
	for _, g := range graphs {
		if g.ID == "" {
			return engine.E(engine.Op(op), engine.Invalid, "A graph id cannot be empty.")
		}
		if _, dup := byID[g.ID]; dup {
			return engine.E(engine.Op(op), engine.Invalid, fmt.Sprintf("Graph %s is registered twice.", g.ID))
		}
		byID[g.ID] = g
		set = append(set, g.ID)
	}
	slices.Sort(set)
	s.mu.Lock()
	s.graphs = set
	s.mu.Unlock()
	for _, g := range set {
		agg := Aggregate(ctx, SystemID(g))
		created := false
		_, err := s.cmd.Run(ctx, op, func() (command.Decision, error) {
			created = false
			if _, ok, err := s.view.Get(agg.Tenant, agg.ID); err != nil || ok {
				if err != nil {
					return nil, engine.E(engine.Op(op), err)
				}
				return nil, nil
			}
			created = true
			spec := engine.AssistantSpec{GraphID: g, Name: g, Metadata: SystemMetadata(),
				Config: byID[g].Config, Context: byID[g].Context}
			return s.decide(op, agg, engine.AssistantCreated, engine.AssistantCreatedData{AssistantSpec: spec})
		})
		switch {
		case engine.Is(engine.Conflict, err):
			// Another process kept winning the race: it created the assistant.
		case err != nil:
			return err
		case created:
			s.log.Info("assistants: created system assistant", "graph_id", g, "assistant_id", agg.ID)
		}
	}
	return nil
}
