package httpapi

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/jetgraph/jetgraph/httpapi/console"
)

// consoleRoutes serves the web console at /console/ and sends a browser opening the server's root
// there. The routes are open (openPaths): the assets hold no data, and the API calls the console
// makes carry the user's key. A deployment's own app (http.app) may still serve "/". With an
// http.mount_prefix the console stays at /console/ (like the tracing API) and calls the runtime
// under the prefix.
func (s *Server) consoleRoutes() {
	runtimePrefix := ""
	if s.deps.HTTP != nil {
		runtimePrefix = s.deps.HTTP.MountPrefix
	}
	assets := echo.WrapHandler(http.StripPrefix(console.Prefix[:len(console.Prefix)-1], console.HandlerFor(runtimePrefix)))
	s.echo.GET(console.Prefix+"*", assets)
	s.echo.HEAD(console.Prefix+"*", assets)
	toConsole := func(c echo.Context) error { return c.Redirect(http.StatusFound, console.Prefix) }
	s.echo.GET("/", toConsole)
	s.echo.GET("/console", toConsole)
}
