// Package httpapi serves jetgraph over HTTP with echo: the LangGraph-compatible runtime API, the
// health, info, metrics and docs endpoints. Handlers parse and validate requests, call the engine
// and write its answers; they hold no business rules. The server, its middleware, the one error
// mapping and the request kit serve every bounded context; the tracing context's handlers are in
// httpapi/tracingapi, mounted through Deps.Tracing.
package httpapi

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	_ "net/http/pprof" // registered on http.DefaultServeMux, served only with Deps.Pprof
	"time"

	jsonv1 "github.com/go-json-experiment/json/v1"
	"github.com/labstack/echo/v4"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graphs"
	"github.com/jetgraph/jetgraph/engine/jsoncount"
)

// Deps are the parts of jetgraph the HTTP API serves. The runtime's parts are the interfaces of
// ports.go, which the engine's services satisfy. Graphs, Runs, Streams and Truncate may be nil:
// what needs them then answers 404 or 503, or is not routed.
type Deps struct {
	Threads    ThreadService
	Assistants AssistantService
	Store      StoreService
	Graphs     GraphCatalog // the served graphs, drawn by /assistants/{id}/graph, /schemas, /subgraphs
	// Runner runs graphs on threads and answers thread-state requests.
	Runner StateService
	// Runs creates, schedules, waits for and cancels runs (the durable scheduler).
	Runs RunService
	// Crons creates and searches crons (engine/crons); nil: /runs/crons answers 503.
	Crons CronService
	// Streams serves the runs' and threads' server-sent event streams (engine/streaming).
	Streams StreamService
	// Outputs serves the thread-centric streaming protocol (engine/threadstream); nil: 503.
	Outputs OutputService
	// ConfigurableHeaders are the request headers copied into the config.configurable of the
	// runs a request creates (langgraph.json's http.configurable_headers); credentials
	// (authorization, x-api-key, cookies) never are.
	ConfigurableHeaders engine.HeaderPatterns
	// Tracing is the LLM tracing API (the langsmith clients') that New mounts under /tracing:
	// httpapi/tracingapi.New of the tracing service; nil: not served.
	Tracing Routes
	// A2A is the Agent2Agent protocol endpoint of every assistant (/a2a/{assistant_id}):
	// httpapi/a2a.New of the runtime's services; nil (--disable-a2a): not served, 404.
	A2A Routes
	// ControlPlane is the deployment control plane's API (/v2, /v1 and the deployments'
	// custom_url): httpapi/controlapi.New; nil: not served.
	ControlPlane Routes
	// Events serves the raw log of an aggregate (GET /events/{kind}/{id}).
	Events EventTailer
	// Health returns nil when the log and every projection are healthy.
	Health func(ctx context.Context) error
	// Info is served at GET /info.
	Info map[string]any
	// InfoNow, when set, is served at GET /info instead: what is known only once the server
	// runs (the hosted graphs' library versions).
	InfoNow func() map[string]any
	// Metrics serves GET /metrics.
	Metrics *Metrics
	Logger  *slog.Logger
	// CORSOrigins are the browser origins, besides loopback ones, allowed to call the API
	// ("*": every origin).
	CORSOrigins []string
	// HTTP is langgraph.json's "http" (custom routes, disable_* toggles, mount_prefix, cors;
	// see deployment.go); nil: none.
	HTTP *graphs.HTTPConfig
	// App serves HTTP.App, the user's custom routes (engine/hosting.App); nil: none.
	App CustomApp
	// Pprof serves Go's profiler at /debug/pprof/ (off by default: it is for operators).
	Pprof bool
	// Auth, when set, authenticates every runtime request (MCP, A2A and the streams included)
	// but the open ones (/ok, /info, /metrics, /docs, /openapi.json); the user it finds is in
	// the request's context (engine.UserFrom) and reaches the runs' configurable. nil: anyone
	// reaching the port acts, anonymously.
	Auth Authenticator
	// AuthOpenAPI is the auth handler's auth.openapi (langgraph.json): the security schemes and
	// requirements /openapi.json shows for the guarded routes; nil: the built-in ways' own.
	AuthOpenAPI *graphs.AuthOpenAPI
	// Truncate, when set (jetgraph serve --dev), serves POST /internal/truncate, which empties
	// the data between the blocks of a client test suite. Never set in production.
	Truncate Truncator
}

// Server is the HTTP front of jetgraph.
type Server struct {
	echo *echo.Echo
	deps Deps
	log  *slog.Logger
	// guarded are the route paths that need a credential when Deps.Auth is set.
	guarded map[string]bool
	// openapiDoc is the document /openapi.json serves: the embedded one, with the runtime's
	// security schemes when Deps.Auth is set.
	openapiDoc []byte
	// cors is the CORS middleware, which front applies to the requests of browsers;
	// deploymentCORS says it is langgraph.json's http.cors.
	cors           echo.MiddlewareFunc
	deploymentCORS bool
	// bodyCheckInline says front checks the bodies' UTF-8 itself: no middleware runs between
	// CORS and the check.
	bodyCheckInline bool
}

// exposedHeaders are readable by browser clients across origins; the SDKs read them.
var exposedHeaders = []string{"Content-Location", "Location", "X-Pagination-Total", "X-Pagination-Next", echo.HeaderXRequestID}

// New builds the server and registers every route.
func New(d Deps) *Server {
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	if d.Metrics == nil {
		d.Metrics = NewMetrics()
	}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.JSONSerializer = countedJSON{}
	s := &Server{echo: e, deps: d, log: d.Logger, openapiDoc: openapiJSON}
	e.HTTPErrorHandler = s.errorHandler
	e.Server.IdleTimeout = 75 * time.Second // the reference servers' keep-alive
	e.Server.ReadHeaderTimeout = 30 * time.Second

	if d.HTTP != nil {
		e.Pre(s.classify)
	}
	if d.HTTP != nil && d.HTTP.CORS != nil {
		s.cors, s.deploymentCORS = deploymentCORS(d.HTTP.CORS), true // http.cors replaces the server's CORS settings
	} else {
		s.cors = cors(d.CORSOrigins)
	}
	// front: request id, recover, CORS, access log, metrics (see front).
	e.Use(s.front)
	s.bodyCheckInline = d.Auth == nil && d.HTTP == nil
	if d.Auth != nil {
		// Before the deployment layer, which serves the custom routes: those with
		// http.enable_custom_route_auth are authenticated too.
		e.Use(s.authenticate)
	}
	if d.HTTP != nil {
		e.Use(s.deployment)
	}
	if !s.bodyCheckInline {
		e.Use(checkUTF8)
	}

	s.systemRoutes()
	s.consoleRoutes()
	if d.Pprof {
		e.Any("/debug/pprof/*", echo.WrapHandler(http.DefaultServeMux))
	}
	s.threadRoutes()
	s.assistantRoutes()
	s.storeRoutes()
	s.eventRoutes()
	s.stateRoutes()
	s.runRoutes()
	s.cronRoutes()
	s.streamRoutes()
	s.mcpRoutes()
	s.threadStreamRoutes()
	if d.A2A != nil {
		d.A2A.Mount(e)
	}
	if d.Truncate != nil {
		e.POST("/internal/truncate", s.truncate)
	}
	s.guardRuntime() // the routes so far are the runtime's; those after authenticate on their own
	if d.Tracing != nil {
		if r, ok := d.Tracing.(interface{ RequireRuntimeAuth(Authenticator) }); ok && d.Auth != nil {
			r.RequireRuntimeAuth(d.Auth) // the default tenant's traces are the runtime's runs
		}
		d.Tracing.Mount(e)
	}
	if d.ControlPlane != nil {
		d.ControlPlane.Mount(e)
	}
	return s
}

// countedJSON is echo's JSON serializer with its documents counted (engine/jsoncount), and its
// answers encoded by go-json-experiment's v1 encoder: the bytes encoding/json writes, in about
// half the time and a fifth of the allocations (it sorts a map's keys without reflect values).
type countedJSON struct{ echo.DefaultJSONSerializer }

func (j countedJSON) Serialize(c echo.Context, i any, indent string) error {
	jsoncount.Encoded()
	enc := jsonv1.NewEncoder(c.Response())
	if indent != "" {
		enc.SetIndent("", indent)
	}
	return enc.Encode(i)
}

func (j countedJSON) Deserialize(c echo.Context, i any) error {
	jsoncount.Decoded()
	return j.DefaultJSONSerializer.Deserialize(c, i)
}

// Handler is the server as an http.Handler, for tests.
func (s *Server) Handler() http.Handler { return s.echo }

// Routes lists every registered route (the OpenAPI test reads it).
func (s *Server) Routes() []*echo.Route { return s.echo.Routes() }

// Serve answers requests on l until Shutdown.
func (s *Server) Serve(l net.Listener) error {
	s.echo.Listener = l
	err := s.echo.Start("")
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Shutdown stops accepting requests and waits for those in flight until ctx ends.
func (s *Server) Shutdown(ctx context.Context) error { return s.echo.Shutdown(ctx) }
