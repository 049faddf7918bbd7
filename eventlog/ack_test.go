package eventlog

import (
	"errors"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
)

// TestDecodeAck reads the answers a stream gives to a publish, as nats-server writes them.
func TestDecodeAck(t *testing.T) {
	tests := []struct {
		name    string
		data    string
		want    jetstream.PubAck
		code    jetstream.ErrorCode // a refusal's error code
		invalid bool
	}{
		{name: "stored", data: `{"stream":"JG","seq":42}`, want: jetstream.PubAck{Stream: "JG", Sequence: 42}},
		{name: "duplicate", data: `{"stream":"JG","seq":7,"duplicate":true}`, want: jetstream.PubAck{Stream: "JG", Sequence: 7, Duplicate: true}},
		{name: "domain", data: `{"stream":"JG","domain":"hub","seq":9,"batch":"b1","count":3}`,
			want: jetstream.PubAck{Stream: "JG", Domain: "hub", Sequence: 9}},
		{name: "unknown fields", data: `{"stream":"JG","seq":1,"new":{"x":[1]}}`, want: jetstream.PubAck{Stream: "JG", Sequence: 1}},
		{name: "wrong last sequence", code: jetstream.JSErrCodeStreamWrongLastSequence,
			data: `{"error":{"code":400,"err_code":10071,"description":"wrong last sequence: 3"}}`},
		{name: "empty", data: ``, invalid: true},
		{name: "no stream", data: `{"seq":1}`, invalid: true},
		{name: "not JSON", data: `+OK`, invalid: true},
		{name: "wrong type", data: `{"stream":"JG","seq":"1"}`, invalid: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeAck([]byte(tt.data))
			var apiErr *jetstream.APIError
			switch {
			case tt.invalid:
				if !errors.Is(err, errInvalidAck) {
					t.Fatalf("decodeAck(%q) = %+v, %v; want errInvalidAck", tt.data, got, err)
				}
			case tt.code != 0:
				if !errors.As(err, &apiErr) || apiErr.ErrorCode != tt.code || apiErr.Description == "" {
					t.Fatalf("decodeAck(%q) = %+v, %v; want API error %d", tt.data, got, err, tt.code)
				}
				if !errors.Is(appendError("append", err), ErrConflict) {
					t.Fatalf("appendError(%v) is not ErrConflict", err)
				}
			case err != nil || *got != tt.want:
				t.Fatalf("decodeAck(%q) = %+v, %v; want %+v", tt.data, got, err, tt.want)
			}
		})
	}
}

// FuzzDecodeAck checks that any answer is either an acknowledgement naming its stream or an
// error, never both and never a panic.
func FuzzDecodeAck(f *testing.F) {
	for _, s := range []string{`{"stream":"JG","seq":42}`, `{"error":{"code":503,"description":"no"}}`, ``, `{`, `{"stream":""}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := decodeAck(data)
		if (got == nil) == (err == nil) {
			t.Fatalf("decodeAck(%q) = %v, %v: want exactly one", data, got, err)
		}
		if got != nil && got.Stream == "" {
			t.Fatalf("decodeAck(%q) acknowledged without a stream", data)
		}
	})
}
