package graphs

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestAuthConfig reads langgraph.json's auth: a Python or TypeScript Auth's path, the cache with the
// reference's defaults, and every refusal with its location.
func TestAuthConfig(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "langgraph.json")
	for _, name := range []string{"auth.py", "auth.ts"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p, err := parseNoEnv(file, []byte(`{"graphs": {"a": "echo"}, "auth": {"path": "./auth.py:auth", "cache": {"cache_keys": ["Authorization"]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	a := p.Auth
	if a == nil || a.Path.Path != filepath.Join(dir, "auth.py") || a.Path.Attr != "auth" || a.Path.Language != LanguagePython {
		t.Fatalf("auth = %+v", a)
	}
	if c := a.Cache; c == nil || !slices.Equal(c.Keys, []string{"authorization"}) || c.TTL != time.Minute || c.MaxSize != 1000 {
		t.Errorf("cache = %+v, want the reference's defaults", a.Cache)
	}
	p, err = parseNoEnv(file, []byte(`{"graphs": {"a": "echo"}, "auth": {"path": "./auth.ts:auth"}}`))
	if err != nil || p.Auth == nil || p.Auth.Path.Language != LanguageTypeScript || p.Auth.Path.Path != filepath.Join(dir, "auth.ts") {
		t.Errorf("a TypeScript auth.path: %v, %+v", err, p)
	}
	if p, err := parseNoEnv(file, []byte(`{"graphs": {"a": "echo"}, "auth": {"openapi": {}}}`)); err != nil || p.Auth != nil {
		t.Errorf("auth without a path: %v, %+v", err, p)
	}
	for _, c := range []struct{ auth, want string }{
		{`{"path": 3}`, `auth.path: must be ./path/file.py:attribute (a langgraph_sdk.Auth) or ./path/file.ts:attribute (an Auth of @langchain/langgraph-sdk/auth)`},
		{`{"path": "./nope.py:auth"}`, `auth.path: "./nope.py:auth": no file ` + filepath.Join(dir, "nope.py")},
		{`{"path": "./auth.py:auth", "cache": {"ttl_seconds": 0}}`, `auth.cache.ttl_seconds: must be more than 0`},
		{`{"path": "./auth.py:auth", "cache": {"max_size": -1}}`, `auth.cache.max_size: must be 1 or more`},
		{`{"path": "./auth.py:auth", "cache": {"cache_keys": "authorization"}}`, `auth.cache: must be {"cache_keys": [header names], "ttl_seconds": 60, "max_size": 1000}`},
	} {
		_, err := parseNoEnv(file, []byte(`{"graphs": {"a": "echo"}, "auth": `+c.auth+`}`))
		if err == nil || err.Error() != file+": "+c.want {
			t.Errorf("auth %s: got %v, want %s", c.auth, err, c.want)
		}
	}
}

// FuzzAuthConfig holds the "auth" parser to never panicking, and to a cache it accepts having a
// positive TTL and size.
func FuzzAuthConfig(f *testing.F) {
	for _, s := range []string{`{"path": "x.y:auth"}`, `{"path": "x:auth", "cache": {"cache_keys": ["a"], "ttl_seconds": 1.5, "max_size": 2}}`, `{}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !json.Valid([]byte(s)) {
			return
		}
		p, err := parseNoEnv("langgraph.json", []byte(`{"graphs": {"a": "echo"}, "auth": `+s+`}`))
		if err != nil || p.Auth == nil || p.Auth.Cache == nil {
			return
		}
		if c := p.Auth.Cache; c.TTL <= 0 || c.MaxSize <= 0 {
			t.Errorf("cache %+v accepted", c)
		}
	})
}
