package eventlog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// ErrNoObject is returned (wrapped) when an object store holds no object of the name asked for.
var ErrNoObject = errors.New("eventlog: no such object")

// Objects is an object store bucket: named blobs of any size, chunked into its own stream. Its
// traffic goes on the log's connection for large bodies, so that transfers of tens of megabytes
// never hold up appends and lease renewals behind them.
type Objects struct {
	obs jetstream.ObjectStore
}

// ObjectInfo is what a bucket says of a stored object.
type ObjectInfo struct {
	Size    uint64
	ModTime time.Time
}

// OpenObjects returns the object store bucket, creating it (file storage, the log's replicas) if
// it does not exist yet; its objects expire ttl after they were stored (0: never). Opening an
// existing bucket with the same config changes nothing.
func (l *Log) OpenObjects(ctx context.Context, bucket string, ttl time.Duration) (*Objects, error) {
	obs, err := l.bjs.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{
		Bucket:   bucket,
		Storage:  jetstream.FileStorage,
		Replicas: l.cfg.Replicas,
		TTL:      ttl,
	})
	if err != nil {
		return nil, fmt.Errorf("eventlog: object store %s: %w", bucket, err)
	}
	return &Objects{obs: obs}, nil
}

// notFound wraps a missing object's error with ErrNoObject.
func notFound(err error) error {
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return fmt.Errorf("%w: %w", ErrNoObject, err)
	}
	return err
}

// Put stores data under name, replacing what was there.
func (o *Objects) Put(ctx context.Context, name string, data []byte) error {
	_, err := o.obs.Put(ctx, jetstream.ObjectMeta{Name: name}, bytes.NewReader(data))
	return err
}

// Get returns the object of name, checked against the digest the bucket keeps; an error
// wrapping ErrNoObject when there is none (never stored, deleted or expired).
func (o *Objects) Get(ctx context.Context, name string) ([]byte, error) {
	data, err := o.obs.GetBytes(ctx, name)
	return data, notFound(err)
}

// Info describes the object of name; an error wrapping ErrNoObject when there is none.
func (o *Objects) Info(ctx context.Context, name string) (ObjectInfo, error) {
	info, err := o.obs.GetInfo(ctx, name)
	switch {
	case err != nil:
		return ObjectInfo{}, notFound(err)
	case info.Deleted:
		return ObjectInfo{}, fmt.Errorf("%w: %s deleted", ErrNoObject, name)
	}
	return ObjectInfo{Size: info.Size, ModTime: info.ModTime}, nil
}

// Delete removes the object of name.
func (o *Objects) Delete(ctx context.Context, name string) error {
	return notFound(o.obs.Delete(ctx, name))
}

// List names the objects stored.
func (o *Objects) List(ctx context.Context) ([]string, error) {
	infos, err := o.obs.List(ctx)
	if errors.Is(err, jetstream.ErrNoObjectsFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	names := make([]string, len(infos))
	for i, info := range infos {
		names[i] = info.Name
	}
	return names, nil
}
