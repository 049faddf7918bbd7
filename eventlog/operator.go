package eventlog

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"
)

// Operator makes data namespaces on a NATS cluster that runs in operator mode (decentralised
// JWT authentication with the NATS-based account resolver, `resolver: {type: full}`): each
// namespace is an account of the cluster, signed with the operator's signing key and pushed to
// the resolver through the system account, whose users see only that account's streams and
// subjects. It is what the embedded server's accounts (Log.AddAccount) are on a cluster, which
// cannot be given accounts at run time any other way.
//
// An account's key is derived from the operator key and the account's name, so every process
// holding the operator key finds the same account and can admit users into it: nothing secret
// is stored per namespace, and any process of the cluster can run any deployment.
type Operator struct {
	signer nkeys.KeyPair // the operator's (signing) key: signs the accounts
	seed   []byte        // its seed, the root of the accounts' derived keys
	urls   string        // the cluster, as the namespaces' users connect to it
	sys    *nats.Conn    // a user of the system account: pushes the accounts' JWTs
}

// operatorTimeout bounds one request to the cluster's resolver.
const operatorTimeout = 10 * time.Second

// OpenOperator reads the operator's signing key seed (an "SO..." seed: the operator's own key,
// or better one of its signing keys) from seedFile and connects to urls as the system
// account's user in systemCreds (a NATS credentials file).
func OpenOperator(urls, seedFile, systemCreds string) (*Operator, error) {
	const op = "eventlog: operator"
	raw, err := os.ReadFile(seedFile)
	if err != nil {
		return nil, fmt.Errorf("%s: read the signing key: %w", op, err)
	}
	seed := []byte(strings.TrimSpace(string(raw)))
	kp, err := nkeys.FromSeed(seed)
	if err != nil {
		return nil, fmt.Errorf("%s: the signing key in %s: %w", op, seedFile, err)
	}
	if pub, _ := kp.PublicKey(); !nkeys.IsValidPublicOperatorKey(pub) {
		return nil, fmt.Errorf("%s: %s holds no operator key (an SO... seed)", op, seedFile)
	}
	creds, err := credsOption(systemCreds)
	if err != nil {
		return nil, fmt.Errorf("%s: system account: %w", op, err)
	}
	nc, err := nats.Connect(urls, creds, nats.Name("jetgraph-operator"), nats.MaxReconnects(-1))
	if err != nil {
		return nil, fmt.Errorf("%s: connect as the system account's user: %w", op, err)
	}
	return &Operator{signer: kp, seed: seed, urls: urls, sys: nc}, nil
}

// Close closes the system account's connection.
func (o *Operator) Close() { o.sys.Close() }

// URLs is the cluster's address, as the namespaces' users connect to it.
func (o *Operator) URLs() string { return o.urls }

// accountKey derives account name's key from the operator's seed: the same in every process
// that holds the operator key, and unguessable without it.
func (o *Operator) accountKey(name string) (nkeys.KeyPair, error) {
	mac := hmac.New(sha256.New, o.seed)
	mac.Write([]byte("jetgraph account\x00" + name))
	kp, err := nkeys.FromRawSeed(nkeys.PrefixByteAccount, mac.Sum(nil)[:32])
	if err != nil {
		return nil, fmt.Errorf("eventlog: account %s: derive its key: %w", name, err)
	}
	return kp, nil
}

// AccountKey is the public key of account name (the cluster's name of it, in its monitoring
// and logs).
func (o *Operator) AccountKey(name string) (string, error) {
	kp, err := o.accountKey(name)
	if err != nil {
		return "", err
	}
	return kp.PublicKey()
}

// unlimitedJetStream enables JetStream for an account without limits of its own: the
// cluster's apply.
var unlimitedJetStream = jwt.JetStreamLimits{MemoryStorage: jwt.NoLimit, DiskStorage: jwt.NoLimit,
	Streams: jwt.NoLimit, Consumer: jwt.NoLimit, MaxAckPending: jwt.NoLimit}

// accountClaims are account name's claims: JetStream without limits of its own (the cluster's
// apply), users revoked if they were issued at or before revokeAll (zero: none).
func (o *Operator) accountClaims(name string, jetStream bool, revokeAll time.Time) (*jwt.AccountClaims, nkeys.KeyPair, error) {
	kp, err := o.accountKey(name)
	if err != nil {
		return nil, nil, err
	}
	pub, _ := kp.PublicKey()
	c := jwt.NewAccountClaims(pub)
	c.Name = name
	if jetStream {
		c.Limits.JetStreamLimits = unlimitedJetStream
	}
	if !revokeAll.IsZero() {
		c.RevokeAt(jwt.All, revokeAll)
	}
	return c, kp, nil
}

// push signs c and sends it to the cluster's resolver; every server that answers must have
// taken it.
func (o *Operator) push(ctx context.Context, c *jwt.AccountClaims) error {
	token, err := c.Encode(o.signer)
	if err != nil {
		return fmt.Errorf("eventlog: account %s: sign: %w", c.Name, err)
	}
	ctx, cancel := context.WithTimeout(ctx, operatorTimeout)
	defer cancel()
	msg, err := o.sys.RequestWithContext(ctx, "$SYS.REQ.CLAIMS.UPDATE", []byte(token))
	if err != nil {
		return fmt.Errorf("eventlog: account %s: push to the resolver (is the cluster in operator mode with `resolver: {type: full}`?): %w", c.Name, err)
	}
	var reply struct {
		Error *struct {
			Code        int    `json:"code"`
			Description string `json:"description"`
		} `json:"error"`
	}
	if err := json.Unmarshal(msg.Data, &reply); err != nil {
		return fmt.Errorf("eventlog: account %s: the resolver's answer: %w", c.Name, err)
	}
	if reply.Error != nil {
		return fmt.Errorf("eventlog: account %s: the resolver refused it: %s (%d)", c.Name, reply.Error.Description, reply.Error.Code)
	}
	return nil
}

// ErrAccountRemoved is AddAccount's answer for an account RemoveAccount removed: a process
// that decided to run a deployment just before another deleted it must not bring its account
// back.
var ErrAccountRemoved = errors.New("eventlog: the account was removed")

// AddAccount creates account name on the cluster, with JetStream, or renews it. It is
// idempotent: the account's streams are untouched. A removed account stays removed
// (ErrAccountRemoved).
func (o *Operator) AddAccount(ctx context.Context, name string) error {
	c, kp, err := o.accountClaims(name, true, time.Time{})
	if err != nil {
		return err
	}
	pub, _ := kp.PublicKey()
	lctx, cancel := context.WithTimeout(ctx, operatorTimeout)
	defer cancel()
	msg, err := o.sys.RequestWithContext(lctx, "$SYS.REQ.ACCOUNT."+pub+".CLAIMS.LOOKUP", nil)
	if err != nil {
		return fmt.Errorf("eventlog: account %s: look it up in the resolver (is the cluster in operator mode with `resolver: {type: full}`?): %w", name, err)
	}
	if len(msg.Data) > 0 { // empty: not there yet
		if cur, err := jwt.DecodeAccountClaims(string(msg.Data)); err == nil {
			if _, revoked := cur.Revocations[jwt.All]; revoked {
				return fmt.Errorf("eventlog: add account %s: %w", name, ErrAccountRemoved)
			}
		}
	}
	return o.push(ctx, c)
}

// UserCreds admits a new user into account name and returns its credentials file (user JWT
// and seed, the form --nats-creds takes). The account must have been added.
func (o *Operator) UserCreds(name, user string) ([]byte, error) {
	token, seed, err := o.newUser(name, user)
	if err != nil {
		return nil, err
	}
	creds, err := jwt.FormatUserConfig(token, seed)
	if err != nil {
		return nil, fmt.Errorf("eventlog: account %s: credentials: %w", name, err)
	}
	return creds, nil
}

// newUser signs a new user of account name with the account's key: its JWT and seed.
func (o *Operator) newUser(name, user string) (token string, seed []byte, err error) {
	acc, err := o.accountKey(name)
	if err != nil {
		return "", nil, err
	}
	ukp, err := nkeys.CreateUser()
	if err != nil {
		return "", nil, fmt.Errorf("eventlog: account %s: user key: %w", name, err)
	}
	upub, _ := ukp.PublicKey()
	uc := jwt.NewUserClaims(upub)
	uc.Name = user
	if token, err = uc.Encode(acc); err != nil {
		return "", nil, fmt.Errorf("eventlog: account %s: sign the user: %w", name, err)
	}
	if seed, err = ukp.Seed(); err != nil {
		return "", nil, fmt.Errorf("eventlog: account %s: user key: %w", name, err)
	}
	return token, seed, nil
}

// RemoveAccount deletes every stream of account name (its events, object stores and key-value
// buckets) and leaves the account without JetStream, with every user it had revoked: processes
// still connected to it anywhere in the cluster are cut off first, so none recreates a stream
// behind the deletion. It is idempotent.
func (o *Operator) RemoveAccount(ctx context.Context, name string) error {
	// Users are revoked by their issue time, in whole seconds: the user that deletes the
	// streams is issued a second after the revocation, so that it is not revoked with them.
	revoked := time.Now()
	c, _, err := o.accountClaims(name, true, revoked)
	if err != nil {
		return err
	}
	if err := o.push(ctx, c); err != nil {
		return err
	}
	if err := sleepUntil(ctx, time.Unix(revoked.Unix()+1, 0).Add(50*time.Millisecond)); err != nil {
		return err
	}
	token, useed, err := o.newUser(name, "jetgraph-remove-account")
	if err != nil {
		return err
	}
	nc, err := nats.Connect(o.urls, nats.UserJWTAndSeed(token, string(useed)), nats.Name("jetgraph-remove-account"))
	if err != nil {
		return fmt.Errorf("eventlog: remove account %s: connect: %w", name, err)
	}
	defer nc.Close()
	if err := deleteStreams(ctx, nc); err != nil {
		return fmt.Errorf("eventlog: remove account %s: %w", name, err)
	}
	// No JetStream any more: a process that was not cut off cannot make a stream again.
	c, _, err = o.accountClaims(name, false, revoked)
	if err != nil {
		return err
	}
	return o.push(ctx, c)
}

// deleteStreams deletes every stream nc's account has.
func deleteStreams(ctx context.Context, nc *nats.Conn) error {
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	names := js.StreamNames(ctx)
	var streams []string
	for s := range names.Name() {
		streams = append(streams, s)
	}
	if err := names.Err(); err != nil && !errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount) {
		return fmt.Errorf("list streams: %w", err)
	}
	for _, s := range streams {
		if err := js.DeleteStream(ctx, s); err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
			return fmt.Errorf("delete stream %s: %w", s, err)
		}
	}
	return nil
}

// sleepUntil waits until t or until ctx ends.
func sleepUntil(ctx context.Context, t time.Time) error {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}
