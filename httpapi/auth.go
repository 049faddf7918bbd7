package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graphs"
)

// Authenticator decides who a request to the runtime API is (httpapi/authn.Authenticator). Its
// error is an Unauthorized engine error, which may carry the WWW-Authenticate challenge of the
// 401 (a WWWAuthenticate method).
type Authenticator interface {
	Authenticate(r *http.Request) (engine.User, error)
	// Methods names the ways of authenticating it accepts: "api-key", "jwt".
	Methods() []string
}

// openPaths are the runtime routes answered without a credential, as the reference servers
// answer them: health checks, the server's description, metrics and this API's document; and the
// console's assets, which hold no data (its API calls carry the user's key).
var openPaths = []string{"/ok", "/info", "/metrics", "/openapi.json", "/docs", "/docs/assets/:file",
	"/", "/console", "/console/*"}

// guardRuntime records the routes registered so far, the runtime's, as those that need a
// credential (but the open ones); the routes mounted after (the tracing API, the control plane)
// authenticate on their own. Called once every runtime route is registered.
func (s *Server) guardRuntime() {
	if s.deps.Auth == nil {
		return
	}
	s.guarded = map[string]bool{}
	for _, r := range s.echo.Routes() {
		if !slices.Contains(openPaths, r.Path) {
			s.guarded[r.Path] = true
		}
	}
	s.openapiDoc = securedOpenAPI(openapiJSON, s.guarded, s.deps.Auth.Methods(), s.deps.AuthOpenAPI)
}

// authenticate puts the user of a runtime request's credential in its context, and answers a
// request without a valid one 401 with a challenge. A custom route (http.app) is authenticated
// only when http.enable_custom_route_auth says so, as on the reference servers. Preflights carry no credential and are
// answered by the CORS middleware before this.
func (s *Server) authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		guarded := s.guarded[c.Path()]
		if ri := RouteOf(c); ri.Custom {
			guarded = !ri.Public // the user's route: authenticated with http.enable_custom_route_auth
		}
		if !guarded || req.Method == http.MethodOptions {
			return next(c)
		}
		u, err := s.deps.Auth.Authenticate(req)
		if err != nil {
			var ch interface{ WWWAuthenticate() string }
			if errors.As(err, &ch) {
				c.Response().Header().Set(echo.HeaderWWWAuthenticate, ch.WWWAuthenticate())
			}
			return err
		}
		ctx := engine.WithUser(req.Context(), u)
		if az, ok := s.deps.Auth.(engine.Authorizer); ok {
			ctx = engine.WithAuthorizer(ctx, az) // the user's rules decide what u may touch
		}
		c.SetRequest(req.WithContext(ctx))
		return next(c)
	}
}

// Security schemes of the runtime routes in the OpenAPI document: the API key (the control
// plane's, whose schemes the document has already) and JWT bearer tokens.
const (
	schemeAPIKey = "ApiKey"
	schemeBearer = "BearerAuth"
	schemeJWT    = "JWT"
)

// pathParam is an OpenAPI path's parameter, {name}, which echo writes :name.
var pathParam = regexp.MustCompile(`\{([^}/]+)\}`)

// securedOpenAPI is doc with the security of the guarded routes: the JWT scheme among the
// document's schemes when methods has jwt, and on every operation of a guarded path the
// schemes methods accept. An operation with a security of its own keeps it. custom, the auth
// handler's auth.openapi, adds its schemes (replacing the document's of the same name: the
// reference replaces them all, but the tracing API's and the control plane's operations name
// theirs), puts its security on the guarded operations, and its paths' on theirs.
func securedOpenAPI(doc []byte, guarded map[string]bool, methods []string, custom *graphs.AuthOpenAPI) []byte {
	var d map[string]any
	if err := json.Unmarshal(doc, &d); err != nil {
		return doc // the embedded document is checked by the tests
	}
	var security []any
	if custom != nil {
		schemes := securitySchemes(d)
		for name, scheme := range custom.SecuritySchemes {
			schemes[name] = scheme
		}
		security = slices.Clone(custom.Security)
	}
	for _, m := range methods {
		switch m {
		case "api-key":
			security = append(security, map[string]any{schemeAPIKey: []any{}}, map[string]any{schemeBearer: []any{}})
		case "jwt":
			security = append(security, map[string]any{schemeJWT: []any{}})
			securitySchemes(d)[schemeJWT] = map[string]any{"type": "http", "scheme": "bearer", "bearerFormat": "JWT",
				"description": "A JWT bearer token (Authorization: Bearer <token>): HS256 with the server's shared secret, or signed by a key of its JWKS; its identity or sub claim is the user."}
		}
	}
	paths, _ := d["paths"].(map[string]any)
	for p, ops := range paths {
		if !guarded[pathParam.ReplaceAllString(p, ":$1")] {
			continue
		}
		opMap, _ := ops.(map[string]any)
		for method, o := range opMap {
			op, ok := o.(map[string]any)
			if !ok || method == "parameters" {
				continue
			}
			if _, has := op["security"]; !has {
				if security != nil { // the user's own handler ("custom") has no scheme to name yet
					op["security"] = security
				}
				addUnauthorized(op, slices.Contains(methods, methodCustom))
			}
		}
	}
	if custom != nil {
		for p, byMethod := range custom.Paths {
			opMap, _ := paths[p].(map[string]any)
			for method, sec := range byMethod {
				if op, ok := opMap[strings.ToLower(method)].(map[string]any); ok {
					op["security"] = sec
				}
			}
		}
	}
	out, err := json.Marshal(d)
	if err != nil {
		return doc
	}
	return out
}

// securitySchemes is the document's components.securitySchemes, made when it has none.
func securitySchemes(d map[string]any) map[string]any {
	comp, _ := d["components"].(map[string]any)
	if comp == nil {
		comp = map[string]any{}
		d["components"] = comp
	}
	schemes, _ := comp["securitySchemes"].(map[string]any)
	if schemes == nil {
		schemes = map[string]any{}
		comp["securitySchemes"] = schemes
	}
	return schemes
}

// methodCustom is the method of the user's own auth handler (hosting.MethodCustom, a Go
// program's): it may refuse a known user (403) and its rules may fail (500).
const methodCustom = "custom"

// addUnauthorized documents the 401 of a guarded operation and, with the user's own handler
// (handler), the 403 of its refusals.
func addUnauthorized(op map[string]any, handler bool) {
	responses, _ := op["responses"].(map[string]any)
	if responses == nil {
		return
	}
	if _, has := responses["403"]; handler && !has {
		responses["403"] = map[string]any{"description": "Your auth handler refused the request: the detail is its message.",
			"content": map[string]any{"application/json": map[string]any{"schema": map[string]any{
				"type": "object", "properties": map[string]any{"detail": map[string]any{"type": "string"}}}}}}
	}
	if _, has := responses["401"]; !has {
		responses["401"] = map[string]any{"description": "No valid credential: the detail says what was missing or wrong; WWW-Authenticate carries the challenge.",
			"content": map[string]any{"application/json": map[string]any{"schema": map[string]any{
				"type": "object", "properties": map[string]any{"detail": map[string]any{"type": "string"}}}}}}
	}
}
