package httpapi

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/jetgraph/jetgraph/engine"
)

// status is the one place where an error kind becomes an HTTP status.
func status(k engine.Kind) int {
	switch k {
	case engine.Invalid:
		return http.StatusUnprocessableEntity
	case engine.NotFound:
		return http.StatusNotFound
	case engine.Exists, engine.Conflict:
		return http.StatusConflict
	case engine.TooLarge:
		return http.StatusRequestEntityTooLarge
	case engine.Unavailable:
		return http.StatusServiceUnavailable
	case engine.BadRequest:
		return http.StatusBadRequest
	case engine.Unauthorized:
		return http.StatusUnauthorized
	case engine.Forbidden:
		return http.StatusForbidden
	}
	return http.StatusInternalServerError
}

// errorHandler answers every failed request with {"detail": ...}: a message, or for validation
// errors the list of every violation with its location.
func (s *Server) errorHandler(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	code := http.StatusInternalServerError
	var detail any = "Internal Server Error"
	var ee *engine.Error
	var he *echo.HTTPError
	switch {
	case errors.As(err, &ee):
		code = status(engine.KindOf(err))
		switch {
		case len(ee.Fields) > 0:
			detail = ee.Fields
		case ee.Detail != "":
			detail = ee.Detail
		case code != http.StatusInternalServerError:
			detail = http.StatusText(code)
		}
	case errors.As(err, &he):
		code = he.Code
		if m, ok := he.Message.(string); ok {
			detail = m
		} else {
			detail = http.StatusText(code)
		}
		if he.Internal != nil {
			err = he.Internal
		}
	}
	if code >= 500 {
		s.log.Error("request failed", "method", c.Request().Method, "path", c.Request().URL.Path,
			"request_id", c.Response().Header().Get(echo.HeaderXRequestID), "err", err)
	}
	if c.Request().Method == http.MethodHead {
		_ = c.NoContent(code)
		return
	}
	_ = c.JSON(code, map[string]any{"detail": detail})
}
