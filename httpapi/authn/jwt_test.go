package authn_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/httpapi/authn"
)

// issuer is an identity provider the test runs: signing keys, and their JWKS served over
// HTTP, which the test may change (a key rotation) and whose fetches it counts.
type issuer struct {
	mu      sync.Mutex
	keys    map[string]crypto.Signer // by kid
	served  []string                 // kids the JWKS lists
	fetches atomic.Int32
	URL     string
}

func newIssuer(t *testing.T) *issuer {
	t.Helper()
	is := &issuer{keys: map[string]crypto.Signer{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		is.fetches.Add(1)
		is.mu.Lock()
		defer is.mu.Unlock()
		var keys []map[string]string
		for _, kid := range is.served {
			keys = append(keys, jwk(kid, is.keys[kid].Public()))
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"keys": keys})
	}))
	t.Cleanup(srv.Close)
	is.URL = srv.URL + "/.well-known/jwks.json"
	return is
}

// add makes a key of kid (RSA or EC P-256), published in the JWKS when publish is set.
func (is *issuer) add(t *testing.T, kid string, ec, publish bool) {
	t.Helper()
	var k crypto.Signer
	var err error
	if ec {
		k, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	} else {
		k, err = rsa.GenerateKey(rand.Reader, 2048)
	}
	if err != nil {
		t.Fatal(err)
	}
	is.mu.Lock()
	defer is.mu.Unlock()
	is.keys[kid] = k
	if publish {
		is.served = append(is.served, kid)
	}
}

// publish lists kid in the JWKS from now on (a rotation).
func (is *issuer) publish(kid string) {
	is.mu.Lock()
	defer is.mu.Unlock()
	is.served = append(is.served, kid)
}

// sign signs claims with the key of kid.
func (is *issuer) sign(t *testing.T, kid string, claims jwt.MapClaims) string {
	t.Helper()
	is.mu.Lock()
	k := is.keys[kid]
	is.mu.Unlock()
	method := jwt.SigningMethod(jwt.SigningMethodRS256)
	if _, ok := k.(*ecdsa.PrivateKey); ok {
		method = jwt.SigningMethodES256
	}
	tok := jwt.NewWithClaims(method, claims)
	tok.Header["kid"] = kid
	s, err := tok.SignedString(k)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// jwk is the public JWK of pub.
func jwk(kid string, pub crypto.PublicKey) map[string]string {
	switch p := pub.(type) {
	case *rsa.PublicKey:
		return map[string]string{"kty": "RSA", "kid": kid, "alg": "RS256", "use": "sig",
			"n": b64(p.N.Bytes()), "e": b64(big.NewInt(int64(p.E)).Bytes())}
	case *ecdsa.PublicKey:
		e, _ := p.ECDH()
		raw := e.Bytes() // 0x04 || X || Y
		return map[string]string{"kty": "EC", "kid": kid, "alg": "ES256", "use": "sig", "crv": "P-256",
			"x": b64(raw[1:33]), "y": b64(raw[33:])}
	}
	panic("unknown key type")
}

// request is a GET carrying header: value.
func request(header, value string) *http.Request {
	r := httptest.NewRequest("GET", "/threads/search", nil)
	if header != "" {
		r.Header.Set(header, value)
	}
	return r
}

// claims are a valid token's claims for iss and aud, over extra.
func claims(iss, aud string, extra jwt.MapClaims) jwt.MapClaims {
	now := time.Now()
	c := jwt.MapClaims{"sub": "user-1", "iss": iss, "aud": aud, "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
	for k, v := range extra {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	return c
}

// TestJWKS verifies RS256 and ES256 tokens against a JWKS served over HTTP: good tokens give
// their user, every other is a 401 failure saying why, with an invalid_token challenge and
// nothing of the token.
func TestJWKS(t *testing.T) {
	is := newIssuer(t)
	is.add(t, "rsa-1", false, true)
	is.add(t, "ec-1", true, true)
	is.add(t, "stranger", false, false) // never published
	const iss, aud = "https://id.example.test/", "jetgraph-api"
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
			token := is.sign(t, c.kid, claims(iss, aud, c.extra))
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
	u, err := a.Authenticate(request("Authorization", "Bearer "+is.sign(t, "ec-1", claims(iss, aud, jwt.MapClaims{"identity": "ada", "name": "Ada", "scope": "read write"}))))
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
	is := newIssuer(t)
	is.add(t, "old", true, true)
	const iss, aud = "https://id.example.test/", "jetgraph-api"
	a, err := authn.New(t.Context(), authn.Config{JWT: &authn.JWTConfig{JWKSURL: is.URL, Issuer: iss, Audience: []string{aud},
		UnknownKIDInterval: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Authenticate(request("Authorization", "Bearer "+is.sign(t, "old", claims(iss, aud, nil)))); err != nil {
		t.Fatal(err)
	}
	before := is.fetches.Load()
	is.add(t, "new", false, false)
	is.publish("new") // the issuer rotates
	if _, err := a.Authenticate(request("Authorization", "Bearer "+is.sign(t, "new", claims(iss, aud, nil)))); err != nil {
		t.Fatalf("rotated key: %v", err)
	}
	if got := is.fetches.Load(); got != before+1 {
		t.Errorf("fetches for the rotated kid: %d, want 1", got-before)
	}
	is.add(t, "forged", false, false)
	for range 5 {
		start := time.Now()
		if _, err := a.Authenticate(request("Authorization", "Bearer "+is.sign(t, "forged", claims(iss, aud, nil)))); !engine.Is(engine.Unauthorized, err) {
			t.Fatalf("forged kid: %v", err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("a forged kid waited %v for the rate limit", d)
		}
	}
	if got := is.fetches.Load(); got != before+1 {
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
	good := claims("", "", jwt.MapClaims{"iss": nil, "aud": nil})
	for _, c := range []struct {
		name  string
		token string
		ok    bool
	}{
		{"good", sign(secret, jwt.SigningMethodHS256, good), true},
		{"other secret", sign([]byte(strings.Repeat("other-", 8)), jwt.SigningMethodHS256, good), false},
		{"HS512", sign(secret, jwt.SigningMethodHS512, good), false},
		{"expired", sign(secret, jwt.SigningMethodHS256, claims("", "", jwt.MapClaims{"exp": time.Now().Add(-time.Hour).Unix()})), false},
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
