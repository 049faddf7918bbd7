package streaming

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// sseEvent is an event as a browser's EventSource dispatches it.
type sseEvent struct{ Event, Data, ID string }

// parseSSE is a reference reader of the event stream format as the WHATWG HTML standard defines
// it (lines end with CRLF, LF or CR; a colon first is a comment; one space after the field's
// colon is dropped; data lines join with LF; an id with NUL is ignored; a blank line dispatches
// an event that has data). It is written from the standard, independently of AppendFrame.
func parseSSE(stream string) (events []sseEvent, lastID string) {
	stream = strings.ReplaceAll(stream, "\r\n", "\n")
	stream = strings.ReplaceAll(stream, "\r", "\n")
	var event string
	var data []string
	hasData := false
	for _, line := range strings.Split(stream, "\n") {
		if line == "" {
			if hasData {
				name := event
				if name == "" {
					name = "message"
				}
				events = append(events, sseEvent{name, strings.Join(data, "\n"), lastID})
			}
			event, data, hasData = "", nil, false
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			event = value
		case "data":
			data, hasData = append(data, value), true
		case "id":
			if !strings.Contains(value, "\x00") {
				lastID = value
			}
		}
	}
	return events, lastID
}

// FuzzAppendFrame: a frame written by AppendFrame is read back by a standard SSE reader as exactly
// one event with the frame's name and id (line breaks removed) and its data as one JSON line, the
// same JSON value; a comment frame is no event; nothing in a frame injects another event or field.
func FuzzAppendFrame(f *testing.F) {
	f.Add("values", []byte(`{"a":"b\nc"}`), "1-0", "")
	f.Add("metadata", []byte("{\n  \"run_id\": \"x\"\n}"), "", "")
	f.Add("evil\n\ndata: x", []byte("not json\r\nid: 9"), "7\rid: 8", "")
	f.Add("", []byte(nil), "", "heartbeat\n\nevent: x")
	f.Add("x", []byte(`"s"`), "a\x00b", "")
	f.Fuzz(func(t *testing.T, event string, data []byte, id, comment string) {
		fr := Frame{Event: event, Data: data, ID: id, Comment: comment}
		out := AppendFrame(nil, fr)
		if !utf8.Valid(out) && utf8.ValidString(event) && utf8.ValidString(id) && utf8.ValidString(comment) && utf8.Valid(data) {
			t.Fatalf("valid text written as invalid UTF-8: %q", out)
		}
		// A second frame after it must be read as itself: the first cannot swallow or forge it.
		events, lastID := parseSSE(string(AppendFrame(out, Frame{Event: "end", Data: []byte("0"), ID: "last"})))
		if comment != "" {
			if len(events) != 1 || events[0] != (sseEvent{"end", "0", "last"}) {
				t.Fatalf("comment %q: read back %q", comment, events)
			}
			return
		}
		if len(events) != 2 || events[1] != (sseEvent{"end", "0", "last"}) || lastID != "last" {
			t.Fatalf("frame %+v written %q: read back %q", fr, out, events)
		}
		got := events[0]
		wantEvent := clean(event)
		if wantEvent == "" {
			wantEvent = "message"
		}
		if got.Event != wantEvent {
			t.Fatalf("event %q read back as %q", event, got.Event)
		}
		if id != "" && got.ID != clean(id) {
			t.Fatalf("id %q read back as %q (written %q)", id, got.ID, out)
		}
		if strings.Contains(got.Data, "\n") {
			t.Fatalf("data of several lines: %q", got.Data)
		}
		switch {
		case len(data) == 0:
			if got.Data != "null" {
				t.Fatalf("empty data read back as %q, want null", got.Data)
			}
		case !bytes.ContainsAny(data, "\r\n"):
			if got.Data != string(data) {
				t.Fatalf("one-line data %q read back as %q", data, got.Data)
			}
		case json.Valid(data):
			if !sameJSON(t, data, []byte(got.Data)) {
				t.Fatalf("JSON %q read back as %q", data, got.Data)
			}
		default:
			var s string
			if err := json.Unmarshal([]byte(got.Data), &s); err != nil || utf8.Valid(data) && s != string(data) {
				t.Fatalf("text %q read back as %q (%v)", data, got.Data, err)
			}
		}
	})
}

func sameJSON(t *testing.T, a, b []byte) bool {
	var x, y bytes.Buffer
	if json.Compact(&x, a) != nil || json.Compact(&y, b) != nil {
		return false
	}
	return bytes.Equal(x.Bytes(), y.Bytes())
}
