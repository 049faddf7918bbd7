package httpapitest

import (
	"bytes"
	"context"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// NewServer starts a test server for h whose every exchange is checked against the OpenAPI
// document, and closes it when the test ends. Benchmarks get h unchecked: they measure the
// handlers, not the checks.
func NewServer(t testing.TB, document []byte, h http.Handler) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(Handler(t, document, h))
	// Close waits for the handlers, and so for their checks, before the test is over.
	t.Cleanup(ts.Close)
	return ts
}

// NewServerPassing is NewServer, but the requests whose path starts with prefix reach h
// unchecked: a route the document leaves out by design, as a proxy's passing another API on.
func NewServerPassing(t testing.TB, document []byte, h http.Handler, prefix string) *httptest.Server {
	t.Helper()
	checked := Handler(t, document, h)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, prefix) {
			h.ServeHTTP(w, r)
			return
		}
		checked.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts
}

// Handler wraps h so that each exchange is checked against document once h has answered; a
// departure fails t with the method, path, status and what departs. The request reaches h as
// sent, and the response reaches the client as h writes it (flushes included): event streams
// stream.
func Handler(t testing.TB, document []byte, h http.Handler) http.Handler {
	t.Helper()
	if _, ok := t.(*testing.B); ok {
		return h
	}
	c, err := Load(document)
	if err != nil {
		t.Fatal(err)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body []byte
		if r.Body != nil {
			body, _ = io.ReadAll(r.Body)
			r.Body.Close()
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		// The check gets its own copy of the request: h may change r.
		sent := r.Clone(context.WithoutCancel(r.Context()))
		rec := &recorder{ResponseWriter: w, status: http.StatusOK, ctx: r.Context()}
		h.ServeHTTP(rec, r)
		if rec.late || (!rec.wroteHeader && r.Context().Err() != nil) || isPreflight(sent) {
			// No client reads an answer begun after it left; a CORS preflight is the browser's
			// question to the CORS middleware, which answers it for every route.
			return
		}
		x := Exchange{Request: sent, Status: rec.status, Header: rec.Header().Clone(), Body: rec.body.Bytes(),
			BodyUnchecked: rec.unkept}
		x.RequestBody, x.RequestBodyUnknown = decoded(sent.Header.Get("Content-Encoding"), body)
		for _, p := range c.Check(sent.Context(), x) {
			t.Errorf("OpenAPI contract: %s %s -> %d: %s", sent.Method, pathOf(sent.URL), rec.status, p)
		}
	})
}

// isPreflight reports whether r is a CORS preflight request.
func isPreflight(r *http.Request) bool {
	return r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != ""
}

// decoded returns a request body as its Content-Encoding says, and whether it is not to be
// checked: undecodable, or over MaxCheckedBody.
func decoded(encoding string, body []byte) ([]byte, bool) {
	var r io.Reader
	switch strings.ToLower(strings.TrimSpace(encoding)) {
	case "", "identity":
		return body, len(body) > MaxCheckedBody
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			return nil, true
		}
		r = zr
	case "zstd":
		zr, err := zstd.NewReader(bytes.NewReader(body), zstd.WithDecoderConcurrency(1))
		if err != nil {
			return nil, true
		}
		defer zr.Close()
		r = zr
	default:
		return nil, true
	}
	out, err := io.ReadAll(io.LimitReader(r, MaxCheckedBody+1))
	if err != nil || len(out) > MaxCheckedBody {
		return nil, true
	}
	return out, false
}

// recorder passes a response through to the client and keeps its status, and its body unless
// it is an event stream or over MaxCheckedBody.
type recorder struct {
	http.ResponseWriter
	ctx         context.Context // the request's: done once the client has left
	late        bool            // the status was written after the client left
	status      int
	wroteHeader bool
	unkept      bool // the body is not kept: a stream, or over MaxCheckedBody
	body        bytes.Buffer
}

func (r *recorder) WriteHeader(code int) {
	if !r.wroteHeader {
		r.wroteHeader, r.status, r.late = true, code, r.ctx.Err() != nil
		ct, _, _ := mime.ParseMediaType(r.Header().Get("Content-Type"))
		r.unkept = ct == MIMEEventStream
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if !r.wroteHeader {
		r.WriteHeader(http.StatusOK)
	}
	switch {
	case r.unkept:
	case r.body.Len()+len(b) > MaxCheckedBody:
		r.unkept = true
		r.body = bytes.Buffer{}
	default:
		r.body.Write(b)
	}
	return r.ResponseWriter.Write(b)
}

// Flush lets event streams reach the client as they are written.
func (r *recorder) Flush() {
	if !r.wroteHeader {
		r.WriteHeader(http.StatusOK)
	}
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the client's writer.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
