package streaming

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Frame is one server-sent event: Event, Data (one JSON value) and ID; or, when Comment is
// set, a comment line (heartbeats, notices), which clients ignore.
type Frame struct {
	Event   string
	Data    []byte
	ID      string
	Comment string
}

// FrameSink receives the frames of a stream. Flush is called when no further frame is ready,
// so that a client gets every event as soon as it exists.
type FrameSink interface {
	WriteFrame(Frame) error
	Flush() error
}

// crlf removes carriage returns and line feeds, which would end an SSE field early (and let a
// crafted value inject fields or events), and NUL, which makes a client ignore an id field (and
// so lose its place for Last-Event-ID).
var crlf = strings.NewReplacer("\r", "", "\n", "", "\x00", "")

// clean strips CR, LF and NUL from s.
func clean(s string) string {
	if strings.ContainsAny(s, "\r\n\x00") {
		return crlf.Replace(s)
	}
	return s
}

// AppendFrame appends f in SSE form to b: "event: <name>\ndata: <json>\nid: <id>\n\n", or
// ": <comment>\n\n". The event and id are stripped of CR, LF and NUL; the data is made one line
// (JSON allows no line break inside strings, so compacting it removes them all).
func AppendFrame(b []byte, f Frame) []byte {
	if f.Comment != "" {
		b = append(b, ": "...)
		b = append(b, clean(f.Comment)...)
		return append(b, "\n\n"...)
	}
	b = append(b, "event: "...)
	b = append(b, clean(f.Event)...)
	b = append(b, "\ndata: "...)
	b = appendData(b, f.Data)
	if f.ID != "" {
		b = append(b, "\nid: "...)
		b = append(b, clean(f.ID)...)
	}
	return append(b, "\n\n"...)
}

// appendData appends data as one line of JSON: as it is when it is one already, compacted when
// it holds line breaks, and as a JSON string when it is not JSON at all; empty data is null.
func appendData(b, data []byte) []byte {
	if len(data) == 0 {
		return append(b, "null"...)
	}
	if bytes.IndexByte(data, '\n') < 0 && bytes.IndexByte(data, '\r') < 0 {
		return append(b, data...)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, data); err == nil {
		return append(b, buf.Bytes()...)
	}
	s, _ := json.Marshal(string(data))
	return append(b, s...)
}
