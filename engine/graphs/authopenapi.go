package graphs

import (
	"encoding/json"
	"fmt"
)

// AuthOpenAPI is "auth.openapi", the reference servers' SecurityConfig: OpenAPI objects kept as
// written (they are the document's, never read by jetgraph).
type AuthOpenAPI struct {
	// SecuritySchemes ("securitySchemes", or "security_schemes") are added to the document's
	// components, replacing its own of the same name.
	SecuritySchemes map[string]any
	// Security is the requirement of every authenticated operation without one of its own
	// (nil: none given).
	Security []any
	// Paths are per-operation requirements: path (as the document writes it) to method to
	// security, applied last.
	Paths map[string]map[string][]any
}

// authOpenAPI reads "auth.openapi": objects and lists where OpenAPI has them, so the document
// stays valid JSON of the right shapes (what is inside is the user's OpenAPI).
func (c *configParser) authOpenAPI(raw json.RawMessage) (*AuthOpenAPI, error) {
	var v struct {
		Schemes     map[string]any              `json:"securitySchemes"`
		SnakeScheme map[string]any              `json:"security_schemes"`
		Security    *[]any                      `json:"security"`
		Paths       map[string]map[string][]any `json:"paths"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, c.fail("auth.openapi", "must be {\"securitySchemes\": {name: scheme object}, \"security\": [requirement objects], \"paths\": {path: {method: [requirement objects]}}}: %v", err)
	}
	out := &AuthOpenAPI{SecuritySchemes: v.Schemes, Paths: v.Paths}
	if out.SecuritySchemes == nil {
		out.SecuritySchemes = v.SnakeScheme
	}
	for name, scheme := range out.SecuritySchemes {
		if _, ok := scheme.(map[string]any); !ok {
			return nil, c.fail("auth.openapi.securitySchemes."+name, "must be an OpenAPI security scheme object")
		}
	}
	if v.Security != nil {
		out.Security = *v.Security
		if out.Security == nil {
			out.Security = []any{}
		}
	}
	for i, req := range out.Security {
		if _, ok := req.(map[string]any); !ok {
			return nil, c.fail(fmt.Sprintf("auth.openapi.security[%d]", i), "must be a security requirement object ({scheme name: [scopes]})")
		}
	}
	for path, methods := range out.Paths {
		for method, reqs := range methods {
			for i, req := range reqs {
				if _, ok := req.(map[string]any); !ok {
					return nil, c.fail(fmt.Sprintf("auth.openapi.paths.%s.%s[%d]", path, method, i), "must be a security requirement object ({scheme name: [scopes]})")
				}
			}
		}
	}
	return out, nil
}
