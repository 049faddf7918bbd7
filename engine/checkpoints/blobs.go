package checkpoints

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/eventlog"
)

// blobCacheBytes bounds the values a blobStore keeps in memory. Objects are named by their
// digest and never change, so a cached value is never stale.
const blobCacheBytes = 64 << 20

// getTimeout bounds the tries to read a value.
const getTimeout = time.Minute

// objectStore is what the saver needs of an object store bucket (eventlog.Objects gives it).
type objectStore interface {
	Put(ctx context.Context, name string, data []byte) error
	Get(ctx context.Context, name string) ([]byte, error)
	Info(ctx context.Context, name string) (eventlog.ObjectInfo, error)
}

// blobStore puts and gets values in the BlobBucket object store, which it creates on first use.
type blobStore struct {
	log *eventlog.Log

	mu  sync.Mutex
	obs objectStore

	cacheMu sync.Mutex
	cache   map[string][]byte
	order   []string // oldest first
	size    int
}

func newBlobStore(l *eventlog.Log) *blobStore {
	return &blobStore{log: l, cache: map[string][]byte{}}
}

func (b *blobStore) bucket(ctx context.Context) (objectStore, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.obs == nil {
		obs, err := b.log.OpenObjects(ctx, BlobBucket, 0)
		if err != nil {
			return nil, err
		}
		b.obs = obs
	}
	return b.obs, nil
}

// put stores the objects that are not in the store yet.
func (b *blobStore) put(ctx context.Context, objs []Object) error {
	for _, o := range objs {
		if b.cached(o.Digest) != nil {
			continue // cached only once it is known to be stored
		}
		obs, err := b.bucket(ctx)
		if err != nil {
			return err
		}
		_, err = obs.Info(ctx, o.Digest)
		switch {
		case err == nil:
		case errors.Is(err, eventlog.ErrNoObject):
			if err := obs.Put(ctx, o.Digest, o.Data); err != nil {
				return fmt.Errorf("checkpoints: put blob %s: %w", o.Digest, err)
			}
		default:
			return fmt.Errorf("checkpoints: blob %s: %w", o.Digest, err)
		}
		b.remember(o.Digest, o.Data)
	}
	return nil
}

// get returns a copy of the value named digest, checking it against its digest.
func (b *blobStore) get(ctx context.Context, digest string) ([]byte, error) {
	if v := b.cached(digest); v != nil {
		return bytes.Clone(v), nil
	}
	obs, err := b.bucket(ctx)
	if err != nil {
		return nil, err
	}
	// The object exists (it was stored before the event naming it): a failure to read it is
	// the connection's (a timeout on a loaded server), tried again for up to getTimeout.
	rctx, cancel := context.WithTimeout(ctx, getTimeout)
	defer cancel()
	var data []byte
	err = eventlog.Retry(rctx, func() error {
		data, err = obs.Get(rctx, digest)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("checkpoints: get blob %s: %w", digest, err)
	}
	if engine.BlobDigest(data) != digest {
		return nil, fmt.Errorf("checkpoints: blob %s: content does not match its digest", digest)
	}
	b.remember(digest, data)
	return bytes.Clone(data), nil
}

func (b *blobStore) cached(digest string) []byte {
	b.cacheMu.Lock()
	defer b.cacheMu.Unlock()
	return b.cache[digest]
}

// remember caches data, dropping the oldest values beyond blobCacheBytes.
func (b *blobStore) remember(digest string, data []byte) {
	if len(data) > blobCacheBytes/4 {
		return
	}
	b.cacheMu.Lock()
	defer b.cacheMu.Unlock()
	if _, ok := b.cache[digest]; ok {
		return
	}
	b.cache[digest] = bytes.Clone(data)
	b.order = append(b.order, digest)
	b.size += len(data)
	for b.size > blobCacheBytes {
		old := b.order[0]
		b.order = b.order[1:]
		b.size -= len(b.cache[old])
		delete(b.cache, old)
	}
}
