package engine

// Run statuses.
const (
	RunPending     = "pending"
	RunRunning     = "running"
	RunSuccess     = "success"
	RunFailed      = "error"
	RunTimeout     = "timeout"
	RunInterrupted = "interrupted"
)

// RunStatuses lists every run status, for validation.
var RunStatuses = []string{RunPending, RunRunning, RunSuccess, RunFailed, RunTimeout, RunInterrupted}

// Multitask strategies: what creating a run does while another is active on the thread.
const (
	MultitaskReject    = "reject"
	MultitaskEnqueue   = "enqueue"
	MultitaskInterrupt = "interrupt"
	MultitaskRollback  = "rollback"
)

// MultitaskStrategies lists the strategies, for validation.
var MultitaskStrategies = []string{MultitaskReject, MultitaskInterrupt, MultitaskRollback, MultitaskEnqueue}

// Run is an execution of an assistant on a thread, in the wire shape of the LangGraph API.
type Run struct {
	RunID             string         `json:"run_id"`
	ThreadID          string         `json:"thread_id"`
	AssistantID       string         `json:"assistant_id"`
	CreatedAt         Time           `json:"created_at"`
	UpdatedAt         Time           `json:"updated_at"`
	Status            string         `json:"status"`
	Metadata          map[string]any `json:"metadata"`
	Kwargs            RunKwargs      `json:"kwargs"`
	MultitaskStrategy string         `json:"multitask_strategy"`
}

// RunError is why a run failed, the one form every reader of a failure shares: the run's record
// and its finished event, the stream's error event, the webhook, the trace and the logs. It
// marshals as clients see it, {"error": Class, "message": Message}; Cause, when the run failed in
// this process, is the error it failed with, for logging its chain (errors.As through Unwrap).
type RunError struct {
	Class   string `json:"error"`
	Message string `json:"message"`
	Cause   error  `json:"-"`
}

// Error is the class and the message, as a Python exception prints.
func (e *RunError) Error() string { return e.Class + ": " + e.Message }

// Unwrap is the error the run failed with, nil when the failure was read back from the log.
func (e *RunError) Unwrap() error { return e.Cause }

// RunRecord is a run as the projection keeps it: the API record and the scheduler's state.
type RunRecord struct {
	Run
	// Attempt counts the executions started; a run taken over after a crash runs again.
	Attempt int `json:"attempt"`
	// RunAt is the earliest time the run may start (after_seconds).
	RunAt Time `json:"run_at"`
	// Cancel is the action a cancellation asked for: "interrupt" or "rollback"; "" when none.
	Cancel    string    `json:"cancel,omitempty"`
	Error     *RunError `json:"error,omitempty"`
	StartedAt Time      `json:"started_at"`
	EndedAt   Time      `json:"ended_at"`
	// Temporary runs (stateless runs with on_completion=delete) delete their thread when done.
	Temporary bool `json:"temporary,omitempty"`
	// Webhook is called when the run ends.
	Webhook string `json:"webhook,omitempty"`
	// Checkpoint is the thread's newest root checkpoint when the run was created: a rollback
	// returns the thread there.
	Checkpoint string `json:"checkpoint,omitempty"`
}

// Active reports whether the run has not ended.
func (r RunRecord) Active() bool { return r.Status == RunPending || r.Status == RunRunning }

// Run event types, on the thread's subject.
const (
	RunCreatedEvent         = "run_created"
	RunStartedEvent         = "run_started"
	RunFinishedEvent        = "run_finished"
	RunCancelRequestedEvent = "run_cancel_requested"
	RunDeletedEvent         = "run_deleted"
)

// RunCreatedData is the payload of RunCreatedEvent.
type RunCreatedData struct {
	Run RunRecord `json:"run"`
	// ThreadConfig, when set, is the thread's config from this run on (see
	// runner.ThreadConfig); absent when the run leaves it as it was.
	ThreadConfig map[string]any `json:"thread_config,omitempty"`
}

// RunStartedData is the payload of RunStartedEvent: attempt Attempt of the run began on Worker,
// with the thread at root checkpoint Checkpoint (where a rollback returns it).
type RunStartedData struct {
	RunID      string `json:"run_id"`
	Attempt    int    `json:"attempt"`
	Worker     string `json:"worker"`
	Checkpoint string `json:"checkpoint,omitempty"`
}

// RunFinishedData is the payload of RunFinishedEvent.
type RunFinishedData struct {
	RunID  string    `json:"run_id"`
	Status string    `json:"status"`
	Error  *RunError `json:"error,omitempty"`
}

// RunCancelRequestedData is the payload of RunCancelRequestedEvent.
type RunCancelRequestedData struct {
	RunID  string `json:"run_id"`
	Action string `json:"action"`
}

// RunDeletedData is the payload of RunDeletedEvent. With Rollback the run's checkpoints go too
// and the thread's state returns to checkpoint RestoreTo ("" for none: an empty thread).
type RunDeletedData struct {
	RunID     string `json:"run_id"`
	Rollback  bool   `json:"rollback,omitempty"`
	RestoreTo string `json:"restore_to,omitempty"`
}
