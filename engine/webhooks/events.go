package webhooks

import (
	"github.com/jetgraph/jetgraph/eventlog"
)

// Event types of a delivery, appended to the run's thread (subject thread.<tenant>.<id>.<type>);
// projections that do not know them pass them by.
const (
	EventDelivered = "webhook_delivered"
	EventFailed    = "webhook_failed"
)

// DeliveryData is the payload of EventDelivered and EventFailed. It never holds the URL's query
// string or user info, nor the body sent.
type DeliveryData struct {
	RunID      string        `json:"run_id"`
	URL        string        `json:"url"`              // scheme://host/path
	Attempts   int           `json:"attempts"`         // attempts made; 0 when the URL was refused
	Status     int           `json:"status,omitempty"` // HTTP status of the last answer
	Error      string        `json:"error,omitempty"`  // why the delivery failed
	DurationMS float64       `json:"duration_ms"`      // the whole delivery, backoff included
	History    []AttemptData `json:"history,omitempty"`
}

// AttemptData is one attempt in DeliveryData.
type AttemptData struct {
	Status     int     `json:"status,omitempty"`
	Error      string  `json:"error,omitempty"`
	Timeout    bool    `json:"timeout,omitempty"`
	DurationMS float64 `json:"duration_ms"`
}

// Data is the event payload of r, and its event type.
func (r Result) Data() (typ string, d DeliveryData) {
	d = DeliveryData{
		RunID: r.RunID, URL: r.URL, Attempts: len(r.Attempts), Status: r.Status(),
		DurationMS: ms(r.Duration.Seconds()),
	}
	for _, a := range r.Attempts {
		ad := AttemptData{Status: a.Status, Timeout: a.Timeout, DurationMS: ms(a.Duration.Seconds())}
		if a.Err != nil {
			ad.Error = a.Err.Error()
		}
		d.History = append(d.History, ad)
	}
	if r.Delivered {
		return EventDelivered, d
	}
	if r.Err != nil {
		d.Error = r.Err.Error()
	}
	return EventFailed, d
}

func ms(seconds float64) float64 { return float64(int64(seconds*1e6)) / 1e3 }

// Events are the events that record r on agg (the run's thread): one webhook_delivered or
// webhook_failed event, or none when webhooks are disabled.
func Events(agg eventlog.Aggregate, r Result) ([]eventlog.Event, error) {
	if r.Skipped {
		return nil, nil
	}
	typ, d := r.Data()
	e, err := eventlog.New(agg, typ, d)
	if err != nil {
		return nil, err
	}
	return []eventlog.Event{e}, nil
}
