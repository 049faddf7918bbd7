package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
)

func (s *Server) systemRoutes() {
	s.echo.GET("/ok", s.health)
	s.echo.GET("/info", s.info)
	s.echo.GET("/metrics", s.deps.Metrics.serve)
	s.docsRoutes()
}

// health answers {"ok": true}, or 500 with the reason when the log or a projection is unhealthy.
func (s *Server) health(c echo.Context) error {
	if s.deps.Health != nil {
		ctx, cancel := context.WithTimeout(c.Request().Context(), 5*time.Second)
		defer cancel()
		if err := s.deps.Health(ctx); err != nil {
			s.log.Warn("health check failed", "err", err)
			return c.JSON(http.StatusInternalServerError, map[string]any{"ok": false, "detail": err.Error()})
		}
	}
	return ok(c, map[string]any{"ok": true})
}

func (s *Server) info(c echo.Context) error {
	info := s.deps.Info
	if info == nil {
		info = map[string]any{}
	}
	return ok(c, info)
}
