package engine

// Cron is a schedule that creates runs, in the wire shape of the LangGraph API (the SDKs' Cron).
// ThreadID is nil for a stateless cron, which makes a thread for each run.
type Cron struct {
	CronID         string         `json:"cron_id"`
	AssistantID    string         `json:"assistant_id"`
	ThreadID       *string        `json:"thread_id"`
	OnRunCompleted string         `json:"on_run_completed"`
	EndTime        *Time          `json:"end_time"`
	Schedule       string         `json:"schedule"`
	Timezone       *string        `json:"timezone"`
	CreatedAt      Time           `json:"created_at"`
	UpdatedAt      Time           `json:"updated_at"`
	Payload        CronPayload    `json:"payload"`
	UserID         *string        `json:"user_id"`
	NextRunDate    *Time          `json:"next_run_date"`
	Metadata       map[string]any `json:"metadata"`
	Enabled        bool           `json:"enabled"`
}

// Masked returns the cron as answers show it: secrets in its run payload masked.
func (c Cron) Masked() Cron {
	c.Payload = c.Payload.Masked()
	return c
}

// CronPayload is what each run of a cron is created with: the run fields the SDKs' crons client
// sends, kept typed so that a fire builds its run without parsing a request again.
type CronPayload struct {
	AssistantID       string         `json:"assistant_id"`
	Input             any            `json:"input,omitempty"`
	Config            map[string]any `json:"config,omitempty"`
	Context           map[string]any `json:"context,omitempty"`
	Metadata          map[string]any `json:"metadata,omitempty"`
	InterruptBefore   []string       `json:"interrupt_before,omitempty"`
	InterruptAfter    []string       `json:"interrupt_after,omitempty"`
	Webhook           string         `json:"webhook,omitempty"`
	MultitaskStrategy string         `json:"multitask_strategy,omitempty"`
	StreamMode        []StreamMode   `json:"stream_mode,omitempty"`
	Durability        Durability     `json:"durability,omitempty"`
}

// Masked returns the payload with the secrets of its config, context and webhook masked, as
// every answer shows a run's.
func (p CronPayload) Masked() CronPayload {
	p.Config = MaskMap(p.Config)
	p.Context = MaskMap(p.Context)
	p.Webhook = MaskURL(p.Webhook)
	return p
}

// CronQuery filters and pages a cron search.
type CronQuery struct {
	AssistantID string
	ThreadID    string
	Enabled     *bool
	Metadata    map[string]any
	SortBy      string
	SortOrder   string
	Limit       int
	Offset      int
	Auth        Filter // the user's rules' filter on the crons' metadata
}

// CronSortFields are the fields a cron search may sort by.
var CronSortFields = []string{"cron_id", "assistant_id", "thread_id", "created_at", "updated_at", "next_run_date"}

// Cron event types, stored on subject cron.<tenant>.<id>.<type>.
const (
	CronCreated  = "created"
	CronUpdated  = "updated"
	CronDeleted  = "deleted"
	CronFired    = "fired"
	CronFireDone = "fire_done"
)

// CronSpec is a cron's definition: everything but its id, times and firing state.
type CronSpec struct {
	AssistantID    string         `json:"assistant_id"`
	ThreadID       string         `json:"thread_id,omitempty"`
	Schedule       string         `json:"schedule"`
	Timezone       string         `json:"timezone,omitempty"`
	EndTime        *Time          `json:"end_time,omitempty"`
	Enabled        bool           `json:"enabled"`
	OnRunCompleted string         `json:"on_run_completed,omitempty"`
	Metadata       map[string]any `json:"metadata,omitempty"`
	Payload        CronPayload    `json:"payload"`
}

// CronCreatedData is the payload of CronCreated. NextRunDate is the first tick (nil: none
// before EndTime).
type CronCreatedData struct {
	CronSpec
	NextRunDate *Time `json:"next_run_date,omitempty"`
}

// CronUpdatedData is the payload of CronUpdated: the full definition after the change (the patch
// merged over the old one) and the next tick it gives.
type CronUpdatedData struct {
	CronSpec
	NextRunDate *Time `json:"next_run_date,omitempty"`
}

// CronFiredData is the payload of CronFired: tick Tick was claimed, once for every process, by
// the append that stored this event (it expects the cron's version the tick was decided on).
// RunID and ThreadID are the ids the run of the tick is created with, whichever process creates
// it; NextRunDate is the tick after (nil: none).
type CronFiredData struct {
	Tick        Time   `json:"tick"`
	RunID       string `json:"run_id"`
	ThreadID    string `json:"thread_id"`
	NextRunDate *Time  `json:"next_run_date,omitempty"`
	// Skipped counts the older ticks missed while no process was up, which are not fired.
	Skipped int `json:"skipped,omitempty"`
}

// CronFireDoneData is the payload of CronFireDone: the run of Tick exists (or cannot be made:
// Error says why), so no process need complete the fire.
type CronFireDoneData struct {
	Tick  Time   `json:"tick"`
	Error string `json:"error,omitempty"`
}

// CronFire is a fired tick whose run is not known to exist yet.
type CronFire struct {
	Tick     Time   `json:"tick"`
	RunID    string `json:"run_id"`
	ThreadID string `json:"thread_id"`
	FiredAt  Time   `json:"fired_at"`
}

// CronState is a cron as its projection keeps it: the record and the fire in progress.
type CronState struct {
	Cron
	Pending *CronFire `json:"pending,omitempty"`
}
