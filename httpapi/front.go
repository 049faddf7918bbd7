package httpapi

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"runtime"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/jetgraph/jetgraph/engine"
)

// front is the one middleware every request passes first (echo builds a closure per request
// for each middleware, so the chain has as few as the configuration needs): it gives the
// request an id (the client's X-Request-Id, or a new one), runs the rest with panics recovered
// and CORS applied, answers the error the rest returned, then writes the access log line and
// counts the request in the metrics. CORS costs nothing more than its Vary header on a request
// with no Origin (not a browser's), and the UTF-8 check of the bodies is a call rather than a
// middleware when nothing needs to run between CORS and it (no authentication, no deployment
// layer).
func (s *Server) front(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		rid := c.Request().Header.Get(echo.HeaderXRequestID)
		if rid == "" {
			rid = newRequestID()
		}
		c.Response().Header().Set(echo.HeaderXRequestID, rid)
		s.serveGuarded(c, next)
		took := time.Since(start)
		s.logRequest(c, took, rid)
		s.deps.Metrics.observe(c, took)
		return nil
	}
}

// varyOrigin is the Vary header of an answer CORS applies to; it is shared by the answers, and
// only ever replaced or appended to (a slice of capacity 1 is copied by append), never changed.
var varyOrigin = []string{echo.HeaderOrigin}

// serveGuarded runs next, CORS first, with a panic answered 500 (and logged with its stack)
// rather than ending the connection, and answers the error it returns.
func (s *Server) serveGuarded(c echo.Context, next echo.HandlerFunc) {
	defer s.recoverPanic(c)
	req := c.Request()
	var err error
	switch {
	case req.Header.Get(echo.HeaderOrigin) != "" || req.Method == http.MethodOptions:
		if s.bodyCheckInline {
			next = checkUTF8(next)
		}
		err = s.cors(next)(c)
	default:
		if !s.deploymentCORS {
			h := c.Response().Header()
			if _, ok := h[echo.HeaderVary]; ok {
				h.Add(echo.HeaderVary, echo.HeaderOrigin)
			} else {
				h[echo.HeaderVary] = varyOrigin
			}
		}
		if s.bodyCheckInline {
			err = checkBody(c)
		}
		if err == nil {
			err = next(c)
		}
	}
	if err != nil {
		c.Error(err)
	}
}

// panicStackSize bounds the stack a recovered panic logs.
const panicStackSize = 4 << 10

// recoverPanic answers a panic of the request's handling 500, logging it with its stack.
// http.ErrAbortHandler, the way a handler aborts its answer on purpose, goes on up to net/http.
func (s *Server) recoverPanic(c echo.Context) {
	r := recover()
	if r == nil {
		return
	}
	if r == http.ErrAbortHandler {
		panic(r)
	}
	err, ok := r.(error)
	if !ok {
		err = fmt.Errorf("%v", r)
	}
	stack := make([]byte, panicStackSize)
	stack = stack[:runtime.Stack(stack, false)]
	s.log.Error("http: handler panicked", "method", c.Request().Method, "route", c.Path(), "err", err, "stack", string(stack))
	c.Error(err) // answered 500, as any error that is not the engine's
}

// logRequest writes the access log's line of a request, when the logger takes its level
// (nothing of it is built otherwise).
func (s *Server) logRequest(c echo.Context, took time.Duration, rid string) {
	req := c.Request()
	level := slog.LevelInfo
	if req.URL.Path == "/ok" || req.URL.Path == "/metrics" {
		level = slog.LevelDebug
	}
	ctx := req.Context()
	if !s.log.Enabled(ctx, level) {
		return
	}
	res := c.Response()
	var buf [8]slog.Attr
	attrs := append(buf[:0], slog.String("method", req.Method), slog.String("path", requestedPath(c)),
		slog.String("route", c.Path()), slog.Int("status", res.Status), slog.Int64("bytes", res.Size),
		slog.Float64("duration_ms", float64(took.Microseconds())/1000), slog.String("request_id", rid))
	if u, ok := engine.UserFrom(ctx); ok { // the identity, never the credential
		attrs = append(attrs, slog.String("user", u.Identity))
	}
	s.log.LogAttrs(ctx, level, "http", attrs...)
}

// requestIDChars are the characters of a request id.
const requestIDChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// newRequestID returns a request id: 32 random letters and digits (as echo's own middleware
// made them), drawn from the runtime's per-thread generator rather than crypto/rand: an id
// names a request in the logs, it is no secret.
func newRequestID() string {
	var b [32]byte
	for i := 0; i < len(b); {
		r := rand.Uint64()
		for k := 0; k < 10 && i < len(b); k, r = k+1, r>>6 { // ten 6-bit draws, those over 61 dropped
			if d := r & 63; d < uint64(len(requestIDChars)) {
				b[i] = requestIDChars[d]
				i++
			}
		}
	}
	return string(b[:])
}
