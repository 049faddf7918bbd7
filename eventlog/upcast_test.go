package eventlog_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/eventlog"
)

// rename returns an upcaster that moves a top-level field.
func rename(from, to string) eventlog.Upcaster {
	return func(data json.RawMessage) (json.RawMessage, error) {
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			return nil, err
		}
		m[to] = m[from]
		delete(m, from)
		return json.Marshal(m)
	}
}

// noteUpcasters has note_added at version 3: v1 {"text"} became v2 {"body"}, then v3 {"content"}.
func noteUpcasters() *eventlog.Upcasters {
	u := eventlog.NewUpcasters()
	u.Register("note_added", 1, rename("text", "body"))
	u.Register("note_added", 2, rename("body", "content"))
	return u
}

func TestUpcastChain(t *testing.T) {
	u := noteUpcasters()
	tests := []struct {
		name, typ string
		v         int
		data      string
		wantV     int
		wantData  string
		unknown   bool
	}{
		{name: "v1 to v3", typ: "note_added", v: 1, data: `{"text":"hi"}`, wantV: 3, wantData: `{"content":"hi"}`},
		{name: "v0 is v1", typ: "note_added", v: 0, data: `{"text":"hi"}`, wantV: 3, wantData: `{"content":"hi"}`},
		{name: "v2 to v3", typ: "note_added", v: 2, data: `{"body":"hi"}`, wantV: 3, wantData: `{"content":"hi"}`},
		{name: "current as stored", typ: "note_added", v: 3, data: `{"content": "hi"}`, wantV: 3, wantData: `{"content": "hi"}`},
		{name: "a type without upcasters", typ: "other", v: 1, data: `{"x":1}`, wantV: 1, wantData: `{"x":1}`},
		{name: "a future version", typ: "note_added", v: 4, data: `{"content":"hi","lang":"en"}`, unknown: true},
		{name: "a future version of a type without upcasters", typ: "other", v: 2, data: `{}`, unknown: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := eventlog.Event{ID: "01J0000000000000000000000A", Type: tt.typ, Version: tt.v, Data: json.RawMessage(tt.data), Seq: 7}
			got, err := u.Upcast(in)
			if tt.unknown {
				if !errors.Is(err, eventlog.ErrUnknownVersion) || !strings.Contains(err.Error(), tt.typ+" event "+in.ID+" (seq 7) is version") {
					t.Fatalf("err = %v, want a clear %v", err, eventlog.ErrUnknownVersion)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Version != tt.wantV || string(got.Data) != tt.wantData {
				t.Errorf("upcast to v%d %s, want v%d %s", got.Version, got.Data, tt.wantV, tt.wantData)
			}
			if string(in.Data) != tt.data {
				t.Errorf("the stored event changed: %s", in.Data)
			}
		})
	}
	if got := u.Current("note_added"); got != 3 {
		t.Errorf("Current = %d, want 3", got)
	}
}

func TestUpcasterFailures(t *testing.T) {
	tests := []struct {
		name string
		f    eventlog.Upcaster
		want string
	}{
		{"refused", func(json.RawMessage) (json.RawMessage, error) { return nil, errors.New("no text") }, "no text"},
		{"invalid JSON", func(json.RawMessage) (json.RawMessage, error) { return json.RawMessage(`{"x":`), nil }, "invalid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := eventlog.NewUpcasters()
			u.Register("note_added", 1, tt.f)
			_, err := u.Upcast(eventlog.Event{ID: "e1", Type: "note_added", Version: 1, Data: json.RawMessage(`{}`)})
			if err == nil || !strings.Contains(err.Error(), "upcast note_added event e1") || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one naming the event and %q", err, tt.want)
			}
		})
	}
}

func TestRegisterInOrderOnly(t *testing.T) {
	tests := []struct {
		name     string
		register func(u *eventlog.Upcasters)
	}{
		{"a gap", func(u *eventlog.Upcasters) { u.Register("note_added", 2, rename("a", "b")) }},
		{"a step twice", func(u *eventlog.Upcasters) {
			u.Register("note_added", 1, rename("a", "b"))
			u.Register("note_added", 1, rename("a", "c"))
		}},
		{"no function", func(u *eventlog.Upcasters) { u.Register("note_added", 1, nil) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("accepted")
				}
			}()
			tt.register(eventlog.NewUpcasters())
		})
	}
}

func TestNewWritesTheCurrentVersion(t *testing.T) {
	typ := "test_moved_" + strings.ToLower(eventlog.NewID(time.Now())) // a type of this run only
	agg := eventlog.Aggregate{Kind: "thread", Tenant: eventlog.DefaultTenant, ID: "t"}
	before, err := eventlog.New(agg, typ, map[string]any{"text": "hi"})
	if err != nil || before.Version != eventlog.SchemaVersion {
		t.Fatalf("before the move: v%d %v", before.Version, err)
	}
	eventlog.Upcasts.Register(typ, 1, rename("text", "body"))
	after, err := eventlog.New(agg, typ, map[string]any{"body": "hi"})
	if err != nil || after.Version != 2 {
		t.Fatalf("after the move: v%d %v", after.Version, err)
	}
}
