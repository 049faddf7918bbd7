package trace

import "github.com/jetgraph/jetgraph/engine"

// Project is a tracing project (a "session" to the clients).
type Project struct {
	ID                 string         `json:"id"`
	Name               string         `json:"name"`
	Description        *string        `json:"description"`
	Extra              map[string]any `json:"extra"`
	StartTime          engine.Time    `json:"start_time"`
	EndTime            *engine.Time   `json:"end_time"`
	TenantID           string         `json:"tenant_id"`
	ReferenceDatasetID *string        `json:"reference_dataset_id"`
}

// FeedbackToken lets whoever holds its id, without an API key, leave feedback of one key on one
// run until it expires (the clients' presigned feedback URLs).
type FeedbackToken struct {
	ID         string         `json:"id"`
	Tenant     string         `json:"tenant"`
	RunID      string         `json:"run_id"`
	Key        string         `json:"feedback_key"`
	FeedbackID string         `json:"feedback_id,omitempty"` // the feedback it writes; "": a new one each time
	Config     map[string]any `json:"feedback_config,omitempty"`
	ExpiresAt  engine.Time    `json:"expires_at"`
}
