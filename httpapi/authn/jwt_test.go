package authn_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/httpapi/authn"
	"github.com/jetgraph/jetgraph/httpapi/authn/authntest"
)

// request is a GET carrying header: value.
func request(header, value string) *http.Request {
	r := httptest.NewRequest("GET", "/threads/search", nil)
	if header != "" {
		r.Header.Set(header, value)
	}
	return r
}

// TestJWKS verifies RS256 and ES256 tokens against a JWKS served over HTTP: good tokens give
// their user, every other is a 401 failure saying why, with an invalid_token challenge and
// nothing of the token.
func TestJWKS(t *testing.T) {
	is := authntest.NewIssuer(t)
	is.Add(t, "rsa-1", false, true)
	is.Add(t, "ec-1", true, true)
	is.Add(t, "stranger", false, false) // never published
	iss, aud := is.Name, is.Audience
	a, err := authn.New(t.Context(), authn.Config{JWT: &authn.JWTConfig{JWKSURL: is.URL, Issuer: iss, Audience: []string{aud, "other"}}})
	if err != nil {
		t.Fatal(err)
	}
	hour := time.Hour
	for _, c := range []struct {
		name, kid string
		extra     jwt.MapClaims
		want      string // the identity, or a part of the failure's detail
		ok        bool
	}{
		{"good rsa", "rsa-1", nil, "user-1", true},
		{"good ec", "ec-1", jwt.MapClaims{"identity": "ada", "name": "Ada", "permissions": []any{"read", "write"}}, "ada", true},
		{"second audience", "rsa-1", jwt.MapClaims{"aud": []any{"x", "other"}}, "user-1", true},
		{"expired", "rsa-1", jwt.MapClaims{"exp": time.Now().Add(-hour).Unix()}, "expired", false},
		{"no exp", "rsa-1", jwt.MapClaims{"exp": nil}, "required claim", false},
		{"not yet valid", "ec-1", jwt.MapClaims{"nbf": time.Now().Add(hour).Unix()}, "not valid yet", false},
		{"wrong issuer", "rsa-1", jwt.MapClaims{"iss": "https://evil.example.test/"}, "another issuer", false},
		{"wrong audience", "ec-1", jwt.MapClaims{"aud": "someone-else"}, "another audience", false},
		{"unknown kid", "stranger", nil, "no key verifies it", false},
		{"no subject", "rsa-1", jwt.MapClaims{"sub": nil}, "names no user", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			token := is.Sign(t, c.kid, is.Claims("user-1", c.extra))
			u, err := a.Authenticate(request("Authorization", "Bearer "+token))
			if c.ok {
				if err != nil || u.Identity != c.want {
					t.Fatalf("user %+v, err %v; want %s", u, err, c.want)
				}
				return
			}
			var f *authn.Failure
			if !asFailure(err, &f) || !engine.Is(engine.Unauthorized, err) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want an Unauthorized failure about %q", err, c.want)
			}
			if !strings.Contains(f.WWWAuthenticate(), `error="invalid_token"`) || strings.Contains(f.WWWAuthenticate()+err.Error(), token[:20]) {
				t.Errorf("challenge %q / detail %q", f.WWWAuthenticate(), err)
			}
		})
	}
	u, err := a.Authenticate(request("Authorization", "Bearer "+is.Sign(t, "ec-1", is.Claims("user-1", jwt.MapClaims{"identity": "ada", "name": "Ada", "scope": "read write"}))))
	if err != nil {
		t.Fatal(err)
	}
	obj := u.Object()
	if obj["identity"] != "ada" || obj["display_name"] != "Ada" || obj["is_authenticated"] != true ||
		len(u.Permissions) != 2 || obj["iss"] != iss {
		t.Errorf("user object %v", obj)
	}
	// No credential at all: the plain challenge.
	var f *authn.Failure
	if _, err := a.Authenticate(request("", "")); !asFailure(err, &f) || f.WWWAuthenticate() != `Bearer realm="jetgraph"` {
		t.Errorf("no token: %v", err)
	}
	// A bearer token that is no JWT, with JWTs alone accepted.
	if _, err := a.Authenticate(request("Authorization", "Bearer jgk_notajwt")); !engine.Is(engine.Unauthorized, err) {
		t.Errorf("not a JWT: %v", err)
	}
}

// TestJWKSRotation: a token of a kid the cached JWKS lacks has the JWKS fetched again, once per
// interval: a rotated key works at once, a stream of forged kids costs no more fetches.
func TestJWKSRotation(t *testing.T) {
	is := authntest.NewIssuer(t)
	is.Add(t, "old", true, true)
	iss, aud := is.Name, is.Audience
	a, err := authn.New(t.Context(), authn.Config{JWT: &authn.JWTConfig{JWKSURL: is.URL, Issuer: iss, Audience: []string{aud},
		UnknownKIDInterval: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Authenticate(request("Authorization", "Bearer "+is.Sign(t, "old", is.Claims("user-1", nil)))); err != nil {
		t.Fatal(err)
	}
	before := is.Fetches()
	is.Add(t, "new", false, false)
	is.Publish("new") // the issuer rotates
	if _, err := a.Authenticate(request("Authorization", "Bearer "+is.Sign(t, "new", is.Claims("user-1", nil)))); err != nil {
		t.Fatalf("rotated key: %v", err)
	}
	if got := is.Fetches(); got != before+1 {
		t.Errorf("fetches for the rotated kid: %d, want 1", got-before)
	}
	is.Add(t, "forged", false, false)
	for range 5 {
		start := time.Now()
		if _, err := a.Authenticate(request("Authorization", "Bearer "+is.Sign(t, "forged", is.Claims("user-1", nil)))); !engine.Is(engine.Unauthorized, err) {
			t.Fatalf("forged kid: %v", err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("a forged kid waited %v for the rate limit", d)
		}
	}
	if got := is.Fetches(); got != before+1 {
		t.Errorf("forged kids fetched the JWKS %d more times, want 0", got-before-1)
	}
}

// TestHS256: a shared secret verifies HS256 tokens only; a token signed with another secret,
// or with another algorithm, is refused.
func TestHS256(t *testing.T) {
	secret := []byte(strings.Repeat("s3cret-", 6))
	a, err := authn.New(context.Background(), authn.Config{JWT: &authn.JWTConfig{Secret: secret}})
	if err != nil {
		t.Fatal(err)
	}
	sign := func(key []byte, m jwt.SigningMethod, c jwt.MapClaims) string {
		s, err := jwt.NewWithClaims(m, c).SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	is := authntest.Issuer{}
	good := is.Claims("user-1", jwt.MapClaims{"iss": nil, "aud": nil})
	for _, c := range []struct {
		name  string
		token string
		ok    bool
	}{
		{"good", sign(secret, jwt.SigningMethodHS256, good), true},
		{"other secret", sign([]byte(strings.Repeat("other-", 8)), jwt.SigningMethodHS256, good), false},
		{"HS512", sign(secret, jwt.SigningMethodHS512, good), false},
		{"expired", sign(secret, jwt.SigningMethodHS256, is.Claims("user-1", jwt.MapClaims{"exp": time.Now().Add(-time.Hour).Unix()})), false},
		{"alg none", func() string {
			s, _ := jwt.NewWithClaims(jwt.SigningMethodNone, good).SignedString(jwt.UnsafeAllowNoneSignatureType)
			return s
		}(), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			u, err := a.Authenticate(request("Authorization", "Bearer "+c.token))
			if c.ok != (err == nil) || (c.ok && u.Identity != "user-1") {
				t.Fatalf("user %+v, err %v, want ok=%v", u, err, c.ok)
			}
		})
	}
}

// TestJWTConfigCheck: the settings that cannot work, or would accept other services' tokens,
// are refused at start, every problem named.
func TestJWTConfigCheck(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  authn.JWTConfig
		want []string
	}{
		{"nothing", authn.JWTConfig{}, []string{"shared secret (HS256) or a JWKS URL"}},
		{"both", authn.JWTConfig{Secret: make([]byte, 32), JWKSURL: "https://x/jwks"}, []string{"not both"}},
		{"short secret", authn.JWTConfig{Secret: []byte("short")}, []string{"at least 32 bytes"}},
		{"jwks alone", authn.JWTConfig{JWKSURL: "ftp://x"}, []string{"no http(s) URL", "issuer", "audience"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.cfg.Check()
			for _, w := range c.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("%v, want %q", err, w)
				}
			}
		})
	}
}

func asFailure(err error, f **authn.Failure) bool {
	if err == nil {
		return false
	}
	var ff *authn.Failure
	ok := errors.As(err, &ff)
	*f = ff
	return ok
}
