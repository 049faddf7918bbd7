package httpapi

import (
	"context"
	"time"

	"github.com/labstack/echo/v4"
)

func (s *Server) systemRoutes() {
	s.echo.GET("/ok", s.health)
	s.echo.GET("/info", s.info)
	s.echo.GET("/metrics", s.deps.Metrics.serve)
	s.docsRoutes()
}

// health answers {"ok": true}, or the health check's error through the one error mapping (see
// errorHandler): the status its kind maps to, {"detail": the reason}.
func (s *Server) health(c echo.Context) error {
	if s.deps.Health != nil {
		ctx, cancel := context.WithTimeout(c.Request().Context(), 5*time.Second)
		defer cancel()
		if err := s.deps.Health(ctx); err != nil {
			return err
		}
	}
	return OK(c, map[string]any{"ok": true})
}

func (s *Server) info(c echo.Context) error {
	info := s.deps.Info
	if s.deps.InfoNow != nil {
		info = s.deps.InfoNow()
	}
	if info == nil {
		info = map[string]any{}
	}
	return OK(c, info)
}
