package httpapi

import (
	"encoding/json"

	"github.com/labstack/echo/v4"

	"github.com/jetgraph/jetgraph/engine"
)

// The request kit that the handlers of the other bounded contexts (httpapi/tracingapi) share
// with the runtime's, so that every route reads bodies and queries, checks ids and answers the
// same way. Their errors need nothing from here: a handler returns them and the server's one
// error mapping (errors.go) answers them.

// Routes are the handlers of another bounded context, mounted on the server by New: they are
// served behind its middleware, and its error mapping answers their errors.
type Routes interface {
	// Mount registers the routes on the server's echo.
	Mount(e *echo.Echo)
}

// Fields reads a JSON object (a request body, or the query string) one field at a time and
// collects every problem, so that a 422 lists all of them with their location.
type Fields = fields

// ReadBody decodes the request body as a JSON object; an empty body is an empty object.
func ReadBody(c echo.Context, errs *engine.Violations) (*Fields, error) { return readBody(c, errs) }

// ReadJSON reads the request body within its route's limit, or nil after recording a problem.
func ReadJSON(c echo.Context, errs *engine.Violations) ([]byte, error) { return readJSON(c, errs) }

// QueryFields exposes the query string through the checks of Fields.
func QueryFields(c echo.Context, errs *engine.Violations) *Fields { return queryFields(c, errs) }

// PathUUID returns the path parameter name as a canonical UUID, recording a problem otherwise.
func PathUUID(c echo.Context, name string, errs *engine.Violations) string {
	return pathUUID(c, name, errs)
}

// ParseUUID returns s as a canonical UUID string.
func ParseUUID(s string) (string, error) { return parseUUID(s) }

// SplitComma splits a comma list, dropping blanks.
func SplitComma(s string) []string { return splitComma(s) }

// JSONFields is the JSON object v marshals to, by field.
func JSONFields(v any) (map[string]json.RawMessage, error) { return jsonFields(v) }

// SelectFields keeps only the named top-level fields of each record; no names keeps all.
func SelectFields[T any](records []T, names []string) (any, error) {
	return selectFields(records, names)
}

// OK answers 200 with v as JSON, as every route answers a read.
func OK(c echo.Context, v any) error { return ok(c, v) }

// Present reports whether name was given with a non-null value.
func (f *fields) Present(name string) bool { return f.present(name) }

// Require records a missing-field problem when name is absent.
func (f *fields) Require(name string) bool { return f.require(name) }

// Add records a problem of the field name.
func (f *fields) Add(typ, msg, name string) { f.add(typ, msg, name) }

// Raw is the object's fields as they came.
func (f *fields) Raw() map[string]json.RawMessage { return f.raw }

// Loc is where the fields came from: "body" or "query".
func (f *fields) Loc() string { return f.loc }
