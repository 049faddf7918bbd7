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
// unknown or revoked key is Unauthorized; a key naming a tenant it may not act for is
// Forbidden; a tenant header that is no UUID is Invalid.
func (s *Service) Authenticate(ctx context.Context, key, tenantHeader string) (string, error) {
	const op = "keys.authenticate"
	if key == "" {
		return "", engine.E(engine.Op(op), engine.Unauthorized, "Missing API key: send it as X-Api-Key or as Authorization: Bearer <key>.")
	}
	rec, ok, err := s.lookup(ctx, op, key, true)
	if err != nil {
		return "", err
	}
	if !ok || rec.Revoked {
		return "", engine.E(engine.Op(op), engine.Unauthorized, "Invalid API key.")
	}
	if rec.DeploymentID != "" {
		return "", engine.E(engine.Op(op), engine.Unauthorized, "This API key only sends a deployment's traces (/tracing).")
	}
	return actFor(op, rec, tenantHeader)
}

// actFor is the tenant a valid key acts for: its own, or with tenantHeader the one it names,
// which only an admin key may choose freely. The header is parsed whatever the key, and the
// tenant returned is always the UUID's canonical form: it names NATS subjects and bbolt keys,
// so nothing of the header's own spelling goes further.
func actFor(op string, rec cp.KeyRecord, tenantHeader string) (string, error) {
	if tenantHeader == "" {
		return rec.TenantID, nil
	}
	u, err := uuid.Parse(tenantHeader)
	if err != nil || len(tenantHeader) != len(u.String()) {
		return "", engine.E(engine.Op(op), engine.Invalid, []engine.FieldError{{Loc: []any{"header", "x-tenant-id"}, Msg: "Input should be a valid UUID", Type: "uuid_parsing"}})
	}
	tenant := u.String()
	if tenant == rec.TenantID || rec.Admin {
		return tenant, nil
	}
	return "", engine.E(engine.Op(op), engine.Forbidden,
		fmt.Sprintf("This API key belongs to tenant %s and may not act for tenant %s (X-Tenant-Id): only an admin key may.", rec.TenantID, tenant))
}

// lookup finds a key's record by its hash; when it is not in the projection and again is set,
// it looks once more with the log as of now (a key made a moment ago on another process).
func (s *Service) lookup(ctx context.Context, op, key string, again bool) (cp.KeyRecord, bool, error) {
	rec, ok, err := s.view.Key(Hash(key))
	if err == nil && !ok && again {
		if err = s.catchUp(ctx); err == nil {
			rec, ok, err = s.view.Key(Hash(key))
		}
	}
	if err != nil {
		return cp.KeyRecord{}, false, engine.E(engine.Op(op), err)
	}
	return rec, ok, nil
}

// ResolveKey is Authenticate for the control plane's tracing API (tracing.KeyResolver): every
// valid key, a deployment's included, acts for its tenant (an admin key for the X-Tenant-Id it
// names). known is false for a key that is not one of these keys and has not their form (any
// key of a single-user tracing client); a revoked key, or an unknown one starting with Prefix,
// is Unauthorized.
func (s *Service) ResolveKey(ctx context.Context, key, tenantHeader string) (string, bool, error) {
	const op = "keys.resolve"
	rec, ok, err := s.lookup(ctx, op, key, strings.HasPrefix(key, Prefix))
	switch {
	case err != nil:
		return "", false, err
	case ok && rec.Revoked, !ok && strings.HasPrefix(key, Prefix):
		return "", false, engine.E(engine.Op(op), engine.Unauthorized, "Invalid API key.")
	case !ok:
		return "", false, nil
	}
	tenant, err := actFor(op, rec, tenantHeader)
	return tenant, err == nil, err
}

// MintDeploymentKey makes a key of tenant (its id) scoped to a deployment, for the processes
// holder runs (see KeyData.Holder), with which they send their traces, and returns it in clear
// text (its hash alone is stored): the caller gives it to the processes and logs it nowhere.
func (s *Service) MintDeploymentKey(ctx context.Context, tenantID, deploymentID, holder string) (string, error) {
	const op = "keys.mint_deployment_key"
	if tenantID == "" || deploymentID == "" {
		return "", engine.E(engine.Op(op), engine.Invalid, "a deployment key needs a tenant and a deployment")
	}
	if err := s.catchUp(ctx); err != nil {
		return "", engine.E(engine.Op(op), engine.Unavailable, err)
	}
	all, err := s.view.Keys()
	if err != nil {
		return "", engine.E(engine.Op(op), err)
	}
	name := ""
	for _, k := range all {
		if k.TenantID == tenantID && k.TenantName != "" {
			name = k.TenantName
		}
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", engine.E(engine.Op(op), err)
	}
	plain := Prefix + base64.RawURLEncoding.EncodeToString(b[:])
	data := cp.KeyData{ID: uuid.NewString(), Hash: Hash(plain), Prefix: plain[:8], TenantID: tenantID,
		TenantName: name, DeploymentID: deploymentID, Holder: holder}
	if err := s.append(ctx, op, data.ID, cp.KeyCreated, data); err != nil {
		return "", err
	}
	return plain, nil
}

// DeploymentKeyValid reports whether key is a live key of the deployment.
func (s *Service) DeploymentKeyValid(ctx context.Context, key, deploymentID string) (bool, error) {
	rec, ok, err := s.lookup(ctx, "keys.deployment_key_valid", key, true)
	return ok && !rec.Revoked && rec.DeploymentID == deploymentID, err
}

// RevokeDeploymentKeys revokes every key of the deployment minted for holder ("": for any)
// but keep (a key in clear text, "" for none); none left is no error.
func (s *Service) RevokeDeploymentKeys(ctx context.Context, deploymentID, holder, keep string) error {
	const op = "keys.revoke_deployment_keys"
	all, err := s.List(ctx)
	if err != nil {
		return err
	}
	kept := ""
	if keep != "" {
		kept = Hash(keep)
	}
	for _, k := range all {
		if k.DeploymentID == deploymentID && deploymentID != "" && !k.Revoked && k.Hash != kept &&
			(holder == "" || k.Holder == holder) {
			if err := s.append(ctx, op, k.ID, cp.KeyRevoked, struct{}{}); err != nil {
				return err
			}
		}
	}
	return nil
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

// RuntimeUser is the user an API key proves to the runtime API (authn.KeyChecker): its
// tenant, by name, with AdminPermission for an admin key. A deployment's trace key proves
// nobody here. Only a key of jetgraph's form is looked for again in the log when the
// projection lacks it, so that random keys cost a read, not a catch-up.
func (s *Service) RuntimeUser(ctx context.Context, key string) (engine.User, error) {
	const op = "keys.runtime_user"
	rec, ok, err := s.lookup(ctx, op, key, strings.HasPrefix(key, Prefix))
	if err != nil {
		return engine.User{}, err
	}
	if !ok || rec.Revoked {
		return engine.User{}, engine.E(engine.Op(op), engine.Unauthorized, "Invalid API key.")
	}
	if rec.DeploymentID != "" {
		return engine.User{}, engine.E(engine.Op(op), engine.Unauthorized, "This API key only sends a deployment's traces (/tracing).")
	}
	u := engine.User{Identity: rec.TenantName, Fields: map[string]any{"tenant_id": rec.TenantID, "key_id": rec.ID}}
	if u.Identity == "" {
		u.Identity = rec.TenantID
	}
	if rec.Admin {
		u.Permissions = []string{engine.AdminPermission}
	}
	return u, nil
}
