// Package traces folds the trace stream (eventlog.TraceStream) into the trace projection file,
// and reads it: runs with their descendants' roll-ups, projects and their counters, feedback and
// its tokens, the expiry of old traces. It is the tracing context's room in the projections
// layer, built on the projector machinery of package projections (a Projector keeps it
// current); it holds the trace stream's event types and data.
package traces

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"maps"
	"math"
	"time"

	"github.com/google/uuid"
	"go.etcd.io/bbolt"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/tracing/trace"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/projections"
)

// Aggregate kinds and event types of the trace stream (eventlog.TraceStream). A trace is one
// aggregate (kind "trace", id = the trace id): its runs' posts and patches and its feedback. A
// tracing project is an aggregate of kind "trace_project" (id = ProjectID of its name).
const (
	TraceKind        = "trace"
	TraceProjectKind = "trace_project"

	RunPosted       = "run_posted"       // RunData: a run as a client posted it
	RunPatched      = "run_patched"      // RunData: a change to a run, applied in log order
	FeedbackCreated = "feedback_created" // FeedbackData: a feedback, or a new version of one
	FeedbackUpdated = "feedback_updated" // FeedbackUpdateData
	FeedbackDeleted = "feedback_deleted" // FeedbackRef
	ProjectCreated  = "project_created"  // ProjectData
	ProjectUpdated  = "project_updated"  // ProjectUpdateData
	ProjectDeleted  = "project_deleted"  // no data: the project goes with its traces and feedback

	// DefaultProject is the project of runs that name none.
	DefaultProject = "default"
)

// RunData is the data of RunPosted and RunPatched: the run's JSON object as the client sent it
// (multipart fields merged in), or, when that is too large for one log message, the name of the
// object-store blob holding it.
type RunData struct {
	Run  map[string]any `json:"run,omitempty"`
	Blob *Blob          `json:"blob,omitempty"`
}

// Blob names a payload kept in the trace object store.
type Blob struct {
	Name string `json:"name"`
	Size int64  `json:"size"`
}

// FeedbackData is the data of FeedbackCreated: the feedback object, checked by the command
// (trace.ParseFeedback; events of older versions hold it as the client sent it).
type FeedbackData struct {
	ID       string          `json:"id"`
	Feedback json.RawMessage `json:"feedback"`
}

// ProjectData is the data of ProjectCreated.
type ProjectData struct {
	Name        string         `json:"name"`
	Description *string        `json:"description,omitempty"`
	Extra       map[string]any `json:"extra,omitempty"`
}

// BlobReader fetches a blob named by a RunData.
type BlobReader func(ctx context.Context, name string) ([]byte, error)

var (
	projectNamespace = uuid.MustParse("6f1c6a56-8e0a-4c55-9d9f-7d6c4b0c7a01")
	tenantNamespace  = uuid.MustParse("0b8f5d0e-2f5a-4f7b-a0f4-3a9f4b6e1c02")
)

// ProjectID is the id of tenant's project called name. Ids are derived from names, so every
// process, and a rebuild, agrees on them without coordination.
func ProjectID(tenant, name string) string {
	return uuid.NewSHA1(projectNamespace, []byte(tenant+"\x00"+name)).String()
}

// TenantID is the UUID standing for a tenant in tracing records (the clients want a UUID).
func TenantID(tenant string) string { return uuid.NewSHA1(tenantNamespace, []byte(tenant)).String() }

// Traces folds the trace stream: runs (trace.Run after Apply and Derive), indexes by project and
// start time and by trace, roll-ups of tokens and cost to every ancestor run and to projects,
// project records and feedback. A run known only from patches is kept but not shown, indexed nor
// counted until its post arrives.
type Traces struct {
	db     *projections.DB
	prices *trace.Prices
	blobs  BlobReader
}

// NewTraces returns the trace projection stored in db. prices feed trace.Derive (nil: the
// defaults); blobs reads offloaded run payloads (nil: such runs cannot be folded).
func NewTraces(db *projections.DB, prices *trace.Prices, blobs BlobReader) *Traces {
	if prices == nil {
		prices = trace.DefaultPrices()
	}
	return &Traces{db: db, prices: prices, blobs: blobs}
}

// The buckets. Keys join their parts with 0x00 (tkey); numbers are big-endian.
var (
	tRuns              = []byte("trace_runs")                // tenant,run -> trace.Run JSON (own values)
	tMeta              = []byte("trace_meta")                // tenant,run -> runMeta JSON
	tByProject         = []byte("trace_by_project")          // tenant,project,start(8),run -> nil
	tByTrace           = []byte("trace_by_trace")            // tenant,trace,run -> posted (1) or not (0)
	tTraces            = []byte("trace_traces")              // tenant,trace -> first event time (8)
	tExpiry            = []byte("trace_expiry")              // first event time(8),tenant,trace -> nil
	tFeedback          = []byte("trace_feedback")            // tenant,trace,feedback -> trace.Feedback JSON
	tFeedbackIDs       = []byte("trace_feedback_ids")        // tenant,feedback -> trace,project
	tFeedbackByRun     = []byte("trace_feedback_by_run")     // tenant,run,feedback -> nil
	tFeedbackByProject = []byte("trace_feedback_by_project") // tenant,project,feedback -> nil
	tProjects          = []byte("trace_projects")            // tenant,project -> Project JSON
	tNames             = []byte("trace_project_names")       // tenant,name -> project id
	tCounters          = []byte("trace_project_stats")       // tenant,project -> the project's counters
	tRootTimes         = []byte("trace_project_latency")     // tenant,project,l|f,seconds(8),run -> nil
	traceBucket        = [][]byte{tRuns, tMeta, tByProject, tByTrace, tTraces, tExpiry, tFeedback,
		tProjects, tNames, tCounters, tRootTimes, tFeedbackIDs, tFeedbackByRun, tFeedbackByProject,
		tTokens, tTokensByTrace}
)

// Name implements Projection.
func (*Traces) Name() string { return "traces" }

// Buckets implements Projection.
func (*Traces) Buckets() []string {
	out := make([]string, len(traceBucket))
	for i, b := range traceBucket {
		out[i] = string(b)
	}
	return out
}

// tkey joins parts with 0x00; tenants, ids and names hold no 0x00.
func tkey(parts ...string) []byte {
	n := len(parts)
	for _, p := range parts {
		n += len(p)
	}
	k := make([]byte, 0, n)
	for i, p := range parts {
		if i > 0 {
			k = append(k, 0)
		}
		k = append(k, p...)
	}
	return k
}

// Apply implements Projection.
func (t *Traces) Apply(tx *bbolt.Tx, e eventlog.Event) error {
	switch {
	case e.Aggregate.Kind == TraceKind && (e.Type == RunPosted || e.Type == RunPatched):
		return t.applyRun(tx, e, nil)
	case e.Aggregate.Kind == TraceKind:
		return applyFeedback(tx, e)
	case e.Aggregate.Kind == TraceProjectKind && e.Type == ProjectCreated:
		var d ProjectData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return err
		}
		if id, ok := projectByName(tx, e.Aggregate.Tenant, d.Name); ok && id != "" {
			return nil // create-or-return: the first project of a name stays
		}
		id := freeProjectID(tx, e.Aggregate.Tenant, d.Name, e.Aggregate.ID)
		return createProject(tx, e.Aggregate.Tenant, trace.Project{ID: id, Name: d.Name,
			Description: d.Description, Extra: d.Extra}, e.Time)
	case e.Aggregate.Kind == TraceProjectKind && e.Type == ProjectUpdated:
		var d ProjectUpdateData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return err
		}
		return applyProjectUpdate(tx, e.Aggregate.Tenant, e.Aggregate.ID, d)
	case e.Aggregate.Kind == TraceProjectKind && e.Type == ProjectDeleted:
		return deleteProject(tx, e.Aggregate.Tenant, e.Aggregate.ID)
	}
	return nil
}

// runMeta is what the projection keeps beside a run to update indexes and roll-ups without
// decoding the run: its own contribution as last folded, and the sums of its descendants.
type runMeta struct {
	Posted    bool     `json:"posted,omitempty"`
	Project   string   `json:"project,omitempty"`
	Start     int64    `json:"start,omitempty"` // unix nanoseconds
	Trace     string   `json:"trace,omitempty"`
	Ancestors []string `json:"ancestors,omitempty"`
	Latency   *float64 `json:"latency,omitempty"`
	Error     bool     `json:"error,omitempty"`
	Own       sums     `json:"own"`
	Desc      sums     `json:"desc"`
}

// sums are token counts and their details, costs in nano-dollars (integers, so that roll-ups
// never drift), how many runs had a cost, and the earliest first-token time (unix nanoseconds,
// 0: none).
type sums struct {
	Prompt        int64            `json:"pt,omitempty"`
	Completion    int64            `json:"ct,omitempty"`
	Total         int64            `json:"tt,omitempty"`
	PromptDetails map[string]int64 `json:"pd,omitempty"`
	CompDetails   map[string]int64 `json:"cd,omitempty"`
	PromptCost    int64            `json:"pc,omitempty"`
	CompCost      int64            `json:"cc,omitempty"`
	TotalCost     int64            `json:"tc,omitempty"`
	Costed        int64            `json:"n,omitempty"`
	FirstToken    int64            `json:"ftt,omitempty"`
}

// add returns s plus (sign 1) or minus (sign -1) o's tokens and costs; not the first token.
func (s sums) add(o sums, sign int64) sums {
	s.Prompt += sign * o.Prompt
	s.Completion += sign * o.Completion
	s.Total += sign * o.Total
	s.PromptDetails = addDetails(s.PromptDetails, o.PromptDetails, sign)
	s.CompDetails = addDetails(s.CompDetails, o.CompDetails, sign)
	s.PromptCost += sign * o.PromptCost
	s.CompCost += sign * o.CompCost
	s.TotalCost += sign * o.TotalCost
	s.Costed += sign * o.Costed
	return s
}

func addDetails(into, d map[string]int64, sign int64) map[string]int64 {
	if len(d) == 0 {
		return into
	}
	out := make(map[string]int64, len(into)+len(d))
	maps.Copy(out, into)
	for k, v := range d {
		if out[k] += sign * v; out[k] == 0 {
			delete(out, k)
		}
	}
	return out
}

func (s sums) equal(o sums) bool {
	return s.Prompt == o.Prompt && s.Completion == o.Completion && s.Total == o.Total &&
		s.PromptCost == o.PromptCost && s.CompCost == o.CompCost && s.TotalCost == o.TotalCost &&
		s.Costed == o.Costed && s.FirstToken == o.FirstToken &&
		maps.Equal(s.PromptDetails, o.PromptDetails) && maps.Equal(s.CompDetails, o.CompDetails)
}

// nanos turns a cost in dollars into nano-dollars.
func nanos(c *float64) int64 {
	if c == nil {
		return 0
	}
	return int64(math.Round(*c * 1e9))
}

func ownSums(r *trace.Run) sums {
	s := sums{Prompt: int64(r.PromptTokens), Completion: int64(r.CompletionTokens), Total: int64(r.TotalTokens),
		PromptCost: nanos(r.PromptCost), CompCost: nanos(r.CompletionCost), TotalCost: nanos(r.TotalCost)}
	if r.TotalCost != nil || r.PromptCost != nil || r.CompletionCost != nil {
		s.Costed = 1
	}
	if r.FirstTokenTime != nil {
		s.FirstToken = r.FirstTokenTime.UnixNano()
	}
	details := func(d map[string]int) map[string]int64 {
		if len(d) == 0 {
			return nil
		}
		out := make(map[string]int64, len(d))
		for k, v := range d {
			out[k] = int64(v)
		}
		return out
	}
	s.PromptDetails, s.CompDetails = details(r.PromptTokenDetails), details(r.CompletionTokenDetails)
	return s
}

func getMeta(tx *bbolt.Tx, tenant, id string) (runMeta, error) {
	raw := tx.Bucket(tMeta).Get(tkey(tenant, id))
	if raw == nil {
		return runMeta{}, nil
	}
	return decodeMeta(raw)
}

func putMeta(tx *bbolt.Tx, key []byte, m runMeta) error {
	return tx.Bucket(tMeta).Put(key, encodeMeta(m))
}

func (t *Traces) applyRun(tx *bbolt.Tx, e eventlog.Event, p *preparedRun) error {
	if p == nil {
		p = t.readRun(e)
	}
	if p.err != nil {
		return p.err
	}
	id := p.id
	tenant, traceID := e.Aggregate.Tenant, e.Aggregate.ID
	if err := touchTrace(tx, tenant, traceID, e.Time); err != nil {
		return err
	}
	key := tkey(tenant, id)
	old, err := getMeta(tx, tenant, id)
	if err != nil {
		return err
	}
	kind := trace.KindPost
	if e.Type == RunPatched {
		kind = trace.KindPatch
	}
	stored := tx.Bucket(tRuns).Get(key)
	if stored == nil && p.fresh == nil {
		p.prepareFresh(e, kind, t.prices)
	}
	var (
		r      trace.Run
		record []byte
		texts  = []textSource{p.source()}
	)
	if stored == nil {
		// A run seen for the first time: what Prepare built from the payload alone.
		f := p.fresh
		if f.err != nil {
			return f.err
		}
		r, record = f.run, f.record
		r.SessionID = f.session
	} else {
		src, err := decodeRunRecord(stored, &r)
		if err != nil {
			return err
		}
		texts = append(texts, src)
		// Apply merges in any order: a patch that comes before its post is kept in the run, and
		// the post does not overwrite what it set.
		if err := trace.Apply(&r, kind, p.raw, false); err != nil {
			return err
		}
		if r.TraceID == "" {
			r.TraceID = traceID
		}
	}
	if !old.Posted && kind == trace.KindPatch {
		// Not shown, indexed nor counted until its post arrives.
		if old.Trace == "" {
			old.Trace = traceID
			if err := tx.Bucket(tByTrace).Put(tkey(tenant, traceID, id), notPosted); err != nil {
				return err
			}
		}
		if err := putMeta(tx, key, old); err != nil {
			return err
		}
		return putRun(tx, key, &r, record, texts)
	}
	if err := resolveProject(tx, tenant, &r, e.Time); err != nil {
		return err
	}
	switch {
	case stored != nil || kind == trace.KindPatch: // (a patch of a posted run always finds its record)
		trace.DeriveStored(&r, t.prices)
		record = nil
	case r.SessionID != p.fresh.run.SessionID:
		record = nil // the project is not the one Prepare expected
	}
	neu := old
	neu.Posted, neu.Project, neu.Start, neu.Trace = true, r.SessionID, r.StartTime.UnixNano(), traceID
	neu.Ancestors, neu.Latency, neu.Error, neu.Own = r.ParentRunIDs, r.Latency, r.Status == trace.StatusError, ownSums(&r)
	if err := reindex(tx, tenant, id, old, neu); err != nil {
		return err
	}
	if err := putMeta(tx, key, neu); err != nil {
		return err
	}
	if !old.Posted || old.Project != neu.Project {
		if err := attributeRunFeedback(tx, tenant, id, neu.Project); err != nil {
			return err
		}
	}
	return putRun(tx, key, &r, record, texts)
}

// putRun stores a run: record when it is already encoded, else r's record, with the text its
// inputs and outputs were decoded from when texts has it. Fields that Derive computes from the
// others alone and that are large (the normalised messages) are left out: TraceView.Run
// derives them again.
func putRun(tx *bbolt.Tx, key []byte, r *trace.Run, record []byte, texts []textSource) error {
	if record == nil {
		var err error
		if record, err = encodeRunRecord(r, textOf(r.Inputs, "inputs", texts...), textOf(r.Outputs, "outputs", texts...)); err != nil {
			return err
		}
	}
	return tx.Bucket(tRuns).Put(key, record)
}

// Values of the by-trace index: whether the run has been posted.
var (
	posted    = []byte{1}
	notPosted = []byte{0}
)

// touchTrace records when a trace was first seen, which is when it expires from.
func touchTrace(tx *bbolt.Tx, tenant, traceID string, at time.Time) error {
	b := tx.Bucket(tTraces)
	k := tkey(tenant, traceID)
	if b.Get(k) != nil {
		return nil
	}
	ts := binary.BigEndian.AppendUint64(nil, uint64(at.UnixNano()))
	if err := b.Put(k, ts); err != nil {
		return err
	}
	return tx.Bucket(tExpiry).Put(append(ts, k...), nil)
}

func projectByName(tx *bbolt.Tx, tenant, name string) (string, bool) {
	v := tx.Bucket(tNames).Get(tkey(tenant, name))
	return string(v), v != nil
}

func createProject(tx *bbolt.Tx, tenant string, p trace.Project, at time.Time) error {
	p.StartTime, p.TenantID = engine.At(at), TenantID(tenant)
	if err := tx.Bucket(tNames).Put(tkey(tenant, p.Name), []byte(p.ID)); err != nil {
		return err
	}
	return projections.PutJSON(tx.Bucket(tProjects), tkey(tenant, p.ID), p)
}

// resolveProject sets the run's project id from its session id or name, creating the project on
// first use.
func resolveProject(tx *bbolt.Tx, tenant string, r *trace.Run, at time.Time) error {
	if r.SessionID != "" {
		if tx.Bucket(tProjects).Get(tkey(tenant, r.SessionID)) != nil {
			return nil
		}
		name := r.SessionName
		if _, taken := projectByName(tx, tenant, name); name == "" || taken {
			name = r.SessionID
		}
		return createProject(tx, tenant, trace.Project{ID: r.SessionID, Name: name}, at)
	}
	name := r.SessionName
	if name == "" {
		name = DefaultProject
	}
	if id, ok := projectByName(tx, tenant, name); ok {
		r.SessionID = id
		return nil
	}
	r.SessionID = freeProjectID(tx, tenant, name, ProjectID(tenant, name))
	return createProject(tx, tenant, trace.Project{ID: r.SessionID, Name: name}, at)
}
