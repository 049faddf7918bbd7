// Package trace is the domain of jetgraph's LLM tracing service, the part that speaks the wire
// format of the official langsmith clients: it merges ingested posts and patches into runs
// (Apply), derives what the read model adds (Derive: status, tokens, costs, time to first token,
// ancestors, normalised messages), prices model calls (Prices), parses the filter language of
// /runs/query and /runs/stats (ParseFilter) and computes their statistics (ComputeStats).
//
// It is pure: no I/O but LoadPrices, no storage, no HTTP. The contract is
// spec/3-trace-format.md (message formats) and contract/tracing.md (wire protocol).
//
// The JSON of a Run is the read shape the langsmith clients parse, with these jetgraph additions:
// "input_messages" and "output_messages" (the llm run's inputs and outputs normalised to the
// native message format of the spec, each message with a "problem" when it violates the spec),
// "message_problems" (those problems, one line each, such as "inputs: tool message 3:
// tool_call_id x names no earlier tool call"), "latency" (seconds), "provider" and "model_name"
// (what prices the run), "session_name" and "patched_fields" (which fields a patch set, so that a
// post arriving after its patch does not overwrite them; storage must keep it, readers may ignore
// it). Like the langsmith API's, it carries a run's attachments as "s3_urls" (each with the
// presigned_url the clients download it from) and its conversation as "thread_id".
package trace

import (
	"encoding/json"
	"net/url"
	"strings"
	"time"

	"github.com/jetgraph/jetgraph/engine"
)

// Run types the clients send.
const (
	RunLLM       = "llm"
	RunChain     = "chain"
	RunTool      = "tool"
	RunRetriever = "retriever"
	RunEmbedding = "embedding"
	RunPrompt    = "prompt"
	RunParser    = "parser"
)

// RunTypes lists every accepted run_type.
var RunTypes = []string{RunLLM, RunChain, RunTool, RunRetriever, RunEmbedding, RunPrompt, RunParser}

// Statuses of a run, derived from its error and end time.
const (
	StatusSuccess = "success"
	StatusError   = "error"
	StatusPending = "pending"
)

// Run is a traced run as stored and read back: the fields the clients send (merged by Apply) and
// the fields Derive computes from them. Its JSON is the wire shape the langsmith clients read;
// times are ISO 8601 with microseconds and an offset, empty ids are null.
type Run struct {
	ID                 string           `json:"id"`
	TraceID            string           `json:"trace_id"`
	ParentRunID        *string          `json:"parent_run_id"`
	DottedOrder        string           `json:"dotted_order"`
	Name               string           `json:"name"`
	RunType            string           `json:"run_type"`
	SessionID          string           `json:"session_id"`
	SessionName        string           `json:"session_name,omitempty"`
	StartTime          time.Time        `json:"start_time"`
	EndTime            *time.Time       `json:"end_time"`
	Inputs             map[string]any   `json:"inputs"`
	Outputs            map[string]any   `json:"outputs"`
	Error              *string          `json:"error"`
	Events             []map[string]any `json:"events"`
	Extra              map[string]any   `json:"extra"`
	Tags               []string         `json:"tags"`
	ReferenceExampleID *string          `json:"reference_example_id"`
	// Attachments are read as s3_urls (see AttachmentPath): the Python client builds its run's
	// attachments from that field, and fails on a run whose JSON has an attachments field.
	Attachments map[string]Attachment `json:"-"`

	// Patched lists, sorted, the fields a patch has set: a post never overwrites them, whatever
	// the order the two arrive in. Bookkeeping of Apply, kept in the JSON for storage.
	Patched []string `json:"patched_fields,omitempty"`

	// Derived by Derive.
	Status                 string         `json:"status"`
	PromptTokens           int            `json:"prompt_tokens"`
	CompletionTokens       int            `json:"completion_tokens"`
	TotalTokens            int            `json:"total_tokens"`
	PromptCost             *float64       `json:"prompt_cost"`
	CompletionCost         *float64       `json:"completion_cost"`
	TotalCost              *float64       `json:"total_cost"`
	PromptTokenDetails     map[string]int `json:"prompt_token_details"`
	CompletionTokenDetails map[string]int `json:"completion_token_details"`
	FirstTokenTime         *time.Time     `json:"first_token_time"`
	ParentRunIDs           []string       `json:"parent_run_ids"`
	Provider               string         `json:"provider,omitempty"`
	ModelName              string         `json:"model_name,omitempty"`
	InputMessages          []Message      `json:"input_messages,omitempty"`
	OutputMessages         []Message      `json:"output_messages,omitempty"`
	MessageProblems        []string       `json:"message_problems,omitempty"`
	Latency                *float64       `json:"latency"`

	// FeedbackStats summarises the feedback on the run, by key; set by readers, never stored.
	FeedbackStats map[string]FeedbackStat `json:"feedback_stats,omitempty"`
}

// Attachment describes a file attached to a run (a multipart part attachment.<run_id>.<name>);
// the bytes are stored elsewhere, under Digest.
type Attachment struct {
	MimeType string `json:"mime_type"`
	Size     int64  `json:"size"`
	Digest   string `json:"digest"`
}

// runAlias has Run's fields without its methods.
type runAlias Run

// runWire overrides the fields whose wire form differs from their Go form: times in
// engine.TimeLayout, empty strings and maps as null or {}.
type runWire struct {
	*runAlias
	SessionID      *string          `json:"session_id"`
	TraceID        *string          `json:"trace_id"`
	StartTime      engine.Time      `json:"start_time"`
	EndTime        *engine.Time     `json:"end_time"`
	FirstTokenTime *engine.Time     `json:"first_token_time"`
	Inputs         map[string]any   `json:"inputs"`
	Extra          map[string]any   `json:"extra"`
	Events         []map[string]any `json:"events"`
	Tags           []string         `json:"tags"`
	ParentRunIDs   []string         `json:"parent_run_ids"`
	// ThreadID is written, never read: it is derived from the metadata (Run.ThreadID).
	ThreadID *string                  `json:"thread_id,omitempty"`
	S3URLs   map[string]attachmentURL `json:"s3_urls,omitempty"`
}

// attachmentKeyPrefix starts the key of an attachment in s3_urls, as the clients expect.
const attachmentKeyPrefix = "attachment."

// attachmentURL is an attachment as a run's s3_urls describe it: where the clients download it
// (presigned_url, relative to the tracing API's base URL) and the description jetgraph keeps.
type attachmentURL struct {
	PresignedURL string `json:"presigned_url"`
	Attachment
}

// AttachmentPath is where the attachment name of run runID is downloaded, relative to the
// tracing API's base URL (the clients join it to LANGSMITH_ENDPOINT).
func AttachmentPath(runID, name string) string {
	return "runs/" + runID + "/attachments/" + url.PathEscape(name)
}

// MarshalJSON writes the run in the read shape of the langsmith clients.
func (r Run) MarshalJSON() ([]byte, error) {
	w := runWire{
		runAlias:       (*runAlias)(&r),
		SessionID:      nullable(r.SessionID),
		TraceID:        nullable(r.TraceID),
		StartTime:      engine.At(r.StartTime),
		EndTime:        timePtr(r.EndTime),
		FirstTokenTime: timePtr(r.FirstTokenTime),
		Inputs:         orEmpty(r.Inputs),
		Extra:          orEmpty(r.Extra),
		Events:         r.Events,
		Tags:           r.Tags,
		ParentRunIDs:   r.ParentRunIDs,
		ThreadID:       nullable(r.ThreadID()),
	}
	if len(r.Attachments) > 0 {
		w.S3URLs = make(map[string]attachmentURL, len(r.Attachments))
		for name, a := range r.Attachments {
			w.S3URLs[attachmentKeyPrefix+name] = attachmentURL{PresignedURL: AttachmentPath(r.ID, name), Attachment: a}
		}
	}
	if w.Events == nil {
		w.Events = []map[string]any{}
	}
	if w.Tags == nil {
		w.Tags = []string{}
	}
	if w.ParentRunIDs == nil {
		w.ParentRunIDs = []string{}
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads what MarshalJSON writes, so that a stored run reads back unchanged.
func (r *Run) UnmarshalJSON(b []byte) error {
	var w runWire
	w.runAlias = (*runAlias)(r)
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	r.SessionID = deref(w.SessionID)
	r.TraceID = deref(w.TraceID)
	r.StartTime = w.StartTime.Time
	r.EndTime = fromTimePtr(w.EndTime)
	r.FirstTokenTime = fromTimePtr(w.FirstTokenTime)
	r.Inputs, r.Extra, r.Events, r.Tags, r.ParentRunIDs = w.Inputs, w.Extra, w.Events, w.Tags, w.ParentRunIDs
	r.Attachments = nil
	for key, a := range w.S3URLs {
		if name, ok := strings.CutPrefix(key, attachmentKeyPrefix); ok {
			if r.Attachments == nil {
				r.Attachments = map[string]Attachment{}
			}
			r.Attachments[name] = a.Attachment
		}
	}
	return nil
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func timePtr(t *time.Time) *engine.Time {
	if t == nil {
		return nil
	}
	v := engine.At(*t)
	return &v
}

func fromTimePtr(t *engine.Time) *time.Time {
	if t == nil || t.IsZero() {
		return nil
	}
	v := t.Time
	return &v
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// Metadata returns the run's extra.metadata, or nil.
func (r *Run) Metadata() map[string]any {
	m, _ := r.Extra["metadata"].(map[string]any)
	return m
}

// ThreadKeys are the metadata keys that name a run's conversation thread, in the order the
// clients look for them.
var ThreadKeys = []string{"session_id", "conversation_id", "thread_id"}

// ThreadID returns the conversation thread the run's metadata names ("" when none): the first of
// ThreadKeys set to a non-empty string. The clients read it as the run's thread_id (the Python
// client's list_threads groups roots by it, its read_thread filters on it).
func (r *Run) ThreadID() string {
	m := r.Metadata()
	for _, k := range ThreadKeys {
		if v, ok := m[k].(string); ok && v != "" {
			return v
		}
	}
	return ""
}

// IsRoot reports whether the run has no parent.
func (r *Run) IsRoot() bool {
	if r.ParentRunID != nil && *r.ParentRunID != "" {
		return false
	}
	return len(ancestorsOf(r)) == 0
}
