package tracingapi

import (
	"reflect"
	"testing"
)

// FuzzSplitTraceMultipart is the splitter's differential test against mime/multipart: whenever
// the fast splitter reads a body, mime/multipart reads it too, with the same parts in the same
// order, the same names, content types and bytes. (When the splitter declines a body, the
// handler parses it with mime/multipart, so declining is always safe.)
func FuzzSplitTraceMultipart(f *testing.F) {
	body, boundary := writerBody(f,
		splitPart{"post.019a0000-0000-7000-8000-000000000001", "application/json", `{"name":"a"}`},
		splitPart{"post.019a0000-0000-7000-8000-000000000001.inputs", "application/json; length=2", "{}"},
		splitPart{"attachment.x.file", "", "\r\n--not the boundary\r\n"})
	f.Add(body, boundary)
	f.Add([]byte("--b\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nx\r\n--b--"), "b")
	f.Add([]byte("--b\r\ncontent-disposition: FORM-DATA; NAME=\"a\"\r\nContent-Type: t\r\nContent-Type: u\r\n\r\n\r\n--b\r\n\r\ny\r\n--b--\r\n"), "b")
	f.Fuzz(func(t *testing.T, body []byte, boundary string) {
		fast, ok := splitParts(body, boundary)
		if !ok {
			return
		}
		slow, err := mimeParts(body, boundary)
		if err != nil {
			t.Fatalf("the splitter read %q parts %q, mime/multipart refuses it: %v", body, fast, err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("body %q, boundary %q:\nsplitter       %q\nmime/multipart %q", body, boundary, fast, slow)
		}
	})
}
