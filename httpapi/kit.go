package httpapi

import (
	"encoding/json"

	"github.com/labstack/echo/v4"
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

// The kit itself is body.go's exported helpers (ReadBody, ReadJSON, QueryFields, PathUUID,
// ParseUUID, SplitComma, JSONFields, SelectFields, OK and Fields), and these accessors.

// Raw is the object's fields, undecoded.
func (f *Fields) Raw() map[string]json.RawMessage { return f.raw }

// Loc is the location of the object in the request ("body" or "query").
func (f *Fields) Loc() string { return f.loc }
