package eventlog

import (
	"errors"
	"fmt"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetgraph/jetgraph/engine/jsoncount"
)

// ack is a stream's answer to a publish: an acknowledgement, or the reason it refused.
type ack struct {
	jetstream.PubAck
	Error *jetstream.APIError `json:"error,omitempty"`
}

// errInvalidAck is returned (wrapped) for an answer that is neither an acknowledgement nor a
// refusal: it does not say whether the message was stored.
var errInvalidAck = errors.New("eventlog: invalid acknowledgement")

// decodeAck reads a stream's answer to a publish: its acknowledgement, or its refusal as a
// *jetstream.APIError (what appendError reads the error code of).
func decodeAck(data []byte) (*jetstream.PubAck, error) {
	jsoncount.Decoded()
	var a ack
	if err := jsonv2.Unmarshal(data, &a); err != nil {
		return nil, fmt.Errorf("%w: %w", errInvalidAck, err)
	}
	if a.Error != nil {
		return nil, a.Error
	}
	if a.Stream == "" {
		return nil, fmt.Errorf("%w: no stream in %.64q", errInvalidAck, data)
	}
	return &a.PubAck, nil
}
