package httpapi

import (
	"embed"
	"io/fs"
	"net/http"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/jetgraph/jetgraph/engine"
)

// openapiJSON is the OpenAPI 3.1 description of every route. docs_test.go fails when a registered
// route is missing from it, or when it documents a route that is not registered.
//
//go:embed openapi.json
var openapiJSON []byte

// OpenAPI returns the OpenAPI document of every route, the one /openapi.json serves: the contract
// tests of handler packages check their exchanges against it (see httpapitest).
func OpenAPI() []byte { return slices.Clone(openapiJSON) }

func (s *Server) docsRoutes() {
	s.echo.GET("/openapi.json", s.openapi)
	s.echo.GET("/docs", s.docs)
	s.echo.GET("/docs/assets/:file", s.docsAsset)
}

// openapi answers the OpenAPI document.
func (s *Server) openapi(c echo.Context) error {
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, s.openapiDoc)
}

// docsFiles are the /docs page and its assets: Swagger UI, embedded so that the page works
// offline (docs/README.md says where they come from).
//
//go:embed docs/index.html docs/assets
var docsFiles embed.FS

// docs answers the Swagger UI page of the API to browsers, and the OpenAPI document itself to
// every other client (or with ?format=json).
func (s *Server) docs(c echo.Context) error {
	if c.QueryParam("format") == "json" || !acceptsHTML(c.Request().Header.Get(echo.HeaderAccept)) {
		return s.openapi(c)
	}
	page, err := docsFiles.ReadFile("docs/index.html")
	if err != nil {
		return err
	}
	return c.HTMLBlob(http.StatusOK, page)
}

// docsTypes are the content types of the assets, by extension: fixed here rather than read from
// the system's MIME database, which may differ between machines.
var docsTypes = map[string]string{".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}

// docsAsset answers a file of the page: a script, a style sheet or a license.
func (s *Server) docsAsset(c echo.Context) error {
	name := c.Param("file")
	if strings.ContainsAny(name, `/\`) {
		return engine.E(engine.Op("docs"), engine.NotFound, "No such file: "+name)
	}
	b, err := fs.ReadFile(docsFiles, path.Join("docs/assets", name))
	if err != nil {
		return engine.E(engine.Op("docs"), engine.NotFound, "No such file: "+name)
	}
	ct, ok := docsTypes[path.Ext(name)]
	if !ok {
		ct = echo.MIMETextPlainCharsetUTF8 // LICENSE, NOTICE
	}
	c.Response().Header().Set(echo.HeaderCacheControl, "public, max-age=3600")
	return c.Blob(http.StatusOK, ct, b)
}

// acceptsHTML reports whether an Accept header asks for text/html.
func acceptsHTML(accept string) bool {
	for _, part := range strings.Split(accept, ",") {
		mt, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(mt), "text/html") {
			continue
		}
		// text/html;q=0 means "not HTML".
		for _, p := range strings.Split(params, ";") {
			if k, v, ok := strings.Cut(strings.TrimSpace(p), "="); ok && strings.TrimSpace(k) == "q" {
				if q, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && q == 0 {
					return false
				}
			}
		}
		return true
	}
	return false
}
