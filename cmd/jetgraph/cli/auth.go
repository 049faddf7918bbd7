package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/hosting"

	"github.com/jetgraph/jetgraph/httpapi"
	"github.com/jetgraph/jetgraph/httpapi/authn"
)

// authOptions are serve's flags of the runtime API's authentication.
type authOptions struct {
	methods    string // --auth: api-key, jwt (comma-separated), none
	secretFile string // --auth-jwt-secret-file
	jwksURL    string // --auth-jwks-url
	issuer     string // --auth-jwt-issuer
	audience   string // --auth-jwt-audience
}

// JWTSecretEnv holds the HS256 secret of --auth jwt, when --auth-jwt-secret-file does not: a
// secret is never a flag, which every user of the machine could read in the process list.
const JWTSecretEnv = "JETGRAPH_AUTH_JWT_SECRET"

// authNone is --auth's explicit choice of no authentication.
const authNone = "none"

// addAuthFlags adds serve's authentication flags.
func addAuthFlags(f *pflag.FlagSet, a *authOptions) {
	f.Var(checked(&a.methods, "", checkAuthMethods), "auth",
		"authenticate the runtime API: api-key (the control plane's keys), jwt (bearer tokens), both comma-separated, or none (default: none, and a warning unless --addr is loopback)")
	f.StringVar(&a.secretFile, "auth-jwt-secret-file", "", "with --auth jwt: a file holding the HS256 secret (at least 32 bytes) the tokens are signed with (or set "+JWTSecretEnv+")")
	f.StringVar(&a.jwksURL, "auth-jwks-url", "", "with --auth jwt: the JWKS URL of the issuer's public keys (RS256, ES256, ...), fetched hourly and again for an unknown kid")
	f.StringVar(&a.issuer, "auth-jwt-issuer", "", "with --auth jwt: the iss every token must have (required with --auth-jwks-url)")
	f.StringVar(&a.audience, "auth-jwt-audience", "", "with --auth jwt: the aud values accepted, comma-separated (required with --auth-jwks-url)")
}

// checkAuthMethods checks --auth's list.
func checkAuthMethods(v string) error {
	list := splitList(v)
	for _, m := range list {
		if m != authn.MethodAPIKey && m != authn.MethodJWT && m != authNone {
			return fmt.Errorf("must be %s, %s (both, comma-separated) or %s, not %q", authn.MethodAPIKey, authn.MethodJWT, authNone, m)
		}
	}
	if slices.Contains(list, authNone) && len(list) > 1 {
		return errors.New("none goes alone")
	}
	return nil
}

// authenticator builds the runtime API's authenticator the flags ask for: nil without --auth
// (or with --auth none). keys are the control plane's (nil when it is off). The JWKS, if any, is
// refreshed until ctx ends.
func (a authOptions) authenticator(ctx context.Context, keys authn.KeyChecker, logger *slog.Logger) (*authn.Authenticator, error) {
	methods := splitList(a.methods)
	jwtFlags := a.secretFile != "" || a.jwksURL != "" || a.issuer != "" || a.audience != ""
	if jwtFlags && !slices.Contains(methods, authn.MethodJWT) {
		return nil, errors.New("--auth-jwt-secret-file, --auth-jwks-url, --auth-jwt-issuer and --auth-jwt-audience need --auth jwt")
	}
	if len(methods) == 0 || methods[0] == authNone {
		return nil, nil
	}
	var cfg authn.Config
	if slices.Contains(methods, authn.MethodAPIKey) {
		if keys == nil {
			return nil, errors.New("--auth api-key checks the control plane's keys: it cannot go with --no-control-plane")
		}
		cfg.APIKeys = keys
	}
	if slices.Contains(methods, authn.MethodJWT) {
		j := &authn.JWTConfig{JWKSURL: a.jwksURL, Issuer: a.issuer, Audience: splitList(a.audience), Logger: logger}
		switch {
		case a.secretFile != "":
			raw, err := os.ReadFile(a.secretFile)
			if err != nil {
				return nil, fmt.Errorf("--auth-jwt-secret-file: %w", err)
			}
			j.Secret = []byte(strings.TrimRight(string(raw), "\r\n"))
		case os.Getenv(JWTSecretEnv) != "":
			j.Secret = []byte(os.Getenv(JWTSecretEnv))
		}
		if err := j.Check(); err != nil {
			return nil, fmt.Errorf("--auth jwt: %w", err)
		}
		cfg.JWT = j
	}
	return authn.New(ctx, cfg)
}

// loopback reports whether addr (a listener's) admits only this machine.
func loopback(addr net.Addr) bool {
	host, _, err := net.SplitHostPort(addr.String())
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// warnIfOpen logs, at start, that the runtime API admits anyone when it authenticates nobody
// on an address other machines reach. It does not refuse: a server behind a proxy or in a
// container that does the authentication listens on every interface on purpose.
func warnIfOpen(logger *slog.Logger, addr net.Addr, auth httpapi.Authenticator) {
	if auth != nil || loopback(addr) {
		return
	}
	logger.Warn("the runtime API is open to anyone who reaches "+addr.String()+": no authentication (choose one with --auth api-key or --auth jwt, see the README's Authentication)",
		"addr", addr.String())
}

// programAuth is a Go program's own auth handler (Program.Auth) as the runtime API's
// Authenticator; being an engine.Authorizer too, it decides what each request may touch.
type programAuth struct{ engine.AuthHandler }

// Methods names the program's handler as the hosted ones are named: custom.
func (programAuth) Methods() []string { return []string{hosting.MethodCustom} }

// checkProgramAuth refuses a Program.Auth with another way of deciding who a request is: the
// project's auth.path (hasPath) or --auth.
func (o *options) checkProgramAuth(hasPath bool) error {
	if o.prog.Auth == nil {
		return nil
	}
	if hasPath {
		return fmt.Errorf("%s: auth.path (your auth handler) decides who every request is: it cannot go with the program's own handler (Program.Auth); drop one of them", o.config)
	}
	if o.auth.methods != "" && o.auth.methods != authNone {
		return fmt.Errorf("the program's own auth handler (Program.Auth) decides who every request is: it cannot go with --auth %s (drop the flag)", o.auth.methods)
	}
	return nil
}

// keysBeside is langgraph.json's auth.allow_langsmith_api_keys: a request without an
// Authorization header is judged by jetgraph's API keys (X-Api-Key), as the reference judges it
// by LangSmith's, every other by the user's handler, with no second try when the chosen one
// refuses. The handler's @auth.on rules decide what either user may touch.
type keysBeside struct {
	handler *hosting.Auth
	keys    *authn.Authenticator
}

// Authenticate asks the keys or the handler, by the request's Authorization header.
func (k keysBeside) Authenticate(r *http.Request) (engine.User, error) {
	if strings.TrimSpace(r.Header.Get("Authorization")) == "" {
		return k.keys.Authenticate(r)
	}
	return k.handler.Authenticate(r)
}

// Authorize is the handler's rules, for the users of both.
func (k keysBeside) Authorize(ctx context.Context, req *engine.AuthRequest) (engine.Filter, error) {
	return k.handler.Authorize(ctx, req)
}

// Methods names both ways.
func (k keysBeside) Methods() []string { return append(k.handler.Methods(), authn.MethodAPIKey) }
