// Package authn authenticates requests to the runtime API: it turns a request's credential (an
// API key of the control plane, or a JWT bearer token) into the engine.User the request acts
// for, or into a 401 that says what was missing or wrong. The credential itself is never kept,
// logged or echoed: only the user it proves goes on.
package authn

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/jetgraph/jetgraph/engine"
)

// KeyChecker resolves an API key to its user; engine/controlplane/keys.Service is one. An
// unknown or revoked key is an Unauthorized error.
type KeyChecker interface {
	RuntimeUser(ctx context.Context, key string) (engine.User, error)
}

// Config chooses the credentials a server accepts. At least one of APIKeys and JWT is set.
type Config struct {
	// APIKeys, when set, accepts the control plane's API keys as X-Api-Key or as
	// "Authorization: Bearer <key>".
	APIKeys KeyChecker
	// JWT, when set, accepts JWT bearer tokens it verifies.
	JWT *JWTConfig
}

// Authenticator decides who a request is.
type Authenticator struct {
	keys KeyChecker
	jwt  *jwtVerifier
}

// New builds the authenticator of cfg. A JWKS is fetched in the background from now until ctx
// ends (a JWKS that cannot be fetched yet is retried; tokens fail until it can).
func New(ctx context.Context, cfg Config) (*Authenticator, error) {
	if cfg.APIKeys == nil && cfg.JWT == nil {
		return nil, errors.New("authn: no way of authenticating is configured")
	}
	a := &Authenticator{keys: cfg.APIKeys}
	if cfg.JWT != nil {
		v, err := newJWTVerifier(ctx, *cfg.JWT)
		if err != nil {
			return nil, err
		}
		a.jwt = v
	}
	return a, nil
}

// Failure is why a request is not authenticated: its Unauthorized engine error (the 401's
// detail), and the WWW-Authenticate challenge to answer with.
type Failure struct {
	Err       error
	Challenge string
}

func (f *Failure) Error() string { return f.Err.Error() }
func (f *Failure) Unwrap() error { return f.Err }

// WWWAuthenticate is the challenge of the 401.
func (f *Failure) WWWAuthenticate() string { return f.Challenge }

// realm names jetgraph in the challenges.
const realm = `Bearer realm="jetgraph"`

const op = "authn"

// missing is the failure of a request without a credential the server accepts.
func (a *Authenticator) missing() *Failure {
	var msg string
	switch {
	case a.keys != nil && a.jwt != nil:
		msg = "Missing credentials: send an API key as X-Api-Key, or a token or an API key as Authorization: Bearer <token>."
	case a.keys != nil:
		msg = "Missing API key: send it as X-Api-Key or as Authorization: Bearer <key>."
	default:
		msg = "Missing bearer token: send a JWT as Authorization: Bearer <token>."
	}
	return &Failure{Err: engine.E(engine.Op(op), engine.Unauthorized, msg), Challenge: realm}
}

// invalid is the failure of a credential that was refused, why in msg (never the credential).
func invalid(msg string) *Failure {
	return &Failure{Err: engine.E(engine.Op(op), engine.Unauthorized, msg),
		Challenge: realm + `, error="invalid_token", error_description="` + strings.ReplaceAll(msg, `"`, `'`) + `"`}
}

// Authenticate returns the user the request's credential proves. A bearer token shaped as a JWT
// goes to the JWT verifier when JWTs are accepted; otherwise X-Api-Key, or else the bearer
// token, is an API key when keys are accepted. The error is a *Failure.
func (a *Authenticator) Authenticate(r *http.Request) (engine.User, error) {
	bearer := bearerToken(r.Header)
	if a.jwt != nil && bearer != "" && strings.Count(bearer, ".") == 2 {
		u, err := a.jwt.verify(r.Context(), bearer)
		if err != nil {
			return engine.User{}, invalid(err.Error())
		}
		return u, nil
	}
	key := r.Header.Get("X-Api-Key")
	if key == "" {
		key = bearer
	}
	if a.keys == nil || key == "" {
		if a.keys == nil && bearer != "" {
			return engine.User{}, invalid("Invalid token: the bearer token is not a JWT.")
		}
		return engine.User{}, a.missing()
	}
	u, err := a.keys.RuntimeUser(r.Context(), key)
	if err != nil {
		if engine.Is(engine.Unauthorized, err) {
			var ee *engine.Error
			msg := "Invalid API key."
			if errors.As(err, &ee) && ee.Detail != "" {
				msg = ee.Detail
			}
			return engine.User{}, invalid(msg)
		}
		return engine.User{}, fmt.Errorf("%s: api key: %w", op, err)
	}
	return u, nil
}

// Methods names the ways of authenticating a accepts, for the startup line: "api-key", "jwt".
func (a *Authenticator) Methods() []string {
	var m []string
	if a.keys != nil {
		m = append(m, MethodAPIKey)
	}
	if a.jwt != nil {
		m = append(m, MethodJWT)
	}
	return m
}

// The ways of authenticating, as --auth names them.
const (
	MethodAPIKey = "api-key"
	MethodJWT    = "jwt"
)

// bearerToken is the token of an "Authorization: Bearer <token>" header ("" without one); the
// scheme's name is case-insensitive.
func bearerToken(h http.Header) string {
	scheme, token, ok := strings.Cut(strings.TrimSpace(h.Get("Authorization")), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(token)
}
