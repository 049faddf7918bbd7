// Command go-auth is jetgraph with an auth handler written in Go: a bearer token names the user,
// and owners.Rules gives every user their own threads, runs, assistants, crons and store
// namespace. The tokens come from the environment, never from the code or a flag:
//
//	GO_AUTH_TOKENS="tok-alice=alice tok-bob=bob" go run ./scenarios/examples/go-auth --addr localhost:8124
//
// Every jetgraph command and flag works as with jetgraph itself (cli.Main), but --auth: the
// program's handler decides who a request is.
package main

import (
	"crypto/sha256"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/jetgraph/jetgraph/cmd/jetgraph/cli"
	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/owners"
)

// TokensEnv names the environment variable of the tokens: token=identity pairs, separated by
// spaces.
const TokensEnv = "GO_AUTH_TOKENS"

// handler is an engine.AuthHandler: Authenticate says who a request is, the embedded
// owners.Rules what that user may touch.
type handler struct {
	owners.Rules
	users map[[sha256.Size]byte]string // identity by the SHA-256 of its token
}

// Authenticate accepts "Authorization: Bearer <token>" with a known token. The token is looked
// up by its hash, so the lookup's time tells nothing of the tokens.
func (h handler) Authenticate(r *http.Request) (engine.User, error) {
	scheme, token, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	if id, ok := h.users[sha256.Sum256([]byte(token))]; ok && strings.EqualFold(scheme, "bearer") {
		return engine.User{Identity: id, Display: id}, nil
	}
	return engine.User{}, engine.E(engine.Op("go-auth.authenticate"), engine.Unauthorized, "Unknown or missing token")
}

// parseTokens reads TokensEnv's value.
func parseTokens(s string) (map[[sha256.Size]byte]string, error) {
	users := map[[sha256.Size]byte]string{}
	for _, pair := range strings.Fields(s) {
		token, id, ok := strings.Cut(pair, "=")
		if !ok || token == "" || id == "" {
			return nil, fmt.Errorf("%s: %q is not token=identity", TokensEnv, pair)
		}
		users[sha256.Sum256([]byte(token))] = id
	}
	if len(users) == 0 {
		return nil, fmt.Errorf("%s names no token=identity pair: nobody could use the server", TokensEnv)
	}
	return users, nil
}

func main() {
	users, err := parseTokens(os.Getenv(TokensEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cli.Main(cli.Program{Auth: handler{users: users}})
}
