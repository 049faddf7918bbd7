package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/jetgraph/jetgraph/httpapi"
	"github.com/jetgraph/jetgraph/httpapi/httpapitest"
)

// serve starts a test server for h, closed when the test ends, whose every request and response
// is checked against the OpenAPI document: a test exchange the document does not describe fails.
func serve(t testing.TB, h http.Handler) *httptest.Server {
	t.Helper()
	return httpapitest.NewServer(t, httpapi.OpenAPI(), h)
}
