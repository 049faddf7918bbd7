package engine

// Assistant is a graph with its configuration: the current (latest) version of a versioned
// record. It marshals to the wire shape of the LangGraph API.
type Assistant struct {
	AssistantID string         `json:"assistant_id"`
	GraphID     string         `json:"graph_id"`
	Config      map[string]any `json:"config"`
	Context     map[string]any `json:"context"`
	Metadata    map[string]any `json:"metadata"`
	Version     int            `json:"version"`
	Name        string         `json:"name"`
	Description *string        `json:"description"`
	CreatedAt   Time           `json:"created_at"`
	UpdatedAt   Time           `json:"updated_at"`
}

// SystemCreator is metadata.created_by of the system assistants, the ones the platform makes for
// each graph.
const SystemCreator = "system"

// IsSystem reports whether a is a graph's system assistant.
func (a Assistant) IsSystem() bool { return a.Metadata["created_by"] == SystemCreator }

// Visible reports whether a user whose rules filter assistants with f may read a: when its
// metadata match, or always for a system assistant, which every authenticated user may use.
func (a Assistant) Visible(f Filter) bool { return a.IsSystem() || f.Match(a.Metadata) }

// AssistantVersion is one version of an assistant as POST /assistants/{id}/versions lists it.
// CreatedAt is when that version was made.
type AssistantVersion struct {
	AssistantID string         `json:"assistant_id"`
	GraphID     string         `json:"graph_id"`
	Config      map[string]any `json:"config"`
	Context     map[string]any `json:"context"`
	Metadata    map[string]any `json:"metadata"`
	Version     int            `json:"version"`
	Name        string         `json:"name"`
	Description *string        `json:"description"`
	CreatedAt   Time           `json:"created_at"`
}

// Assistant event types, stored on subject assistant.<tenant>.<id>.<type>.
const (
	AssistantCreated   = "created"
	AssistantUpdated   = "updated"
	AssistantLatestSet = "latest_set"
	AssistantDeleted   = "deleted"
)

// AssistantSpec is the content of one assistant version: everything but its id, number and time.
type AssistantSpec struct {
	GraphID     string         `json:"graph_id"`
	Config      map[string]any `json:"config,omitempty"`
	Context     map[string]any `json:"context,omitempty"`
	Metadata    map[string]any `json:"metadata,omitempty"`
	Name        string         `json:"name"`
	Description *string        `json:"description,omitempty"`
}

// AssistantCreatedData is the payload of AssistantCreated: version 1 in full.
type AssistantCreatedData struct {
	AssistantSpec
}

// AssistantUpdatedData is the payload of AssistantUpdated: the full snapshot of a new version
// (the patch already merged over the version it was made from), which becomes the latest.
type AssistantUpdatedData struct {
	Version int `json:"version"`
	AssistantSpec
}

// AssistantLatestSetData is the payload of AssistantLatestSet: an existing version becomes the
// current one.
type AssistantLatestSetData struct {
	Version int `json:"version"`
}

// AssistantDeletedData is the payload of AssistantDeleted. Threads lists the threads deleted with
// the assistant in the same batch (their own events delete them; this is for the record).
type AssistantDeletedData struct {
	Threads []string `json:"threads,omitempty"`
}
