package projections

import (
	"encoding/json"
	"fmt"
)

// TraceRecordText renders a record of the trace projection's binary forms as text for golden
// files: a run record as its JSON head, inputs and outputs; a meta as JSON. ok is false for
// other buckets.
func TraceRecordText(bucket string, v []byte) (text string, ok bool, err error) {
	switch bucket {
	case string(tRuns):
		head, inputs, outputs, err := splitRun(v)
		if err != nil {
			return "", true, err
		}
		return fmt.Sprintf("%s\n  inputs: %s\n  outputs: %s", head, inputs, outputs), true, nil
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
