package graphs

import (
	"encoding/json"
	"strings"
	"time"
)

// AuthConfig is langgraph.json's "auth": the user's own auth handler.
type AuthConfig struct {
	// Path is "auth.path": a Python langgraph_sdk.Auth ("./auth.py:auth") or a TypeScript Auth of
	// @langchain/langgraph-sdk/auth ("./src/auth.ts:auth"), loaded by the host of its language
	// in the project; its authenticate handler decides who each request is, its on handlers
	// what each user may do.
	Path *Code
	// Cache is "auth.cache": successful answers kept per the values of some request headers;
	// nil: the handler runs for every request.
	Cache *AuthCache
	// OpenAPI is "auth.openapi": the security /openapi.json shows for the handler's routes;
	// nil: none (a handler's credentials are its own to describe).
	OpenAPI *AuthOpenAPI
	// AllowAPIKeys is "auth.allow_langsmith_api_keys": a request without an Authorization
	// header is authenticated by jetgraph's API keys (X-Api-Key: the control plane's, as LangSmith
	// API keys are on the reference) instead of the handler, whose @auth.on rules still apply.
	AllowAPIKeys bool
}

// AuthCache is "auth.cache", the reference servers' shape: {"cache_keys": [header names],
// "ttl_seconds": 60, "max_size": 1000}.
type AuthCache struct {
	// Keys are the (lower-case) header names whose values make the cache key; a request with
	// none of them is not cached.
	Keys    []string
	TTL     time.Duration
	MaxSize int
}

// Defaults of "auth.cache", the reference's.
const (
	defaultAuthCacheTTL  = 60 * time.Second
	defaultAuthCacheSize = 1000
)

// authConfig reads "auth".
func (c *configParser) authConfig(raw json.RawMessage) (*AuthConfig, error) {
	kvs, err := c.object("auth", raw)
	if err != nil {
		return nil, err
	}
	a := &AuthConfig{}
	for _, kv := range kvs {
		k := "auth." + kv.key
		switch kv.key {
		case "path":
			var spec string
			if err := json.Unmarshal(kv.value, &spec); err != nil || spec == "" {
				return nil, c.fail(k, "must be ./path/file.py:attribute (a langgraph_sdk.Auth) or ./path/file.ts:attribute (an Auth of @langchain/langgraph-sdk/auth)")
			}
			e, err := c.code(k, spec)
			if err != nil {
				return nil, err
			}
			a.Path = e.Code
		case "cache":
			if a.Cache, err = c.authCache(kv.value); err != nil {
				return nil, err
			}
		case "openapi":
			if a.OpenAPI, err = c.authOpenAPI(kv.value); err != nil {
				return nil, err
			}
		case "disable_studio_auth":
			// The reference lets LangSmith Studio's requests (x-auth-scheme: langsmith) past the
			// handler unless this is true; jetgraph has no LangSmith sign-in to check them by, so
			// the handler judges every request: true is what it does, false cannot be served.
			var off bool
			if err := json.Unmarshal(kv.value, &off); err != nil {
				return nil, c.fail(k, "must be true or false")
			}
			if !off {
				c.warn(k + ": false is not served: jetgraph has no LangSmith sign-in, so your handler judges Studio's requests like every other (as with true)")
			}
		case "allow_langsmith_api_keys":
			if err := json.Unmarshal(kv.value, &a.AllowAPIKeys); err != nil {
				return nil, c.fail(k, "must be true or false")
			}
		default:
			c.warn(k + ": unknown key, ignored (known: path, cache, disable_studio_auth, allow_langsmith_api_keys, openapi)")
		}
	}
	if a.Path == nil {
		c.warn("auth: no path, so no auth handler: ignored")
		return nil, nil
	}
	return a, nil
}

// authCache reads "auth.cache".
func (c *configParser) authCache(raw json.RawMessage) (*AuthCache, error) {
	var v struct {
		Keys    *[]string `json:"cache_keys"`
		TTL     *float64  `json:"ttl_seconds"`
		MaxSize *int      `json:"max_size"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, c.fail("auth.cache", "must be {\"cache_keys\": [header names], \"ttl_seconds\": 60, \"max_size\": 1000}")
	}
	out := &AuthCache{TTL: defaultAuthCacheTTL, MaxSize: defaultAuthCacheSize}
	if v.Keys != nil {
		for _, h := range *v.Keys {
			out.Keys = append(out.Keys, strings.ToLower(h))
		}
	}
	if v.TTL != nil {
		out.TTL = time.Duration(*v.TTL * float64(time.Second))
		if *v.TTL <= 0 || out.TTL <= 0 {
			return nil, c.fail("auth.cache.ttl_seconds", "must be more than 0")
		}
	}
	if v.MaxSize != nil {
		if *v.MaxSize <= 0 {
			return nil, c.fail("auth.cache.max_size", "must be 1 or more")
		}
		out.MaxSize = *v.MaxSize
	}
	return out, nil
}
