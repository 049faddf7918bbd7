package httpapi

import (
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
)

// cors lets browsers call the API from the origins it allows: loopback ones (a UI served on the
// same machine, whatever its port) always, others only when listed in origins ("*" allows
// every origin, for those who ask for it).
func cors(origins []string) echo.MiddlewareFunc {
	return middleware.CORSWithConfig(middleware.CORSConfig{
		AllowOriginFunc: func(origin string) (bool, error) { return originAllowed(origins, origin), nil },
		AllowMethods:    []string{http.MethodGet, http.MethodHead, http.MethodPut, http.MethodPatch, http.MethodPost, http.MethodDelete},
		AllowHeaders:    []string{"*"},
		ExposeHeaders:   exposedHeaders,
	})
}

// originAllowed reports whether a browser on origin may call the API.
func originAllowed(allowed []string, origin string) bool {
	for _, a := range allowed {
		a = strings.TrimRight(strings.TrimSpace(a), "/")
		if a == "*" || strings.EqualFold(a, origin) {
			return true
		}
	}
	return loopbackOrigin(origin)
}

// loopbackOrigin reports whether origin is an http(s) page served from this machine's loopback
// interface: localhost, 127.0.0.0/8 or ::1, on any port.
func loopbackOrigin(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil || (u.Path != "" && u.Path != "/") {
		return false
	}
	host := u.Hostname()
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
