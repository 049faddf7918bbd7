package eventlog

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nkeys"
)

// Files InitOperator writes in its folder.
const (
	// OperatorConfigFile is the nats-server configuration: operator mode, the NATS-based
	// account resolver, JetStream.
	OperatorConfigFile = "server.conf"
	// OperatorSigningKeyFile is the operator's signing key (--nats-operator-key): whoever holds
	// it can make accounts on the cluster.
	OperatorSigningKeyFile = "operator-signing.nk"
	// OperatorKeyFile is the operator's own key, which signs the operator (and new signing keys).
	OperatorKeyFile = "operator.nk"
	// SystemCredsFile is a user of the system account (--nats-system-creds): it pushes accounts.
	SystemCredsFile = "system.creds"
	// JetgraphCredsFile is a user of the jetgraph account, where jetgraph's own log lives
	// (--nats-creds).
	JetgraphCredsFile = "jetgraph.creds"
)

// OperatorSetup is what InitOperator made.
type OperatorSetup struct {
	Dir string
	// Listen is the address the server's configuration listens on.
	Listen string
}

// InitOperator writes into dir a NATS operator, its system account and an account for
// jetgraph's own log, with their users' credentials, and a nats-server configuration that
// trusts that operator, resolves accounts with the NATS-based resolver (so jetgraph can push
// deployments' accounts at run time) and listens on listen with JetStream: a development
// stand-in for a production cluster in operator mode, which nsc sets up the same way. Keys and
// credentials are readable by their owner only. A folder that has a configuration already is
// refused, not overwritten.
func InitOperator(dir, listen string) (OperatorSetup, error) {
	const op = "eventlog: init operator"
	conf := filepath.Join(dir, OperatorConfigFile)
	if _, err := os.Stat(conf); err == nil {
		return OperatorSetup{}, fmt.Errorf("%s: %s exists already", op, conf)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return OperatorSetup{}, fmt.Errorf("%s: %w", op, err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return OperatorSetup{}, fmt.Errorf("%s: %w", op, err)
	}
	opKey, _ := nkeys.CreateOperator()
	signKey, _ := nkeys.CreateOperator()
	opPub, _ := opKey.PublicKey()
	signPub, _ := signKey.PublicKey()

	accounts := map[string]string{} // public key -> JWT
	var sysPub string
	users := map[string][]byte{} // file -> credentials
	for _, a := range []struct {
		name, file string
		jetStream  bool
	}{{"SYS", SystemCredsFile, false}, {"JETGRAPH", JetgraphCredsFile, true}} {
		akp, _ := nkeys.CreateAccount()
		apub, _ := akp.PublicKey()
		ac := jwt.NewAccountClaims(apub)
		ac.Name = a.name
		if a.jetStream {
			ac.Limits.JetStreamLimits = unlimitedJetStream
		} else {
			sysPub = apub
		}
		token, err := ac.Encode(signKey)
		if err != nil {
			return OperatorSetup{}, fmt.Errorf("%s: account %s: %w", op, a.name, err)
		}
		accounts[apub] = token
		ukp, _ := nkeys.CreateUser()
		upub, _ := ukp.PublicKey()
		uc := jwt.NewUserClaims(upub)
		uc.Name = a.name + "-user"
		ut, err := uc.Encode(akp)
		if err != nil {
			return OperatorSetup{}, fmt.Errorf("%s: user of %s: %w", op, a.name, err)
		}
		useed, _ := ukp.Seed()
		if users[a.file], err = jwt.FormatUserConfig(ut, useed); err != nil {
			return OperatorSetup{}, fmt.Errorf("%s: user of %s: %w", op, a.name, err)
		}
	}
	oc := jwt.NewOperatorClaims(opPub)
	oc.Name = "jetgraph"
	oc.SigningKeys.Add(signPub)
	oc.SystemAccount = sysPub
	opJWT, err := oc.Encode(opKey)
	if err != nil {
		return OperatorSetup{}, fmt.Errorf("%s: operator: %w", op, err)
	}

	text := "# A NATS server in operator mode for jetgraph, written by `jetgraph nats init`.\n" +
		"# Run it with: go run github.com/nats-io/nats-server/v2 -c " + filepath.Join(abs, OperatorConfigFile) + "\n" +
		"listen: " + strconv.Quote(listen) + "\n" +
		"jetstream: {store_dir: " + strconv.Quote(filepath.Join(abs, "jetstream")) + "}\n" +
		"operator: " + strconv.Quote(opJWT) + "\n" +
		"system_account: " + sysPub + "\n" +
		"resolver: {type: full, dir: " + strconv.Quote(filepath.Join(abs, "accounts")) + ", allow_delete: false, interval: \"2m\", timeout: \"5s\"}\n" +
		"resolver_preload: {\n"
	for pub, token := range accounts {
		text += "  " + pub + ": " + strconv.Quote(token) + "\n"
	}
	text += "}\n"

	opSeed, _ := opKey.Seed()
	signSeed, _ := signKey.Seed()
	files := map[string][]byte{
		OperatorKeyFile:        append(opSeed, '\n'),
		OperatorSigningKeyFile: append(signSeed, '\n'),
		SystemCredsFile:        users[SystemCredsFile],
		JetgraphCredsFile:      users[JetgraphCredsFile],
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), body, 0o600); err != nil {
			return OperatorSetup{}, fmt.Errorf("%s: %w", op, err)
		}
	}
	// The configuration last: a folder that has one is complete.
	if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
		return OperatorSetup{}, fmt.Errorf("%s: %w", op, err)
	}
	return OperatorSetup{Dir: abs, Listen: listen}, nil
}
