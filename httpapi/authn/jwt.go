package authn

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/time/rate"

	"github.com/jetgraph/jetgraph/engine"
)

// JWTConfig says how bearer tokens are verified: with a shared Secret (HS256), or with the keys
// of a JWKS URL (RS256, ES256 and the other asymmetric algorithms), never both.
type JWTConfig struct {
	// Secret is the HS256 key shared with whoever issues the tokens.
	Secret []byte
	// JWKSURL is where the issuer publishes its public keys (a JSON Web Key Set).
	JWKSURL string
	// Issuer, when set, is the iss every token must have; required with JWKSURL.
	Issuer string
	// Audience, when set, lists the aud values of which a token must have one; required with
	// JWKSURL.
	Audience []string
	// Leeway is the clock skew allowed on exp, nbf and iat (default DefaultLeeway).
	Leeway time.Duration
	// RefreshInterval is how often the JWKS is fetched again (default DefaultJWKSRefresh).
	RefreshInterval time.Duration
	// UnknownKIDInterval is the least time between two fetches of the JWKS caused by tokens of an
	// unknown kid (default DefaultUnknownKIDInterval): a rotated key is picked up at once, a
	// flood of forged kids costs the issuer one request per interval.
	UnknownKIDInterval time.Duration
	// Client fetches the JWKS (default: a client with a 10 second timeout).
	Client *http.Client
	// Logger gets the JWKS's fetch failures (never a token).
	Logger *slog.Logger
}

// Defaults of JWTConfig.
const (
	DefaultLeeway             = 30 * time.Second
	DefaultJWKSRefresh        = time.Hour
	DefaultUnknownKIDInterval = 30 * time.Second
)

// Algorithms accepted: the shared secret's, and the asymmetric ones of a JWKS. Keeping the two
// apart is what stops a token signed with a JWKS's public key as an HMAC secret.
var (
	secretAlgorithms = []string{"HS256"}
	jwksAlgorithms   = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}
)

type jwtVerifier struct {
	parser  *jwt.Parser
	keyfunc jwt.Keyfunc
}

// Check returns every problem of c, for the flags to report at start.
func (c JWTConfig) Check() error {
	var errs []error
	switch {
	case len(c.Secret) == 0 && c.JWKSURL == "":
		errs = append(errs, errors.New("JWT auth needs a shared secret (HS256) or a JWKS URL"))
	case len(c.Secret) > 0 && c.JWKSURL != "":
		errs = append(errs, errors.New("JWT auth takes a shared secret or a JWKS URL, not both"))
	case len(c.Secret) > 0 && len(c.Secret) < 32:
		errs = append(errs, fmt.Errorf("an HS256 secret has at least 32 bytes (this one has %d)", len(c.Secret)))
	}
	if c.JWKSURL != "" {
		if u, err := url.Parse(c.JWKSURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			errs = append(errs, fmt.Errorf("JWKS URL %q is no http(s) URL", c.JWKSURL))
		}
		if c.Issuer == "" {
			errs = append(errs, errors.New("a JWKS URL needs the issuer its tokens must name (iss)"))
		}
		if len(c.Audience) == 0 {
			errs = append(errs, errors.New("a JWKS URL needs the audience its tokens must name (aud): an issuer signs tokens for other services too"))
		}
	}
	return errors.Join(errs...)
}

func newJWTVerifier(ctx context.Context, c JWTConfig) (*jwtVerifier, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	if c.Leeway == 0 {
		c.Leeway = DefaultLeeway
	}
	opts := []jwt.ParserOption{jwt.WithExpirationRequired(), jwt.WithIssuedAt(), jwt.WithLeeway(c.Leeway)}
	if c.Issuer != "" {
		opts = append(opts, jwt.WithIssuer(c.Issuer))
	}
	if len(c.Audience) > 0 {
		opts = append(opts, jwt.WithAudience(c.Audience...))
	}
	v := &jwtVerifier{}
	if len(c.Secret) > 0 {
		secret := c.Secret
		v.keyfunc = func(*jwt.Token) (any, error) { return secret, nil }
		v.parser = jwt.NewParser(append(opts, jwt.WithValidMethods(secretAlgorithms))...)
		return v, nil
	}
	kf, err := jwksKeyfunc(ctx, c)
	if err != nil {
		return nil, err
	}
	v.keyfunc = kf
	v.parser = jwt.NewParser(append(opts, jwt.WithValidMethods(jwksAlgorithms))...)
	return v, nil
}

// jwksKeyfunc fetches the JWKS now and every RefreshInterval, and again for a token whose kid it
// does not know, at most once per UnknownKIDInterval; such a token waits for that fetch at
// most a second (a kid refused by the limiter fails at once).
func jwksKeyfunc(ctx context.Context, c JWTConfig) (jwt.Keyfunc, error) {
	if c.RefreshInterval == 0 {
		c.RefreshInterval = DefaultJWKSRefresh
	}
	if c.UnknownKIDInterval == 0 {
		c.UnknownKIDInterval = DefaultUnknownKIDInterval
	}
	if c.Client == nil {
		c.Client = &http.Client{Timeout: 10 * time.Second}
	}
	logger := c.Logger
	if logger == nil {
		logger = slog.Default()
	}
	kf, err := keyfunc.NewDefaultOverrideCtx(ctx, []string{c.JWKSURL}, keyfunc.Override{
		Client: c.Client, HTTPTimeout: c.Client.Timeout, RefreshInterval: c.RefreshInterval,
		RefreshUnknownKID: rate.NewLimiter(rate.Every(c.UnknownKIDInterval), 1),
		RateLimitWaitMax:  time.Second,
		RefreshErrorHandlerFunc: func(u string) func(context.Context, error) {
			return func(_ context.Context, err error) {
				logger.Warn("auth: fetching the JWKS failed; tokens of keys not fetched yet are refused", "url", u, "err", err)
			}
		},
	})
	if err != nil {
		return nil, fmt.Errorf("auth: JWKS %s: %w", c.JWKSURL, err)
	}
	return kf.Keyfunc, nil
}

// verify checks token and returns its user; the error says why a token is refused, in words
// safe to answer (nothing of the token).
func (v *jwtVerifier) verify(_ context.Context, token string) (engine.User, error) {
	claims := jwt.MapClaims{}
	if _, err := v.parser.ParseWithClaims(token, claims, v.keyfunc); err != nil {
		return engine.User{}, errors.New("Invalid token: " + reason(err))
	}
	u, err := userOf(claims)
	if err != nil {
		return engine.User{}, errors.New("Invalid token: " + err.Error())
	}
	return u, nil
}

// reason words a verification error: the library's sentinels, which name the failed check and
// none of the token's content.
func reason(err error) string {
	for _, r := range []struct {
		err error
		msg string
	}{
		{jwt.ErrTokenExpired, "it has expired"},
		{jwt.ErrTokenNotValidYet, "it is not valid yet (nbf)"},
		{jwt.ErrTokenUsedBeforeIssued, "it was issued in the future (iat)"},
		{jwt.ErrTokenInvalidIssuer, "it names another issuer (iss)"},
		{jwt.ErrTokenInvalidAudience, "it is for another audience (aud)"},
		{jwt.ErrTokenRequiredClaimMissing, "it lacks a required claim (exp, or the configured iss or aud)"},
		{jwt.ErrTokenSignatureInvalid, "its signature does not verify"},
		{jwt.ErrTokenUnverifiable, "no key verifies it (unknown kid or algorithm)"},
		{jwt.ErrTokenMalformed, "it is malformed"},
	} {
		if errors.Is(err, r.err) {
			return r.msg
		}
	}
	return "it does not verify"
}

// userOf is the user of a verified token's claims: identity from the identity claim or else
// sub, the display name from name, permissions from a permissions list or else the scope
// (space-separated) or scp claims; every claim goes on as the user's fields.
func userOf(claims jwt.MapClaims) (engine.User, error) {
	id, _ := claims["identity"].(string)
	if id == "" {
		id, _ = claims["sub"].(string)
	}
	if strings.TrimSpace(id) == "" {
		return engine.User{}, errors.New("it names no user (no identity or sub claim)")
	}
	u := engine.User{Identity: id, Fields: map[string]any(claims)}
	u.Display, _ = claims["name"].(string)
	switch {
	case claims["permissions"] != nil:
		u.Permissions = stringList(claims["permissions"])
	case claims["scope"] != nil:
		s, _ := claims["scope"].(string)
		u.Permissions = strings.Fields(s)
	case claims["scp"] != nil:
		u.Permissions = stringList(claims["scp"])
	}
	return u, nil
}

// stringList is a claim's list of strings (one string: a list of it), without the non-strings.
func stringList(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		out := make([]string, 0, len(v))
		for _, e := range v {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}
