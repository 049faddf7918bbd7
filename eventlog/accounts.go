package eventlog

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

// Accounts of the embedded server (Config.Accounts) are data namespaces for other processes: a
// process admitted into an account sees only that account's streams and subjects, so two
// namespaces never mix however their processes name their streams, and neither sees the log of
// the process that owns the server. The control plane gives each deployment one.

// accountAuth admits clients that prove they hold a known user key: the data folder's key into
// the global account (this process's log), an account's key into that account alone.
//
// With grouped syncs (--sync always, see durable.go) it admits only clients that say they wait
// for the sync rounds (jetgraph processes: their connection names end in syncRoundsName), and
// them only once the rounds are served (ready): a client the server acknowledges an append to
// before it is on disk must know to wait, or it would take the acknowledgement for durability.
type accountAuth struct {
	owner string // the data folder's user, public key
	self  string // this process's own connections, a key made at start and never stored

	grouped bool        // the store is synced in rounds that clients wait for
	ready   atomic.Bool // with grouped: the rounds are served to clients
	log     *slog.Logger
	warned  atomic.Int64 // when a refusal was last logged, Unix nanoseconds

	mu       sync.RWMutex
	users    map[string]*server.Account // by public user key
	imported map[string]bool            // accounts that reach the sync rounds (grouped)
}

// Check verifies the client's signature of the server's nonce with the public key it presents,
// then places it in the account of that key.
func (a *accountAuth) Check(c server.ClientAuthentication) bool {
	o := c.GetOpts()
	if o == nil || o.Nkey == "" {
		return false
	}
	sig, err := base64.RawURLEncoding.DecodeString(o.Sig)
	if err != nil {
		if sig, err = base64.StdEncoding.DecodeString(o.Sig); err != nil {
			return false
		}
	}
	pub, err := nkeys.FromPublicKey(o.Nkey)
	if err != nil || pub.Verify(c.GetNonce(), sig) != nil {
		return false
	}
	if o.Nkey == a.self {
		c.RegisterUser(&server.User{Username: "jetgraph"})
		return true
	}
	if a.grouped && (!a.ready.Load() || !strings.HasSuffix(o.Name, syncRoundsName)) {
		// Once a minute at most: a client that reconnects on its own is refused every time.
		if now := time.Now().UnixNano(); now-a.warned.Load() > int64(time.Minute) {
			a.warned.Store(now)
			a.log.Warn("eventlog: NATS client refused: with --sync always the control plane's NATS listener admits only jetgraph processes, which wait for the store's sync rounds before taking an append as durable; "+
				"serve with --nats-listen for other NATS clients (its server then syncs every write itself)", "client", o.Name, "ready", a.ready.Load())
		}
		return false
	}
	if o.Nkey == a.owner {
		c.RegisterUser(&server.User{Username: "jetgraph"})
		return true
	}
	a.mu.RLock()
	acc := a.users[o.Nkey]
	a.mu.RUnlock()
	if acc == nil {
		return false
	}
	c.RegisterUser(&server.User{Username: o.Nkey, Account: acc})
	return true
}

// admit lets the holder of userKey into acc (nil: forget userKey).
func (a *accountAuth) admit(userKey string, acc *server.Account) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if acc == nil {
		delete(a.users, userKey)
		return
	}
	a.users[userKey] = acc
}

// errNoAccounts is returned by the account methods of a log opened without Config.Accounts.
var errNoAccounts = errors.New("eventlog: accounts need the embedded server with Config.Accounts and Config.Listen")

// AddAccount creates account name on the embedded server, with JetStream (its streams, if the
// server's store already holds them, are recovered), and admits the holder of userKey, a
// public user nkey, into it alone. It is idempotent.
func (l *Log) AddAccount(name, userKey string) error {
	if l.auth == nil {
		return errNoAccounts
	}
	if _, err := nkeys.FromPublicKey(userKey); err != nil || userKey[0] != 'U' {
		return fmt.Errorf("eventlog: add account %s: %q is not a public user key", name, userKey)
	}
	acc, isNew := l.srv.LookupOrRegisterAccount(name)
	if isNew || !acc.JetStreamEnabled() {
		if err := acc.EnableJetStream(nil, nil); err != nil {
			return fmt.Errorf("eventlog: add account %s: jetstream: %w", name, err)
		}
	}
	if err := l.auth.importSyncs(l.srv, acc); err != nil {
		return fmt.Errorf("eventlog: add account %s: %w", name, err)
	}
	l.auth.admit(userKey, acc)
	return nil
}

// importSyncs lets the processes of acc ask for the sync rounds (syncSubject), which this
// process serves in the global account, when the store is synced in rounds.
func (a *accountAuth) importSyncs(srv *server.Server, acc *server.Account) error {
	if !a.grouped {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.imported[acc.Name] {
		return nil
	}
	if err := acc.AddServiceImport(srv.GlobalAccount(), syncSubject, syncSubject); err != nil {
		return fmt.Errorf("import the sync rounds: %w", err)
	}
	a.imported[acc.Name] = true
	return nil
}

// RemoveAccount deletes every stream of account name (its events, object stores and key-value
// buckets) and stops admitting userKey. The account's processes should have stopped first.
func (l *Log) RemoveAccount(ctx context.Context, name, userKey string) error {
	if l.auth == nil {
		return errNoAccounts
	}
	l.auth.admit(userKey, nil)
	acc, err := l.srv.LookupAccount(name)
	if err != nil { // never added in this process's life, nor recovered: nothing to delete
		return nil
	}
	// A key of our own, admitted for the time of the deletion.
	kp, err := nkeys.CreateUser()
	if err != nil {
		return fmt.Errorf("eventlog: remove account %s: %w", name, err)
	}
	pub, _ := kp.PublicKey()
	l.auth.admit(pub, acc)
	defer l.auth.admit(pub, nil)
	nc, err := nats.Connect("", nats.InProcessServer(l.srv), nats.Nkey(pub, kp.Sign), nats.Name("jetgraph-remove-account"+syncRoundsName))
	if err != nil {
		return fmt.Errorf("eventlog: remove account %s: connect: %w", name, err)
	}
	defer nc.Close()
	if err := deleteStreams(ctx, nc); err != nil {
		return fmt.Errorf("eventlog: remove account %s: %w", name, err)
	}
	return nil
}
