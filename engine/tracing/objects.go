package tracing

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/eventlog"
)

// ObjectBucket is the JetStream object store of attachments and oversized run payloads.
const ObjectBucket = "JG_TRACE_OBJECTS"

// objectStore is what Objects needs of an object store bucket (eventlog.Objects gives it).
type objectStore interface {
	Put(ctx context.Context, name string, data []byte) error
	Get(ctx context.Context, name string) ([]byte, error)
	Info(ctx context.Context, name string) (eventlog.ObjectInfo, error)
}

// Objects stores content-addressed blobs in the trace object store. Blobs expire with the
// traces (the bucket's TTL is the trace retention).
type Objects struct {
	obs objectStore
	ttl time.Duration
}

// OpenObjects creates (or updates) the bucket with the log's replicas and a TTL of
// retention (0: eventlog.DefaultTraceRetention; negative: none).
func OpenObjects(ctx context.Context, l *eventlog.Log, retention time.Duration) (*Objects, error) {
	if retention == 0 {
		retention = eventlog.DefaultTraceRetention
	}
	ttl := max(retention, 0)
	var obs *eventlog.Objects
	err := l.Retry(ctx, "object store "+ObjectBucket, func(ctx context.Context) error {
		var err error
		obs, err = l.OpenObjects(ctx, ObjectBucket, ttl)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("tracing: object store %s: %w", ObjectBucket, err)
	}
	return &Objects{obs: obs, ttl: ttl}, nil
}

// Digest is the content address of data: "sha256:<hex>".
func Digest(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// objectName is where tenant's blob of a digest lives: blobs are never shared across tenants.
func objectName(tenant, digest string) string { return tenant + "/" + digest }

// Put stores data for tenant under its digest and returns the digest. A blob already stored is
// not sent again unless it is past half its time to live.
func (o *Objects) Put(ctx context.Context, tenant string, data []byte) (string, error) {
	digest := Digest(data)
	name := objectName(tenant, digest)
	if info, err := o.obs.Info(ctx, name); err == nil && (o.ttl == 0 || time.Since(info.ModTime) < o.ttl/2) {
		return digest, nil
	}
	if err := o.obs.Put(ctx, name, data); err != nil {
		return "", fmt.Errorf("tracing: store blob %s: %w", digest, err)
	}
	return digest, nil
}

// Get returns the blob of an object name.
func (o *Objects) Get(ctx context.Context, name string) ([]byte, error) {
	data, err := o.obs.Get(ctx, name)
	if errors.Is(err, eventlog.ErrNoObject) {
		return nil, fmt.Errorf("tracing: blob %s: not found (expired?): %w", name, err)
	}
	return data, err
}

// Attachment returns tenant's blob of a digest (an attachment's, as a run's attachments
// describe it); an error wrapping eventlog.ErrNoObject when it is not stored (expired).
func (o *Objects) Attachment(ctx context.Context, tenant, digest string) ([]byte, error) {
	return o.Get(ctx, objectName(tenant, digest))
}

// Blob returns the blob of the context's tenant with a digest (an attachment's, say).
func (s *Service) Blob(ctx context.Context, digest string) ([]byte, error) {
	data, err := s.objects.Get(ctx, objectName(engine.TenantFrom(ctx), digest))
	if err != nil {
		return nil, engine.E(engine.Op("tracing.blob"), engine.NotFound, fmt.Sprintf("Blob %s not found", digest), err)
	}
	return data, nil
}
