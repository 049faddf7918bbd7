package tracingapi

import (
	"bytes"
	"fmt"
	"mime/multipart"
	"net/textproto"
	"reflect"
	"testing"
)

type splitPart struct{ Name, Ctype, Data string }

func splitParts(body []byte, boundary string) ([]splitPart, bool) {
	var out []splitPart
	ok := splitTraceMultipart(body, boundary, func(name, ctype string, data []byte) {
		out = append(out, splitPart{name, ctype, string(data)})
	})
	return out, ok
}

func mimeParts(body []byte, boundary string) ([]splitPart, error) {
	var out []splitPart
	err := mimeTraceMultipart(body, boundary, 1<<20, func(name, ctype string, data []byte) {
		out = append(out, splitPart{name, ctype, string(data)})
	})
	return out, err
}

// writerBody is a body as mime/multipart.Writer (and the langsmith clients) write it.
func writerBody(t testing.TB, parts ...splitPart) ([]byte, string) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="%s"`, p.Name))
		if p.Ctype != "" {
			h.Set("Content-Type", p.Ctype)
		}
		pw, err := w.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		pw.Write([]byte(p.Data))
	}
	w.Close()
	return buf.Bytes(), w.Boundary()
}

// TestSplitTraceMultipartAgreesWithMime checks that the fast splitter reads the plain bodies, and
// that whenever it reads a body, mime/multipart reads the same parts from it.
func TestSplitTraceMultipartAgreesWithMime(t *testing.T) {
	canonical, b := writerBody(t,
		splitPart{"post.a", "application/json; length=9", `{"id":"a"}`},
		splitPart{"post.a.inputs", "application/json", "{\"x\":\"--\r\n-\"}"},
		splitPart{"patch.b", "", ""},
		splitPart{"attachment.a.f", "text/plain", "\r\n--" + "not the boundary\r\n"},
	)
	if got, ok := splitParts(canonical, b); !ok || len(got) != 4 {
		t.Fatalf("canonical body: %v %v", ok, got)
	}
	cases := map[string]struct {
		body string
		ok   bool
	}{
		"upper case disposition": {"--B\r\nContent-Disposition: Form-Data; Name=\"x\"\r\n\r\nd\r\n--B--\r\n", true},
		"no disposition":         {"--B\r\nX-Other: 1\r\n\r\nd\r\n--B--", true},
		"epilogue":               {"--B\r\n\r\nd\r\n--B--\r\nanything", true},
		"two content types":      {"--B\r\nContent-Type: a\r\ncontent-type: b\r\n\r\nd\r\n--B--", true},
		"preamble":               {"hello\r\n--B\r\n\r\nd\r\n--B--", false},
		"lf only":                {"--B\nContent-Disposition: form-data; name=\"x\"\n\nd\n--B--\n", false},
		"padding":                {"--B \r\n\r\nd\r\n--B--", false},
		"boundary prefix":        {"--B\r\n\r\nd\r\n--BX\r\n--B--", false},
		"filename":               {"--B\r\nContent-Disposition: form-data; name=\"x\"; filename=\"f\"\r\n\r\nd\r\n--B--", false},
		"escaped name":           {"--B\r\nContent-Disposition: form-data; name=\"x\\\"y\"\r\n\r\nd\r\n--B--", false},
		"continued header":       {"--B\r\nContent-Type: a\r\n b\r\n\r\nd\r\n--B--", false},
		"truncated":              {"--B\r\n\r\nd", false},
		"no final delimiter":     {"--B\r\n\r\nd\r\n--B\r\n", false},
		"final delimiter, lf":    {"--B\r\n\r\nd\r\n--B--\n", false},
		"final delimiter, eof":   {"--B\r\n\r\nd\r\n--B--", true},
		"non-ascii header":       {"--B\r\nContent-Type: é\r\n\r\nd\r\n--B--", false},
		"space in header name":   {"--B\r\nContent-Type : a\r\n\r\nd\r\n--B--", false},
		"delimiter after header": {"--B\r\n\r\n--B--", false},
	}
	for name, c := range cases {
		got, ok := splitParts([]byte(c.body), "B")
		if ok != c.ok {
			t.Errorf("%s: split %v, want %v", name, ok, c.ok)
		}
		if ok {
			want, err := mimeParts([]byte(c.body), "B")
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("%s: split %v, mime/multipart %v %v", name, got, want, err)
			}
		}
	}
	// Damaged copies of the canonical body: what the splitter reads, mime/multipart reads alike.
	read := 0
	for i := 0; i < len(canonical); i++ {
		for _, damage := range []func([]byte) []byte{
			func(x []byte) []byte { return append(x[:i:i], x[i+1:]...) },
			func(x []byte) []byte { y := bytes.Clone(x); y[i] = '\n'; return y },
			func(x []byte) []byte { y := bytes.Clone(x); y[i] = '-'; return y },
			func(x []byte) []byte { y := bytes.Clone(x); y[i] = '\r'; return y },
			func(x []byte) []byte { y := bytes.Clone(x); y[i] = '"'; return y },
			func(x []byte) []byte { y := bytes.Clone(x); y[i] = ':'; return y },
			func(x []byte) []byte { y := bytes.Clone(x); y[i] = 0xc3; return y },
			func(x []byte) []byte { return append(append(x[:i:i], ' '), x[i:]...) },
		} {
			body := damage(bytes.Clone(canonical))
			got, ok := splitParts(body, b)
			if !ok {
				continue
			}
			read++
			want, err := mimeParts(body, b)
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("damaged at %d: split %q\nmime/multipart %q %v\nbody %q", i, got, want, err, body)
			}
		}
	}
	t.Logf("%d damaged bodies read alike", read)
}
