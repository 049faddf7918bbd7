// Package httpapitest checks HTTP exchanges against the OpenAPI document of the API, so the
// document cannot drift from what the handlers do: every test server of httpapi (and of any
// handler package under it) serves through Handler or NewServer, and a request or response the
// document does not describe fails the test that made it.
//
// It is for tests only: it pulls in kin-openapi, which the binary does not link.
package httpapitest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// MIMEEventStream is the content type of the SSE endpoints: their responses are checked for it,
// not for the stream's body.
const MIMEEventStream = "text/event-stream"

// Contract is a loaded OpenAPI document that checks exchanges against it. It is safe for
// concurrent use.
type Contract struct {
	doc    *openapi3.T
	router routers.Router

	mu       sync.Mutex
	compiler *jsonschema.Compiler          // the document as JSON Schema 2020-12 resources
	schemas  map[string]*jsonschema.Schema // compiled, by JSON pointer
	seen     map[string]bool               // "operationId status" of every checked exchange
	checks   int                           // exchanges checked
	spent    time.Duration                 // in checking them
}

// documentURL names the document for the JSON Schema compiler.
const documentURL = "mem:///openapi.json"

var (
	loadedMu sync.Mutex
	loaded   = map[[sha256.Size]byte]*Contract{}
)

// Load parses and validates an OpenAPI document once per distinct content: every test server of
// a package shares the result.
func Load(document []byte) (*Contract, error) {
	key := sha256.Sum256(document)
	loadedMu.Lock()
	defer loadedMu.Unlock()
	if c, ok := loaded[key]; ok {
		return c, nil
	}
	doc, err := openapi3.NewLoader().LoadFromData(document)
	if err != nil {
		return nil, fmt.Errorf("httpapitest: load the OpenAPI document: %w", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("httpapitest: the OpenAPI document is invalid: %w", err)
	}
	// Routes match on the path alone: the document's server (localhost:8123) is not where a
	// test server listens.
	routed := *doc
	routed.Servers = nil
	router, err := legacy.NewRouter(&routed)
	if err != nil {
		return nil, fmt.Errorf("httpapitest: route the OpenAPI document: %w", err)
	}
	// Bodies are checked by a JSON Schema 2020-12 validator over the whole document: kin-openapi
	// checks OpenAPI 3.1 schemas with 3.0 rules when they hold a $ref (an empty schema refuses
	// null there).
	raw, err := jsonschema.UnmarshalJSON(bytes.NewReader(document))
	if err != nil {
		return nil, fmt.Errorf("httpapitest: the OpenAPI document is not JSON: %w", err)
	}
	compiler := jsonschema.NewCompiler()
	compiler.DefaultDraft(jsonschema.Draft2020)
	compiler.AssertFormat()
	if err := compiler.AddResource(documentURL, raw); err != nil {
		return nil, fmt.Errorf("httpapitest: %w", err)
	}
	c := &Contract{doc: doc, router: router, compiler: compiler, schemas: map[string]*jsonschema.Schema{}, seen: map[string]bool{}}
	loaded[key] = c
	return c, nil
}

// Exchange is one HTTP request and the response a handler gave to it.
type Exchange struct {
	Request     *http.Request // its body is not read: RequestBody holds it
	RequestBody []byte
	// RequestBodyUnknown says RequestBody is not to be checked: it could not be decoded (an
	// unknown Content-Encoding), or it is over MaxCheckedBody.
	RequestBodyUnknown bool
	Status             int
	Header             http.Header
	Body               []byte
	// BodyUnchecked says the response had a body that Body does not hold: an event stream, or
	// one over MaxCheckedBody. Its content type is checked, not its content.
	BodyUnchecked bool
}

// MaxCheckedBody is the largest body checked against its schema: larger ones (the tests of the
// size limits send and read several MiB) are checked for their content type only, as checking
// them would take the suite longer than all its other exchanges do.
const MaxCheckedBody = 1 << 20

// Check returns every way the exchange departs from the document (none: it conforms):
//   - a route the document lacks, unless the server answered 404 or 405;
//   - a request the document refuses (parameters, body) that the server did not refuse;
//   - a status the operation does not document, a documented header malformed, a content type
//     it does not list, a body that does not match the schema, or a body where it has none.
//
// JSON bodies are checked as JSON Schema 2020-12, as OpenAPI 3.1 says, each line of an NDJSON
// body against the schema; an event stream and other text for their content type only.
func (c *Contract) Check(ctx context.Context, x Exchange) []string {
	start := time.Now()
	defer func() {
		c.mu.Lock()
		c.checks, c.spent = c.checks+1, c.spent+time.Since(start)
		c.mu.Unlock()
	}()
	req := x.Request.Clone(ctx)
	route, params, err := c.router.FindRoute(req)
	if err != nil {
		if x.Status == http.StatusNotFound || x.Status == http.StatusMethodNotAllowed {
			return nil
		}
		return []string{fmt.Sprintf("no operation in the document (answered %d): %v", x.Status, err)}
	}
	op := route.Operation
	c.mu.Lock()
	c.seen[fmt.Sprintf("%s %d", op.OperationID, x.Status)] = true
	c.mu.Unlock()

	var problems []string
	// Parameters by kin-openapi; the bodies by checkBody.
	in := &openapi3filter.RequestValidationInput{
		Request:    req,
		PathParams: params,
		Route:      route,
		Options: &openapi3filter.Options{
			MultiError:          true,
			SkipSettingDefaults: true,
			ExcludeRequestBody:  true,
			AuthenticationFunc:  openapi3filter.NoopAuthenticationFunc,
		},
	}
	refused := openapi3filter.ValidateRequest(ctx, in)
	if refused == nil && !x.RequestBodyUnknown {
		refused = c.checkRequestBody(route, req.Header.Get("Content-Type"), x.RequestBody)
	}
	if refused != nil && x.Status < 400 {
		problems = append(problems, fmt.Sprintf("the server answered %d to a request the document refuses: %v", x.Status, refused))
	}

	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in,
		Status:                 x.Status,
		Header:                 x.Header,
		Options:                &openapi3filter.Options{MultiError: true, IncludeResponseStatus: true, ExcludeResponseBody: true},
	}
	out.SetBodyBytes(x.Body)
	if err := openapi3filter.ValidateResponse(ctx, out); err != nil {
		return append(problems, fmt.Sprintf("response %d does not match the document: %v (body %q)", x.Status, err, clip(x.Body)))
	}
	if err := c.checkResponseBody(route, x); err != nil {
		problems = append(problems, fmt.Sprintf("response %d does not match the document: %v (body %q)", x.Status, err, clip(x.Body)))
	}
	return problems
}

// checkRequestBody checks a request body against the operation's. The API reads a request body
// as JSON whatever its content type, and an empty body as an empty object (see
// info.description): the body is checked the same way.
func (c *Contract) checkRequestBody(route *routers.Route, contentType string, body []byte) error {
	rb := route.Operation.RequestBody
	if rb == nil || rb.Value == nil {
		return nil
	}
	content := rb.Value.Content
	ct, _, _ := mime.ParseMediaType(contentType)
	if content.Get(contentType) == nil || ct == "" {
		ct = mimeJSON
	}
	media := content.Get(ct)
	if media == nil {
		return fmt.Errorf("request body: content type %q is not listed", contentType)
	}
	if ct != mimeJSON || media.Schema == nil {
		return nil
	}
	if len(bytes.TrimSpace(body)) == 0 {
		body = []byte("{}")
	}
	ptr := mediaPointer(route, "requestBody", rb.Ref, ct)
	if err := c.checkJSON(ptr, body); err != nil {
		return fmt.Errorf("request body: %w", err)
	}
	return nil
}

// checkResponseBody checks a response's content type and body against the operation's.
func (c *Contract) checkResponseBody(route *routers.Route, x Exchange) error {
	status := strconv.Itoa(x.Status)
	ref := route.Operation.Responses.Value(status)
	if ref == nil || ref.Value == nil {
		return nil // ValidateResponse refused it
	}
	content := ref.Value.Content
	if len(content) == 0 {
		if len(x.Body) > 0 || x.BodyUnchecked {
			return fmt.Errorf("the document has no body for status %d", x.Status)
		}
		return nil
	}
	contentType := x.Header.Get("Content-Type")
	media := content.Get(contentType)
	if media == nil {
		return fmt.Errorf("content type %q is not listed", contentType)
	}
	ct, _, _ := mime.ParseMediaType(contentType)
	if media.Schema == nil || x.BodyUnchecked {
		return nil
	}
	ptr := mediaPointer(route, "responses/"+status, ref.Ref, listedType(content, contentType))
	switch ct {
	case mimeJSON:
		return c.checkJSON(ptr, x.Body)
	case mimeNDJSON:
		for i, line := range bytes.Split(x.Body, []byte("\n")) {
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			if err := c.checkJSON(ptr, line); err != nil {
				return fmt.Errorf("line %d: %w", i+1, err)
			}
		}
	}
	return nil
}

const (
	mimeJSON   = "application/json"
	mimeNDJSON = "application/x-ndjson"
)

// listedType is the key of content that contentType matched.
func listedType(content openapi3.Content, contentType string) string {
	want := content.Get(contentType)
	for k, v := range content {
		if v == want {
			return k
		}
	}
	return contentType
}

// mediaPointer is the JSON pointer of the schema of a request body or response (at, under the
// operation) of content type ct; ref is the body's or response's $ref, if it has one.
func mediaPointer(route *routers.Route, at, ref, ct string) string {
	base := ref
	if base == "" {
		base = "#/paths/" + escapePointer(route.Path) + "/" + strings.ToLower(route.Method) + "/" + at
	}
	return base + "/content/" + escapePointer(ct) + "/schema"
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// checkJSON checks a JSON value against the schema at a pointer of the document.
func (c *Contract) checkJSON(pointer string, body []byte) error {
	sch, err := c.schema(pointer)
	if err != nil {
		return err
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	return sch.Validate(v)
}

// schema compiles the schema at a pointer of the document once.
func (c *Contract) schema(pointer string) (*jsonschema.Schema, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if sch, ok := c.schemas[pointer]; ok {
		return sch, nil
	}
	sch, err := c.compiler.Compile(documentURL + pointer)
	if err != nil {
		return nil, fmt.Errorf("httpapitest: compile %s: %w", pointer, err)
	}
	c.schemas[pointer] = sch
	return sch, nil
}

// Unexercised returns the operations (by operationId) and documented statuses no checked
// exchange has met yet, sorted: what the tests leave unverified.
func (c *Contract) Unexercised() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, path := range c.doc.Paths.InMatchingOrder() {
		for method, op := range c.doc.Paths.Value(path).Operations() {
			for status := range op.Responses.Map() {
				if !c.seen[op.OperationID+" "+status] {
					out = append(out, fmt.Sprintf("%s %s %s (%s)", method, path, status, op.OperationID))
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// Report sums up the checks so far: how many exchanges, the time they took, and how many of
// the documented responses (operation and status) they met.
func (c *Contract) Report() string {
	unmet := len(c.Unexercised())
	c.mu.Lock()
	defer c.mu.Unlock()
	total := 0
	for _, path := range c.doc.Paths.InMatchingOrder() {
		for _, op := range c.doc.Paths.Value(path).Operations() {
			total += op.Responses.Len()
		}
	}
	return fmt.Sprintf("OpenAPI contract: %d exchanges checked in %v; %d of %d documented responses met",
		c.checks, c.spent.Round(time.Millisecond), total-unmet, total)
}

// clip shortens a body for a message.
func clip(b []byte) string {
	const max = 300
	if len(b) > max {
		return string(b[:max]) + "…"
	}
	return string(b)
}

// pathOf is the request's path and query, for messages.
func pathOf(u *url.URL) string {
	if u.RawQuery == "" {
		return u.Path
	}
	return u.Path + "?" + u.RawQuery
}
