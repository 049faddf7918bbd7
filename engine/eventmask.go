package engine

import (
	"bytes"
	"encoding/json"
)

// Aggregate kinds of the runtime's events, as their subjects start.
const (
	KindThread    = "thread"
	KindAssistant = "assistant"
	KindCron      = "cron"
	KindStore     = "store"
)

// eventSecrets lists, by aggregate kind and event type, where the payload of an event holds what
// clients configured: the places answers show masked (Run.Masked, Thread.Masked,
// Assistant.Masked, CronPayload.Masked). Each path is a chain of object keys.
var eventSecrets = map[[2]string][][]string{
	{KindThread, ThreadCreated}: {{"config"}},
	{KindThread, RunCreatedEvent}: {
		{"run", "kwargs", "config"}, {"run", "kwargs", "context"}, {"run", "kwargs", "webhook"},
		{"run", "webhook"}, {"thread_config"},
	},
	{KindAssistant, AssistantCreated}: {{"config"}, {"context"}},
	{KindAssistant, AssistantUpdated}: {{"config"}, {"context"}},
	{KindCron, CronCreated}:           {{"payload", "config"}, {"payload", "context"}, {"payload", "webhook"}},
	{KindCron, CronUpdated}:           {{"payload", "config"}, {"payload", "context"}, {"payload", "webhook"}},
}

// MaskEventData returns the payload of an event of aggregate kind and type typ as the event views
// (GET /events/{kind}/{id}, GET /threads/{id}/events, `jetgraph events`) show it: the secrets of
// what clients configured masked by the rule of every answer (MaskSecrets). Everything else, the
// graph's state included, is shown as stored; data itself is untouched.
func MaskEventData(kind, typ string, data json.RawMessage) json.RawMessage {
	paths := eventSecrets[[2]string{kind, typ}]
	if len(paths) == 0 {
		return data
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // numbers shown as stored, not as float64
	var payload map[string]any
	if dec.Decode(&payload) != nil {
		return data
	}
	for _, p := range paths {
		maskAt(payload, p)
	}
	out, err := json.Marshal(payload)
	if err != nil {
		return data
	}
	return out
}

// maskAt replaces the value at path in m (when there is one) with its masked copy.
func maskAt(m map[string]any, path []string) {
	for _, k := range path[:len(path)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			return
		}
		m = next
	}
	last := path[len(path)-1]
	if v, ok := m[last]; ok {
		m[last] = MaskSecrets(v)
	}
}
