package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	jsonv1 "github.com/go-json-experiment/json/v1"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/jsoncount"
)

// stateBodyRoutes are the routes whose bodies carry a state or a run's input: they take
// engine.MaxStateBodyBytes, every other route engine.MaxBodyBytes.
var stateBodyRoutes = map[string]bool{
	"/threads": true, "/threads/:thread_id/state": true,
	"/threads/:thread_id/runs": true, "/threads/:thread_id/runs/wait": true, "/threads/:thread_id/runs/stream": true,
	"/runs": true, "/runs/wait": true, "/runs/stream": true, "/runs/batch": true,
	"/store/items": true, "/threads/:thread_id/commands": true,
	"/a2a/:assistant_id": true, "/mcp": true,
}

// InvalidUTF8 records the one problem of a request text that is not valid UTF-8, at loc: the
// same 422 on every route (runtime, control plane, A2A, MCP, tracing, a tracing multipart
// body's JSON parts) rather than U+FFFD put in silently where the text is decoded.
func InvalidUTF8(errs *engine.Violations, loc ...any) {
	errs.Add("json_invalid", "Request body is not valid UTF-8", loc...)
}

// checkUTF8 is checkBody as a middleware, for when other middleware runs before it.
func checkUTF8(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := checkBody(c); err != nil {
			return err
		}
		return next(c)
	}
}

// checkBody refuses, on every route, a JSON body (see jsonContentType) that is not valid UTF-8,
// before the route reads it: A2A and MCP decode bodies with decoders that would replace the
// bad bytes. The body is read once, up to the route's limit, and handed back to the route (a
// readBack, whose text ReadJSON takes without reading or copying it again). Left to the route:
// compressed bodies and multipart ones (tracing checks its decoded text and JSON parts with
// InvalidUTF8), bodies over the limit (the route's 413), and what the custom_url proxy
// forwards (the deployment's server applies this rule itself).
func checkBody(c echo.Context) error {
	req := c.Request()
	limit := bodyLimit(c)
	enc := strings.TrimSpace(req.Header.Get(echo.HeaderContentEncoding))
	if req.Body == nil || req.Body == http.NoBody || req.ContentLength == 0 || req.ContentLength > int64(limit) ||
		(enc != "" && !strings.EqualFold(enc, "identity")) || !jsonContentType(req.Header.Get(echo.HeaderContentType)) ||
		strings.HasPrefix(c.Path(), "/deployments/") {
		return nil
	}
	var data []byte
	var err error
	if req.ContentLength > 0 { // the length is known, and within the limit: one allocation
		data = make([]byte, req.ContentLength)
		_, err = io.ReadFull(req.Body, data)
	} else {
		data, err = io.ReadAll(io.LimitReader(req.Body, int64(limit)+1))
	}
	if err != nil {
		return engine.E(engine.Op("read body"), engine.BadRequest, "Could not read the request body.", err)
	}
	rb := &readBack{data: data, rest: req.Body}
	req.Body = rb
	if len(data) > limit {
		return nil // the route answers 413
	}
	if !utf8.Valid(data) {
		var errs engine.Violations
		InvalidUTF8(&errs, "body", 0)
		return errs.Err("read body")
	}
	rb.text = true
	return nil
}

// readBack is a request body read ahead: what was read, then the rest.
type readBack struct {
	data []byte
	off  int
	rest io.ReadCloser
	// text says data is the whole body, checked valid UTF-8 within the route's limit.
	text bool
}

func (r *readBack) Read(p []byte) (int, error) {
	if r.off < len(r.data) {
		n := copy(p, r.data[r.off:])
		r.off += n
		return n, nil
	}
	return r.rest.Read(p)
}

func (r *readBack) Close() error { return r.rest.Close() }

// checkedText is the body checkBody read and checked, if it did.
func checkedText(c echo.Context) ([]byte, bool) {
	if rb, ok := c.Request().Body.(*readBack); ok && rb.text {
		return rb.data, true
	}
	return nil, false
}

// bodyLimit is the most bytes the body of c's route may have.
func bodyLimit(c echo.Context) int {
	if stateBodyRoutes[c.Path()] {
		return engine.MaxStateBodyBytes
	}
	return engine.MaxBodyBytes
}

// jsonContentType reports whether a request of content type ct may hold JSON: none given,
// application/json or any +json type, or text/plain (what a browser's fetch sends for a string
// body). A form or any other type is refused rather than guessed at.
func jsonContentType(ct string) bool {
	if ct == "" || ct == echo.MIMEApplicationJSON { // what clients send: no parse needed
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && (mt == "application/json" || mt == "text/plain" ||
		strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"))
}

// ReadJSON reads the request body, at most its route's limit (413 naming it beyond), and
// returns it trimmed, or nil after recording a problem: a content type that is not JSON's,
// invalid UTF-8, invalid JSON, or null.
func ReadJSON(c echo.Context, errs *engine.Violations) ([]byte, error) {
	return readJSON(c, errs, true)
}

// readJSON is ReadJSON; without validate, the text is not checked to be JSON (its decoder
// checks it as it goes: see ReadBody).
func readJSON(c echo.Context, errs *engine.Violations, validate bool) ([]byte, error) {
	limit := bodyLimit(c)
	data, read := checkedText(c)
	var err error
	if !read {
		data, err = io.ReadAll(io.LimitReader(c.Request().Body, int64(limit)+1))
	}
	if err != nil {
		return nil, engine.E(engine.Op("read body"), engine.BadRequest, "Could not read the request body.", err)
	}
	if len(data) > limit {
		return nil, engine.E(engine.Op("read body"), engine.TooLarge,
			fmt.Sprintf("Request body over the %d bytes this route accepts.", limit))
	}
	data = bytes.TrimSpace(data)
	switch {
	case len(data) == 0:
		return data, nil
	// (checkUTF8 hands over only a body of a JSON content type, in valid UTF-8)
	case !read && !jsonContentType(c.Request().Header.Get(echo.HeaderContentType)):
		errs.Add("content_type", "Content-Type must be application/json", "header", "content-type")
	case !read && !utf8.Valid(data):
		InvalidUTF8(errs, "body", 0)
	case validate && !json.Valid(data):
		errs.Add("json_invalid", "JSON decode error", "body", 0)
	case bytes.Equal(data, []byte("null")):
		errs.Add("model_attributes_type", "Input should be a valid dictionary or object to extract fields from", "body")
	default:
		return data, nil
	}
	return nil, nil
}

// Fields reads a JSON object (a request body, or the query string) one field at a time and
// collects every problem, so that a 422 lists all of them with their location.
type Fields struct {
	loc string // "body" or "query"
	raw map[string]json.RawMessage
	// text is a query value as sent: a string field takes it whole even where it reads as JSON
	// (name_contains=8088e062 is a string, not a number).
	text map[string]string
	errs *engine.Violations
}

// ReadBody decodes the request body as a JSON object (see ReadJSON). An empty body is an empty
// object.
func ReadBody(c echo.Context, errs *engine.Violations) (*Fields, error) {
	f := &Fields{loc: "body", raw: map[string]json.RawMessage{}, errs: errs}
	data, err := readJSON(c, errs, false)
	if err != nil || len(data) == 0 {
		return f, err
	}
	jsoncount.Decoded()
	// One pass over the text: go-json-experiment's v1 decoder checks it as it decodes (with
	// encoding/json's semantics; encoding/json scans the whole text first), and only a body it
	// refuses is scanned again, to tell invalid JSON from JSON that is not an object.
	if err := jsonv1.Unmarshal(data, &f.raw); err != nil {
		clear(f.raw) // what was decoded before the error is no field of the request
		if !json.Valid(data) {
			errs.Add("json_invalid", "JSON decode error", "body", 0)
		} else {
			errs.Add("model_attributes_type", "Input should be a valid dictionary or object to extract fields from", "body")
		}
	}
	return f, nil
}

// QueryFields exposes the query string through the same checks. Values that are JSON are parsed
// as such (limit=10, include=["ttl"]); anything else is a string.
func QueryFields(c echo.Context, errs *engine.Violations) *Fields {
	f := &Fields{loc: "query", raw: map[string]json.RawMessage{}, text: map[string]string{}, errs: errs}
	for k, vs := range c.QueryParams() {
		if len(vs) == 0 {
			continue
		}
		v := vs[len(vs)-1]
		if len(vs) == 1 {
			f.text[k] = v
		}
		if json.Valid([]byte(v)) && !strings.HasPrefix(v, "\"") {
			f.raw[k] = json.RawMessage(v)
		} else {
			f.raw[k], _ = json.Marshal(v)
		}
		if len(vs) > 1 {
			f.raw[k], _ = json.Marshal(vs)
		}
	}
	return f
}

// Add records a problem of type typ with message msg at the field name.
func (f *Fields) Add(typ, msg, name string) { f.errs.Add(typ, msg, f.loc, name) }

// Present reports whether name was given with a non-null value.
func (f *Fields) Present(name string) bool {
	r, ok := f.raw[name]
	return ok && !bytes.Equal(bytes.TrimSpace(r), []byte("null"))
}

// Require records a missing-field problem when name is absent.
func (f *Fields) Require(name string) bool {
	if !f.Present(name) {
		f.Add("missing", "Field required", name)
		return false
	}
	return true
}

func (f *Fields) decode(name string, v any) bool {
	return f.Present(name) && jsonv1.Unmarshal(f.raw[name], v) == nil
}

// String returns the string at name, "" when absent.
func (f *Fields) String(name string) string {
	if !f.Present(name) {
		return ""
	}
	s, ok := f.str(name)
	if !ok {
		f.Add("string_type", "Input should be a valid string", name)
	}
	return s
}

// str is the string at name: a JSON string, or a query value as sent.
func (f *Fields) str(name string) (string, bool) {
	var s string
	if f.decode(name, &s) {
		return s, true
	}
	if t, ok := f.text[name]; ok {
		return t, true
	}
	return "", false
}

// Enum returns the string at name, which must be one of allowed; def when absent.
func (f *Fields) Enum(name, def string, allowed ...string) string {
	if !f.Present(name) {
		return def
	}
	s, ok := f.str(name)
	if !ok {
		f.Add("string_type", "Input should be a valid string", name)
		return def
	}
	if !slices.Contains(allowed, s) {
		f.Add("literal_error", "Input should be "+quoteList(allowed), name)
		return def
	}
	return s
}

// UUID returns the UUID string at name in canonical form, "" when absent.
func (f *Fields) UUID(name string) string {
	s := f.String(name)
	if s == "" {
		return ""
	}
	id, err := uuid.Parse(s)
	if err != nil {
		f.Add("uuid_parsing", "Input should be a valid UUID", name)
		return ""
	}
	return id.String()
}

// Object returns the JSON object at name, nil when absent.
func (f *Fields) Object(name string) map[string]any {
	if !f.Present(name) {
		return nil
	}
	var m map[string]any
	if !f.decode(name, &m) {
		f.Add("dict_type", "Input should be a valid dictionary", name)
	}
	return m
}

// Any returns the JSON value at name, nil when absent.
func (f *Fields) Any(name string) any {
	var v any
	f.decode(name, &v)
	return v
}

// Int returns the integer at name, def when absent; it must be at least min.
func (f *Fields) Int(name string, def, min int) int {
	if !f.Present(name) {
		return def
	}
	var n json.Number
	dec := json.NewDecoder(bytes.NewReader(f.raw[name]))
	dec.UseNumber()
	if err := dec.Decode(&n); err != nil {
		// A query value like limit="10" arrives as a string.
		var s string
		if json.Unmarshal(f.raw[name], &s) == nil {
			n = json.Number(s)
		}
	}
	i, err := strconv.Atoi(string(n))
	if err != nil {
		f.Add("int_parsing", "Input should be a valid integer", name)
		return def
	}
	if i < min {
		f.Add("greater_than_equal", fmt.Sprintf("Input should be greater than or equal to %d", min), name)
		return def
	}
	return i
}

// Limit returns the page size at "limit", def when absent: at least min, at most
// engine.MaxListLimit.
func (f *Fields) Limit(def, min int) int {
	n := f.Int("limit", def, min)
	if n > engine.MaxListLimit {
		f.Add("less_than_equal", fmt.Sprintf("Input should be less than or equal to %d (MaxListLimit)", engine.MaxListLimit), "limit")
		return def
	}
	return n
}

// Number returns the number at name and whether it was given.
func (f *Fields) Number(name string) (float64, bool) {
	if !f.Present(name) {
		return 0, false
	}
	var n float64
	if !f.decode(name, &n) {
		f.Add("float_parsing", "Input should be a valid number", name)
		return 0, false
	}
	return n, true
}

// Bool returns the boolean at name, def when absent.
func (f *Fields) Bool(name string, def bool) bool {
	if !f.Present(name) {
		return def
	}
	var b bool
	if !f.decode(name, &b) {
		var s string
		if f.decode(name, &s) {
			if v, err := strconv.ParseBool(s); err == nil {
				return v
			}
		}
		f.Add("bool_parsing", "Input should be a valid boolean", name)
		return def
	}
	return b
}

// Strings returns the list of strings at name, nil when absent.
func (f *Fields) Strings(name string) []string {
	if !f.Present(name) {
		return nil
	}
	var ss []string
	if !f.decode(name, &ss) {
		f.Add("list_type", "Input should be a valid list of strings", name)
	}
	return ss
}

func quoteList[T ~string](allowed []T) string {
	q := make([]string, len(allowed))
	for i, a := range allowed {
		q[i] = "'" + string(a) + "'"
	}
	if len(q) <= 1 {
		return strings.Join(q, "")
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

// PathUUID returns the path parameter name as a canonical UUID, recording a problem otherwise.
func PathUUID(c echo.Context, name string, errs *engine.Violations) string {
	id, err := uuid.Parse(c.Param(name))
	if err != nil {
		errs.Add("uuid_parsing", "Input should be a valid UUID", "path", name)
		return ""
	}
	return id.String()
}

// paginate sets the pagination headers of a search answer.
func paginate(c echo.Context, total, offset, n int) {
	h := c.Response().Header()
	h.Set("X-Pagination-Total", strconv.Itoa(total))
	if offset+n < total {
		h.Set("X-Pagination-Next", strconv.Itoa(offset+n))
	}
}

// JSONFields is the JSON object v marshals to, by field.
func JSONFields(v any) (map[string]json.RawMessage, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out map[string]json.RawMessage
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// SelectFields keeps only the named top-level fields of each record; no names keeps all.
func SelectFields[T any](records []T, names []string) (any, error) {
	if len(names) == 0 {
		return records, nil
	}
	out := make([]map[string]json.RawMessage, len(records))
	for i, r := range records {
		all, err := JSONFields(masked(r))
		if err != nil {
			return nil, err
		}
		out[i] = make(map[string]json.RawMessage, len(names))
		for _, n := range names {
			if v, ok := all[n]; ok {
				out[i][n] = v
			}
		}
	}
	return out, nil
}

// OK answers 200 with v as JSON; the SDKs need a JSON body on every 2xx but 202/204. Runs,
// threads and assistants are answered masked (see masked).
func OK(c echo.Context, v any) error { return answerJSON(c, http.StatusOK, masked(v)) }

// jsonContent is the Content-Type of a JSON answer, shared by the answers: a header's values
// are only ever replaced or appended to (a slice of capacity 1 is copied by append).
var jsonContent = []string{echo.MIMEApplicationJSON}

// answerJSON is echo's c.JSON (indented with ?pretty or in debug mode) without what it costs a
// request that asks for neither: parsing an empty query, a header value made.
func answerJSON(c echo.Context, code int, v any) error {
	indent := ""
	if c.Echo().Debug || c.Request().URL.RawQuery != "" && c.QueryParams().Has("pretty") {
		indent = "  "
	}
	if h := c.Response().Header(); h.Get(echo.HeaderContentType) == "" {
		h[echo.HeaderContentType] = jsonContent
	}
	c.Response().Status = code
	return c.Echo().JSONSerializer.Serialize(c, v, indent)
}

// masked is v as answers show it: runs, threads and assistants (alone or in lists) with the
// secrets of what clients configured masked (engine.MaskSecrets); anything else as it is.
func masked(v any) any {
	switch x := v.(type) {
	case engine.Run:
		return x.Masked()
	case engine.Thread:
		return x.Masked()
	case engine.Assistant:
		return x.Masked()
	case engine.AssistantVersion:
		return x.Masked()
	case []engine.Run:
		return maskAll(x)
	case []engine.Thread:
		return maskAll(x)
	case []engine.Assistant:
		return maskAll(x)
	case []engine.AssistantVersion:
		return maskAll(x)
	}
	return v
}

// maskAll masks every element of a list.
func maskAll[T interface{ Masked() T }](xs []T) []T {
	out := make([]T, len(xs))
	for i, x := range xs {
		out[i] = x.Masked()
	}
	return out
}

// ParseUUID returns s as a canonical UUID string.
func ParseUUID(s string) (string, error) {
	id, err := uuid.Parse(s)
	if err != nil {
		return "", err
	}
	return id.String(), nil
}

// SplitComma splits a comma list, dropping blanks.
func SplitComma(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
