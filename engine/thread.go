package engine

// Thread statuses.
const (
	ThreadIdle        = "idle"
	ThreadBusy        = "busy"
	ThreadInterrupted = "interrupted"
	ThreadError       = "error"
)

// ThreadStatuses lists every thread status, for validation.
var ThreadStatuses = []string{ThreadIdle, ThreadBusy, ThreadInterrupted, ThreadError}

// Thread is a conversation: its metadata and config, and the values of its latest checkpoint.
// It marshals to the wire shape of the LangGraph API.
type Thread struct {
	ThreadID       string         `json:"thread_id"`
	CreatedAt      Time           `json:"created_at"`
	UpdatedAt      Time           `json:"updated_at"`
	StateUpdatedAt Time           `json:"state_updated_at"`
	Metadata       map[string]any `json:"metadata"`
	Status         string         `json:"status"`
	Config         map[string]any `json:"config"`
	Values         any            `json:"values"`
	Interrupts     map[string]any `json:"interrupts"`
	// TTL is shown only when a client asks for it (GET ?include=ttl).
	TTL *ThreadTTL `json:"ttl,omitempty"`
}

// ThreadTTL says when a thread is deleted by the sweeper.
type ThreadTTL struct {
	Strategy  string  `json:"strategy"`
	Minutes   float64 `json:"ttl"`
	ExpiresAt Time    `json:"expires_at"`
}

// Thread event types, stored on subject thread.<tenant>.<id>.<type>.
const (
	ThreadCreated = "created"
	ThreadPatched = "patched"
	ThreadDeleted = "deleted"
)

// ThreadCreatedData is the payload of ThreadCreated.
type ThreadCreatedData struct {
	Metadata map[string]any `json:"metadata"`
	Config   map[string]any `json:"config,omitempty"`
	TTL      *TTLSpec       `json:"ttl,omitempty"`
}

// ThreadPatchedData is the payload of ThreadPatched: metadata keys merged over the old ones, and
// optionally a new TTL counted from the patch.
type ThreadPatchedData struct {
	Metadata map[string]any `json:"metadata,omitempty"`
	TTL      *TTLSpec       `json:"ttl,omitempty"`
}

// ThreadDeletedData is the payload of ThreadDeleted. Reason is "ttl" when the sweeper deleted it.
type ThreadDeletedData struct {
	Reason string `json:"reason,omitempty"`
}

// TTLSpec is a time to live as clients send it.
type TTLSpec struct {
	Strategy string  `json:"strategy"`
	Minutes  float64 `json:"ttl"`
}
