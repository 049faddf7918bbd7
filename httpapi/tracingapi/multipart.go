package tracingapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/labstack/echo/v4"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/tracing"
	"github.com/jetgraph/jetgraph/engine/tracing/trace"
	"github.com/jetgraph/jetgraph/httpapi"
)

// traceCapReader reads at most limit bytes of r; reading more fails with a TooLarge error, so that
// neither a large body nor a decompression bomb is ever read past the limit.
type traceCapReader struct {
	r     io.Reader
	left  int64
	limit int64
	what  string
}

func (c *traceCapReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		var probe [1]byte
		if n, err := c.r.Read(probe[:]); n > 0 {
			return 0, engine.E(engine.Op("tracing.read_body"), engine.TooLarge, fmt.Sprintf("Request body over %d bytes%s.", c.limit, c.what))
		} else {
			return 0, err
		}
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

var (
	traceGzipReaders sync.Pool
	traceZstdReaders sync.Pool
)

// tracingBody returns the request body, decompressed as its Content-Encoding says (gzip, zstd),
// and bounded by the service's limit both as sent and decompressed. done releases the decoder.
func tracingBody(c echo.Context, limit int64) (io.Reader, func(), error) {
	req := c.Request()
	if req.ContentLength > limit {
		return nil, nil, engine.E(engine.Op("tracing.read_body"), engine.TooLarge, fmt.Sprintf("Request body over %d bytes.", limit))
	}
	wire := &traceCapReader{r: req.Body, left: limit, limit: limit}
	bounded := func(r io.Reader) io.Reader {
		return &traceCapReader{r: r, left: limit, limit: limit, what: " once decompressed"}
	}
	switch enc := strings.ToLower(strings.TrimSpace(req.Header.Get(echo.HeaderContentEncoding))); enc {
	case "", "identity":
		return wire, func() {}, nil
	case "gzip", "x-gzip":
		zr, _ := traceGzipReaders.Get().(*gzip.Reader)
		var err error
		if zr == nil {
			zr, err = gzip.NewReader(wire)
		} else {
			err = zr.Reset(wire)
		}
		if err != nil {
			return nil, nil, traceBodyError(err, "gzip")
		}
		return bounded(zr), func() { traceGzipReaders.Put(zr) }, nil
	case "zstd":
		zr, _ := traceZstdReaders.Get().(*zstd.Decoder)
		var err error
		if zr == nil {
			zr, err = zstd.NewReader(wire, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
				zstd.WithDecoderMaxWindow(traceMaxZstdWindow))
		} else {
			err = zr.Reset(wire)
		}
		if err != nil {
			return nil, nil, traceBodyError(err, "zstd")
		}
		return bounded(zr), func() { _ = zr.Reset(nil); traceZstdReaders.Put(zr) }, nil
	default:
		return nil, nil, engine.E(engine.Op("tracing.read_body"), engine.BadRequest,
			fmt.Sprintf("Content-Encoding %q is not supported: send gzip, zstd or none.", enc))
	}
}

// traceMaxZstdWindow bounds the memory a zstd frame may ask the decoder for.
const traceMaxZstdWindow = 32 << 20

// traceBodyError turns a failure to read the body into the client's error: TooLarge as it is, and
// anything else (a truncated or corrupt stream) a BadRequest.
func traceBodyError(err error, what string) error {
	var ee *engine.Error
	if errors.As(err, &ee) {
		return err
	}
	if errors.Is(err, zstd.ErrWindowSizeExceeded) || errors.Is(err, zstd.ErrDecoderSizeExceeded) {
		return engine.E(engine.Op("tracing.read_body"), engine.TooLarge,
			fmt.Sprintf("The zstd stream needs a window over %d bytes.", traceMaxZstdWindow), err)
	}
	return engine.E(engine.Op("tracing.read_body"), engine.BadRequest, fmt.Sprintf("Could not read the %s body: %v.", what, err), err)
}

// tracePartSize is the size a part announces: "length=N" in its Content-Type, or its
// Content-Length; -1 when it announces none.
func tracePartSize(p *multipart.Part) int {
	if ct := p.Header.Get(echo.HeaderContentType); ct != "" {
		if i := strings.Index(ct, "length="); i >= 0 {
			v := ct[i+len("length="):]
			if j := strings.IndexAny(v, "; "); j >= 0 {
				v = v[:j]
			}
			if n, err := strconv.Atoi(v); err == nil && n >= 0 {
				return n
			}
		}
	}
	if n, err := strconv.Atoi(p.Header.Get(echo.HeaderContentLength)); err == nil && n >= 0 {
		return n
	}
	return -1
}

// traceReadPart reads a part whole; the body's cap bounds it.
func traceReadPart(p *multipart.Part, limit int64) ([]byte, error) {
	var buf bytes.Buffer
	if n := tracePartSize(p); n > 0 {
		buf.Grow(int(min(int64(n), limit)) + bytes.MinRead)
	}
	_, err := buf.ReadFrom(p)
	return buf.Bytes(), err
}

// traceRunFields are the field parts a run may have (post.<id>.<field>, patch.<id>.<field>).
var traceRunFields = map[string]bool{"inputs": true, "outputs": true, "events": true, "extra": true, "error": true, "serialized": true}

// parseTraceMultipart reads a multipart ingestion body. A body that cannot be read as
// multipart fails whole; a part that is wrong refuses only its item.
//
// The body is read whole (the parts are kept anyway), then split by splitTraceMultipart when it
// has the plain form the clients send, else by mime/multipart.
func parseTraceMultipart(c echo.Context, body io.Reader, limit int64) (*tracing.Batch, error) {
	const op = "tracing.multipart"
	mt, params, err := mime.ParseMediaType(c.Request().Header.Get(echo.HeaderContentType))
	if err != nil || !strings.HasPrefix(mt, "multipart/") || params["boundary"] == "" {
		return nil, engine.E(engine.Op(op), engine.BadRequest, "Expected a multipart/form-data body with a boundary.")
	}
	var buf bytes.Buffer
	if n := c.Request().ContentLength; n > 0 && n <= limit {
		buf.Grow(int(n) + bytes.MinRead)
	}
	if _, err := buf.ReadFrom(body); err != nil {
		return nil, traceBodyError(err, "multipart")
	}
	b := &tracing.Batch{RequireIDs: true}
	p := &traceParts{b: b, ops: map[string]*tracing.Op{}}
	if !splitTraceMultipart(buf.Bytes(), params["boundary"], p.add) {
		*p = traceParts{b: b, ops: map[string]*tracing.Op{}}
		*b = tracing.Batch{RequireIDs: true}
		if err := mimeTraceMultipart(buf.Bytes(), params["boundary"], limit, p.add); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// mimeTraceMultipart hands every part of a multipart body to add, read by mime/multipart.
func mimeTraceMultipart(body []byte, boundary string, limit int64, add func(name, ctype string, data []byte)) error {
	mr := multipart.NewReader(bytes.NewReader(body), boundary)
	for {
		p, err := mr.NextRawPart()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return traceBodyError(err, "multipart")
		}
		data, err := traceReadPart(p, limit)
		if err != nil {
			return traceBodyError(err, "multipart")
		}
		add(p.FormName(), p.Header.Get(echo.HeaderContentType), data)
	}
}

// traceParts turns the parts of a multipart body into a batch.
type traceParts struct {
	b   *tracing.Batch
	ops map[string]*tracing.Op
}

func (t *traceParts) opOf(kind, id string) *tracing.Op {
	key := kind + "." + id
	o := t.ops[key]
	if o == nil {
		o = tracing.NewOp(kind, []any{key}, nil)
		o.Run["id"] = id
		t.ops[key] = o
		t.b.Ops = append(t.b.Ops, o)
	}
	return o
}

// add takes one part: its form name, its Content-Type and its bytes.
func (t *traceParts) add(name, ctype string, data []byte) {
	segs := strings.SplitN(name, ".", 3)
	if segs[0] != "attachment" && !utf8.Valid(data) { // JSON text; an attachment's bytes are not
		var bad engine.Violations
		httpapi.InvalidUTF8(&bad, "body", name)
		if len(segs) >= 2 && (segs[0] == trace.KindPost || segs[0] == trace.KindPatch) {
			o := t.opOf(segs[0], strings.ToLower(segs[1])) // the run is refused, as for any bad part of it
			o.Problems = append(o.Problems, bad...)
		} else {
			t.ops["?"+name] = &tracing.Op{Problems: bad}
			t.b.Ops = append(t.b.Ops, t.ops["?"+name])
		}
		return
	}
	switch {
	case len(segs) >= 2 && (segs[0] == trace.KindPost || segs[0] == trace.KindPatch):
		id := strings.ToLower(segs[1])
		o := t.opOf(segs[0], id)
		if len(segs) == 3 {
			if traceRunFields[segs[2]] {
				o.SetField(segs[2], data, []any{"body", name})
			} // other fields are ignored, as the contract says
			return
		}
		var fields map[string]any
		if err := trace.DecodeObject(data, &fields); err != nil || fields == nil {
			o.Problems = append(o.Problems, engine.FieldError{Loc: []any{"body", name}, Msg: "not a JSON object", Type: "json_invalid"})
			return
		}
		o.SetObject(data, fields, []any{name})
		if got := o.ID(); got != id {
			o.Problems = append(o.Problems, engine.FieldError{Loc: []any{"body", name, "id"},
				Msg: fmt.Sprintf("id %q is not the part's run id %s", got, id), Type: "value_error"})
		}
	case len(segs) == 3 && segs[0] == "attachment":
		mimeType, _, _ := mime.ParseMediaType(ctype)
		if mimeType == "" {
			mimeType = "application/octet-stream"
		}
		t.b.Attachments = append(t.b.Attachments, &tracing.Attachment{Where: []any{name}, RunID: segs[1], Name: segs[2],
			MimeType: mimeType, Data: data})
	case len(segs) == 2 && segs[0] == "feedback":
		t.b.Feedback = append(t.b.Feedback, &tracing.Feedback{Where: []any{name}, ID: segs[1], Raw: data})
	default:
		t.ops["?"+name] = &tracing.Op{Problems: []engine.FieldError{{Loc: []any{"body", name},
			Msg:  "unknown part: expected post.<id>[.<field>], patch.<id>[.<field>], attachment.<id>.<name> or feedback.<id>",
			Type: "value_error"}}}
		t.b.Ops = append(t.b.Ops, t.ops["?"+name])
	}
}

// readTraceText reads a body of JSON text (decompressed already): invalid UTF-8 is refused
// whole, as on every route (httpapi.InvalidUTF8).
func readTraceText(body io.Reader, op string) ([]byte, error) {
	data, err := io.ReadAll(body)
	if err != nil {
		return nil, traceBodyError(err, "request")
	}
	if !utf8.Valid(data) {
		var bad engine.Violations
		httpapi.InvalidUTF8(&bad, "body", 0)
		return nil, bad.Err(op)
	}
	return data, nil
}

// parseTraceBatch reads a POST /runs/batch body: {"post": [run...], "patch": [run...]}.
func parseTraceBatch(body io.Reader) (*tracing.Batch, error) {
	const op = "tracing.batch"
	data, err := readTraceText(body, op)
	if err != nil {
		return nil, err
	}
	var lists map[string]json.RawMessage
	if err := json.Unmarshal(data, &lists); err != nil {
		return nil, engine.Violations{{Loc: []any{"body"}, Msg: "not a JSON object", Type: "json_invalid"}}.Err(op)
	}
	b := &tracing.Batch{}
	var errs engine.Violations
	for _, kind := range []string{trace.KindPost, trace.KindPatch} {
		raw, ok := lists[kind]
		if !ok || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			continue
		}
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			errs.Add("list_type", "must be a list of runs", "body", kind)
			continue
		}
		for i, item := range items {
			b.Ops = append(b.Ops, traceRunOp(kind, []any{kind, i}, item))
		}
	}
	return b, errs.Err(op)
}

// traceRunOp builds the op of one run object.
func traceRunOp(kind string, where []any, item json.RawMessage) *tracing.Op {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(item, &fields); err != nil || fields == nil {
		return &tracing.Op{Kind: kind, Where: where, Problems: []engine.FieldError{
			{Loc: append([]any{"body"}, where...), Msg: "must be a JSON object", Type: "dict_type"}}}
	}
	return tracing.NewOp(kind, where, fields)
}
