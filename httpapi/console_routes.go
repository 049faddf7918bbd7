package httpapi

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/jetgraph/jetgraph/httpapi/console"
)

// consoleRoutes serves the web console at /console/ and sends a browser opening the server's root
// there. The routes are open (openPaths): the assets hold no data, and the API calls the console
// makes carry the user's key. A deployment's own app (http.app) may still serve "/".
func (s *Server) consoleRoutes() {
	assets := echo.WrapHandler(http.StripPrefix(console.Prefix[:len(console.Prefix)-1], console.Handler()))
	s.echo.GET(console.Prefix+"*", assets)
	s.echo.HEAD(console.Prefix+"*", assets)
	toConsole := func(c echo.Context) error { return c.Redirect(http.StatusFound, console.Prefix) }
	s.echo.GET("/", toConsole)
	s.echo.GET("/console", toConsole)
}
