package engine

// SystemKind is the aggregate kind of events about the runtime as a whole rather than one
// resource; the system aggregate of a tenant has the id SystemID.
const (
	SystemKind = "system"
	SystemID   = "runtime"
)

// Truncated is the system event that empties projections (TruncatedData): the reference dev
// server's POST /internal/truncate, which jetgraph serves with --dev only.
const Truncated = "truncated"

// TruncatedData says what a truncation empties: every projection folds the flags that name it,
// whatever the tenant. KeepAssistants are the assistants kept when Assistants is set (the system
// assistants of the served graphs, as on the reference dev server).
type TruncatedData struct {
	Runs           bool     `json:"runs,omitempty"`
	Threads        bool     `json:"threads,omitempty"`
	Assistants     bool     `json:"assistants,omitempty"`
	Checkpoints    bool     `json:"checkpoints,omitempty"`
	Store          bool     `json:"store,omitempty"`
	KeepAssistants []string `json:"keep_assistants,omitempty"`
}
