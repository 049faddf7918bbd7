package webhooks

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/jetgraph/jetgraph/engine"
)

// Payload is the body POSTed to a run's webhook when the run ends. It follows the reference
// server, which sends the run record (run_id, thread_id, assistant_id, created_at, updated_at,
// status, metadata, kwargs, multitask_strategy) with the run's final status and these additions:
// run_started_at, run_ended_at, webhook_sent_at, values (the state of the last checkpoint) and,
// when the run failed, error as {"error": <class>, "message": <text>} (a flat string before
// release 0.7.46 of the reference server).
//
// Timestamps are written like every jetgraph timestamp (engine.TimeLayout) and as null when
// unknown; thread_id is null for a stateless run; error is left out when the run did not fail.
// Config.Fields chooses which of these keys are sent.
type Payload struct {
	RunID             string
	ThreadID          string // "" for a stateless run: null on the wire
	AssistantID       string
	Status            string // success, error, timeout, interrupted
	CreatedAt         engine.Time
	UpdatedAt         engine.Time
	RunStartedAt      engine.Time
	RunEndedAt        engine.Time
	Metadata          map[string]any
	Kwargs            *engine.RunKwargs // the run's kwargs (input, config, webhook, ...); nil: left out
	MultitaskStrategy string            // "": left out
	Values            any               // the final state values; nil: null
	Error             *engine.RunError  // nil unless the run failed
	// WebhookSentAt is stamped by Deliver when zero, once for every attempt of one delivery, so
	// that every attempt sends the same body.
	WebhookSentAt engine.Time
}

// wirePayload is Payload in the order and shape of the wire.
type wirePayload struct {
	RunID             string            `json:"run_id"`
	ThreadID          *string           `json:"thread_id"`
	AssistantID       string            `json:"assistant_id"`
	Status            string            `json:"status"`
	CreatedAt         engine.Time       `json:"created_at"`
	UpdatedAt         engine.Time       `json:"updated_at"`
	RunStartedAt      engine.Time       `json:"run_started_at"`
	RunEndedAt        engine.Time       `json:"run_ended_at"`
	Metadata          map[string]any    `json:"metadata"`
	Kwargs            *engine.RunKwargs `json:"kwargs,omitempty"`
	MultitaskStrategy string            `json:"multitask_strategy,omitempty"`
	Values            any               `json:"values"`
	Error             *engine.RunError  `json:"error,omitempty"`
	WebhookSentAt     engine.Time       `json:"webhook_sent_at"`
}

// Fields lists every key a payload may carry, in wire order: the values Config.Fields may name.
var Fields = []string{
	"run_id", "thread_id", "assistant_id", "status", "created_at", "updated_at", "run_started_at",
	"run_ended_at", "metadata", "kwargs", "multitask_strategy", "values", "error", "webhook_sent_at",
}

// MarshalJSON writes every field of the payload.
func (p Payload) MarshalJSON() ([]byte, error) {
	w := wirePayload{
		RunID: p.RunID, AssistantID: p.AssistantID, Status: p.Status,
		CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt, RunStartedAt: p.RunStartedAt, RunEndedAt: p.RunEndedAt,
		Metadata: p.Metadata, Kwargs: p.Kwargs, MultitaskStrategy: p.MultitaskStrategy,
		Values: p.Values, Error: p.Error, WebhookSentAt: p.WebhookSentAt,
	}
	if p.ThreadID != "" {
		w.ThreadID = &p.ThreadID
	}
	if w.Metadata == nil {
		w.Metadata = map[string]any{}
	}
	return json.Marshal(w)
}

// ParseFields reads a comma-separated list of payload fields, as a setting gives it: "" means
// every field (nil), and an unknown name is an error.
func ParseFields(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	out := []string{}
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out, checkFields(out)
}

// checkFields reports names that are not payload fields.
func checkFields(names []string) error {
	var bad []string
	for _, n := range names {
		if !slices.Contains(Fields, n) {
			bad = append(bad, fmt.Sprintf("%q", n))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("webhooks: unknown payload field(s) %s; known: %s", strings.Join(bad, ", "), strings.Join(Fields, ", "))
	}
	return nil
}

// encode marshals p keeping only the keys in fields (every key when fields is nil).
func encode(p Payload, fields []string) ([]byte, error) {
	raw, err := json.Marshal(p)
	if err != nil || fields == nil {
		return raw, err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(raw, &all); err != nil {
		return nil, err
	}
	kept := make(map[string]json.RawMessage, len(fields))
	for _, f := range fields {
		if v, ok := all[f]; ok {
			kept[f] = v
		}
	}
	return json.Marshal(kept)
}
