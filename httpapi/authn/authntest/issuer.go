// Package authntest is an identity provider for tests: signing keys (RSA, EC P-256, an HS256
// secret), their JWKS served over real HTTP with the fetches counted, and the tokens they sign.
package authntest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Issuer is an identity provider: its keys by kid, the kids its JWKS lists (a rotation adds
// one), and the JWKS's fetches.
type Issuer struct {
	// URL is the JWKS's.
	URL string
	// Name is the iss of the tokens Claims makes; Audience their aud.
	Name, Audience string

	mu      sync.Mutex
	keys    map[string]crypto.Signer
	served  []string
	fetches atomic.Int32
}

// NewIssuer starts the JWKS server until the test ends.
func NewIssuer(t testing.TB) *Issuer {
	t.Helper()
	is := &Issuer{keys: map[string]crypto.Signer{}, Name: "https://id.example.test/", Audience: "jetgraph-api"}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		is.fetches.Add(1)
		is.mu.Lock()
		defer is.mu.Unlock()
		keys := []map[string]string{}
		for _, kid := range is.served {
			keys = append(keys, publicJWK(kid, is.keys[kid].Public()))
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"keys": keys})
	}))
	t.Cleanup(srv.Close)
	is.URL = srv.URL + "/.well-known/jwks.json"
	return is
}

// Fetches counts the JWKS's fetches so far.
func (is *Issuer) Fetches() int { return int(is.fetches.Load()) }

// Add makes a key of kid (EC P-256 when ec, else RSA 2048), listed in the JWKS when publish is
// set.
func (is *Issuer) Add(t testing.TB, kid string, ec, publish bool) {
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

// Publish lists kid in the JWKS from now on (a rotation).
func (is *Issuer) Publish(kid string) {
	is.mu.Lock()
	defer is.mu.Unlock()
	is.served = append(is.served, kid)
}

// Sign signs claims with the key of kid (RS256 or ES256 by its type).
func (is *Issuer) Sign(t testing.TB, kid string, claims jwt.MapClaims) string {
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

// Claims are a valid token's claims, issued now for an hour by is to its audience for sub, with
// extra over them (a nil value removes a claim).
func (is *Issuer) Claims(sub string, extra jwt.MapClaims) jwt.MapClaims {
	now := time.Now()
	c := jwt.MapClaims{"sub": sub, "iss": is.Name, "aud": is.Audience, "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
	for k, v := range extra {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	return c
}

// SignHS256 signs claims with secret.
func SignHS256(t testing.TB, secret []byte, claims jwt.MapClaims) string {
	t.Helper()
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(secret)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// publicJWK is the JWK of pub.
func publicJWK(kid string, pub crypto.PublicKey) map[string]string {
	switch p := pub.(type) {
	case *rsa.PublicKey:
		return map[string]string{"kty": "RSA", "kid": kid, "alg": "RS256", "use": "sig",
			"n": b64(p.N.Bytes()), "e": b64(big.NewInt(int64(p.E)).Bytes())}
	case *ecdsa.PublicKey:
		e, err := p.ECDH()
		if err != nil {
			panic(err)
		}
		raw := e.Bytes() // 0x04 || X || Y
		return map[string]string{"kty": "EC", "kid": kid, "alg": "ES256", "use": "sig", "crv": "P-256",
			"x": b64(raw[1:33]), "y": b64(raw[33:])}
	}
	panic("authntest: a key of an unknown type")
}
