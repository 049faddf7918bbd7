package traces

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jetgraph/jetgraph/engine/tracing/trace"
)

// TraceRecordText renders a record of the trace projection's binary forms as text for golden
// files: a run record as its JSON head, inputs and outputs; a meta as JSON. ok is false for
// other buckets.
func TraceRecordText(bucket string, v []byte) (text string, ok bool, err error) {
	switch bucket {
	case string(tRuns):
		var r trace.Run
		sec, err := readRunRecordFields(v, &r)
		if err != nil {
			return "", true, err
		}
		head, err := json.Marshal(storedRun{r.ID, r.TraceID, r.DottedOrder, r.Name, r.RunType, r.SessionID, r.SessionName,
			r.ParentRunID, r.Error, r.ReferenceExampleID, r.StartTime, r.EndTime, r.Tags, r.Patched, r.Attachments})
		if err != nil {
			return "", true, err
		}
		return fmt.Sprintf("%s\n  extra: %s\n  events: %s\n  inputs: %s\n  outputs: %s", head, sec.extra, sec.events, sec.inputs, sec.outputs), true, nil
	case string(tCounters):
		c, err := decodeCounters(v)
		if err != nil {
			return "", true, err
		}
		var b strings.Builder
		b.WriteString("{")
		for i, n := range c {
			if n != 0 {
				if b.Len() > 1 {
					b.WriteString(",")
				}
				fmt.Fprintf(&b, "%q:%d", counterNames[i], n)
			}
		}
		return b.String() + "}", true, nil
	case string(tMeta):
		m, err := decodeMeta(v)
		if err != nil {
			return "", true, err
		}
		if !equalMeta(m, mustDecodeMeta(encodeMeta(m))) {
			return "", true, fmt.Errorf("meta does not survive encoding again: %+v", m)
		}
		raw, err := json.Marshal(m)
		return string(raw), true, err
	}
	return "", false, nil
}

// storedRun shows the fields a run record stores but its JSON sections.
type storedRun struct {
	ID                 string                      `json:"id"`
	TraceID            string                      `json:"trace_id"`
	DottedOrder        string                      `json:"dotted_order"`
	Name               string                      `json:"name"`
	RunType            string                      `json:"run_type"`
	SessionID          string                      `json:"session_id"`
	SessionName        string                      `json:"session_name"`
	ParentRunID        *string                     `json:"parent_run_id"`
	Error              *string                     `json:"error"`
	ReferenceExampleID *string                     `json:"reference_example_id"`
	StartTime          time.Time                   `json:"start_time"`
	EndTime            *time.Time                  `json:"end_time"`
	Tags               []string                    `json:"tags"`
	Patched            []string                    `json:"patched_fields"`
	Attachments        map[string]trace.Attachment `json:"attachments"`
}

func mustDecodeMeta(b []byte) runMeta {
	m, err := decodeMeta(b)
	if err != nil {
		panic(err)
	}
	return m
}

func equalMeta(a, b runMeta) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
