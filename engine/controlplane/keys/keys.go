// Package keys is the control plane's API keys and tenants: a key maps to a tenant (a UUID
// derived from the tenant's name) and is stored as its SHA-256 only, so that neither the log
// nor the projection holds a key that works. A key is 32 random bytes: far too much entropy
// for its hash to be reversed, which is why a plain SHA-256 (no salt, no stretching) is enough
// and lets a request's key be looked up by its hash.
package keys

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/jetgraph/jetgraph/engine"
	cp "github.com/jetgraph/jetgraph/engine/controlplane"
	"github.com/jetgraph/jetgraph/eventlog"
)

// Prefix starts every key jetgraph makes, so that a key is recognised in a leak scan.
const Prefix = "jgk_"

// AdminTenant is the tenant name of the admin key made on first start.
const AdminTenant = "default"

// tenantNamespace derives tenant ids from tenant names (UUIDv5).
var tenantNamespace = uuid.MustParse("3c9a0d7e-5b0f-4f4e-8a55-0c9f1d2e7b11")

// TenantID is the id of the tenant of that name.
func TenantID(name string) string { return uuid.NewSHA1(tenantNamespace, []byte(name)).String() }

// Hash is what is stored of a key.
func Hash(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// Reader is the projection's keys.
type Reader interface {
	Key(hash string) (cp.KeyRecord, bool, error)
	Keys() ([]cp.KeyRecord, error)
}

// Service creates, checks and revokes keys.
type Service struct {
	log  cp.Log
	proj cp.Projector
	view Reader
}

// New builds the service.
func New(log cp.Log, proj cp.Projector, view Reader) *Service {
	return &Service{log: log, proj: proj, view: view}
}

// commitWait bounds how long a command waits for the projection.
const commitWait = 10 * time.Second

// Create makes a key for the tenant named tenantName and returns it in clear text: the only
// time it is ever seen. plain, when not empty, is the key to store instead of a new one
// (JETGRAPH_ADMIN_KEY).
func (s *Service) Create(ctx context.Context, tenantName string, admin bool, plain string) (string, cp.KeyRecord, error) {
	const op = "keys.create"
	tenantName = strings.TrimSpace(tenantName)
	if tenantName == "" || !eventlog.ValidToken(tenantName) {
		return "", cp.KeyRecord{}, engine.E(engine.Op(op), engine.Invalid, "a tenant name is printable, without spaces or dots")
	}
	if plain == "" {
		var b [32]byte
		if _, err := rand.Read(b[:]); err != nil {
			return "", cp.KeyRecord{}, engine.E(engine.Op(op), err)
		}
		plain = Prefix + base64.RawURLEncoding.EncodeToString(b[:])
	} else if len(plain) < 16 {
		return "", cp.KeyRecord{}, engine.E(engine.Op(op), engine.Invalid, "a key has at least 16 characters")
	}
	data := cp.KeyData{ID: uuid.NewString(), Hash: Hash(plain), Prefix: plain[:min(len(plain), 8)],
		TenantID: TenantID(tenantName), TenantName: tenantName, Admin: admin}
	if err := s.append(ctx, op, data.ID, cp.KeyCreated, data); err != nil {
		return "", cp.KeyRecord{}, err
	}
	rec, _, err := s.view.Key(data.Hash)
	return plain, rec, err
}

func (s *Service) append(ctx context.Context, op, id, typ string, data any) error {
	e, err := eventlog.New(eventlog.Aggregate{Kind: cp.KeyKind, Tenant: eventlog.DefaultTenant, ID: id}, typ, data)
	if err != nil {
		return engine.E(engine.Op(op), err)
	}
	return cp.Commit(ctx, s.log, s.proj, op, eventlog.Any, e)
}

// EnsureAdmin makes sure an admin key exists. With plain (JETGRAPH_ADMIN_KEY) it stores that
// key unless it is stored already, and returns "". Without, it makes a key when there is no
// admin key yet and returns it (to be printed once), else "".
func (s *Service) EnsureAdmin(ctx context.Context, plain string) (string, error) {
	if err := s.catchUp(ctx); err != nil {
		return "", err
	}
	if plain != "" {
		if _, ok, err := s.view.Key(Hash(plain)); err != nil || ok {
			return "", err
		}
		_, _, err := s.Create(ctx, AdminTenant, true, plain)
		return "", err
	}
	all, err := s.view.Keys()
	if err != nil {
		return "", err
	}
	for _, k := range all {
		if k.Admin && !k.Revoked {
			return "", nil
		}
	}
	key, _, err := s.Create(ctx, AdminTenant, true, "")
	return key, err
}

func (s *Service) catchUp(ctx context.Context) error {
	cctx, cancel := context.WithTimeout(ctx, commitWait)
	defer cancel()
	return s.proj.CatchUp(cctx)
}

// Authenticate returns the tenant a request acts for: its key's, or with tenantHeader
// (X-Tenant-Id) the one it names, which only an admin key may choose freely. A missing,
// unknown or revoked key is Unauthorized.
func (s *Service) Authenticate(ctx context.Context, key, tenantHeader string) (string, error) {
	const op = "keys.authenticate"
	if key == "" {
		return "", engine.E(engine.Op(op), engine.Unauthorized, "Missing X-Api-Key header.")
	}
	rec, ok, err := s.view.Key(Hash(key))
	if err != nil {
		return "", engine.E(engine.Op(op), err)
	}
	if !ok {
		// A key made a moment ago on another process: look again with the log as of now.
		if err := s.catchUp(ctx); err == nil {
			rec, ok, err = s.view.Key(Hash(key))
		}
		if err != nil {
			return "", engine.E(engine.Op(op), err)
		}
	}
	if !ok || rec.Revoked {
		return "", engine.E(engine.Op(op), engine.Unauthorized, "Invalid API key.")
	}
	if tenantHeader == "" || tenantHeader == rec.TenantID {
		return rec.TenantID, nil
	}
	u, err := uuid.Parse(tenantHeader)
	if err != nil {
		return "", engine.E(engine.Op(op), engine.Invalid, []engine.FieldError{{Loc: []any{"header", "x-tenant-id"}, Msg: "Input should be a valid UUID", Type: "uuid_parsing"}})
	}
	if !rec.Admin {
		return "", engine.E(engine.Op(op), engine.Unauthorized, fmt.Sprintf("This API key may not act for tenant %s.", u))
	}
	return u.String(), nil
}

// List returns every key (hashes and prefixes, never a key), revoked ones included.
func (s *Service) List(ctx context.Context) ([]cp.KeyRecord, error) {
	if err := s.catchUp(ctx); err != nil {
		return nil, engine.E(engine.Op("keys.list"), engine.Unavailable, err)
	}
	return s.view.Keys()
}

// Revoke makes a key unknown from then on.
func (s *Service) Revoke(ctx context.Context, id string) error {
	const op = "keys.revoke"
	all, err := s.List(ctx)
	if err != nil {
		return err
	}
	for _, k := range all {
		if k.ID == id && !k.Revoked {
			return s.append(ctx, op, id, cp.KeyRevoked, struct{}{})
		}
	}
	return engine.E(engine.Op(op), engine.NotFound, fmt.Sprintf("Key %s not found (or revoked already).", id))
}
