package eventlog

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/nats-io/nats.go/jetstream"
)

// Large messages. NATS refuses a message over the server's max_payload (1 MiB by default), and
// states, inputs and stream events routinely pass it, so a body over the inline limit (InlineLimit,
// or half the server's max_payload when that is smaller) is not sent in the message: it is put
// first in an object store of its stream, and the message carries a reference in its place.
// Readers (Subscribe, Load, Tail, DecodeBody) fetch it and hand out the events as if they had
// been inline.
//
//   - Atomicity: the object is stored before the message that references it, so a crash in
//     between, or an append the stream refuses (a conflict), leaves at most an object nothing
//     references (disk space, never a dangling reference). Objects are never overwritten: each
//     has a fresh ULID name.
//   - Replay: the objects of a stream's messages are kept as long as its messages (the runtime
//     stream's forever; the expiring streams' a margin longer than their messages), so a rebuild
//     of the projections resolves every reference.
//   - Replicas: the buckets have the streams' replica count (--nats-replicas).
//
// A reference is the byte frameRef, then the bucket and the object's name (each a uvarint
// length and its bytes) and the body's size (uvarint). A JSON text never starts with this byte.
const frameRef = 0x02

// InlineLimit is the largest message body sent inline: larger ones go to the object store by
// reference. It leaves room under NATS's default 1 MiB max_payload for headers.
const InlineLimit = 512 << 10

// blobChunk is the chunk size of stored bodies: large chunks, fewer messages per body.
const blobChunk = 256 << 10

// blobAgeMargin is how much longer than its stream's messages an object of an expiring stream
// is kept: it is stored before its message.
const blobAgeMargin = 10 * time.Minute

// blobTimeout bounds a put or get without a deadline of its own.
const blobTimeout = 2 * time.Minute

// BlobBucket is the object store holding the large bodies of stream.
func BlobBucket(stream string) string { return stream + "_BLOBS" }

// BlobRef names a body stored in an object store: its bucket, name and size in bytes.
type BlobRef struct {
	Bucket string
	Name   string
	Size   int
}

// AppendBlobRef appends the encoded form of r to b (without the frameRef byte).
func AppendBlobRef(b []byte, r BlobRef) []byte {
	b = binary.AppendUvarint(b, uint64(len(r.Bucket)))
	b = append(b, r.Bucket...)
	b = binary.AppendUvarint(b, uint64(len(r.Name)))
	b = append(b, r.Name...)
	return binary.AppendUvarint(b, uint64(r.Size))
}

// ParseBlobRef reads what AppendBlobRef wrote.
func ParseBlobRef(b []byte) (BlobRef, error) {
	var r BlobRef
	for _, s := range []*string{&r.Bucket, &r.Name} {
		l, n := binary.Uvarint(b)
		if n <= 0 || l > uint64(len(b)-n) {
			return BlobRef{}, errors.New("eventlog: truncated blob reference")
		}
		*s, b = string(b[n:n+int(l)]), b[n+int(l):]
	}
	size, n := binary.Uvarint(b)
	if n <= 0 || n != len(b) || size > 1<<40 {
		return BlobRef{}, errors.New("eventlog: malformed blob reference")
	}
	r.Size = int(size)
	return r, nil
}

// inlineLimit is the largest body this connection sends inline.
func (l *Log) inlineLimit() int {
	limit := InlineLimit
	if mp := l.nc.MaxPayload(); mp > 0 && int(mp/2) < limit {
		limit = int(mp / 2)
	}
	return limit
}

// Oversized reports whether body is too large to be sent inline in a message.
func (l *Log) Oversized(body []byte) bool { return len(body) > l.inlineLimit() }

// blobConfig is the object store of stream's large bodies.
func (l *Log) blobConfig(stream string) jetstream.ObjectStoreConfig {
	cfg := jetstream.ObjectStoreConfig{
		Bucket:      BlobBucket(stream),
		Description: "jetgraph: message bodies of " + stream + " too large for a message",
		Storage:     jetstream.FileStorage,
		Replicas:    l.cfg.Replicas,
	}
	switch stream {
	case TraceStream:
		if age := l.cfg.traceMaxAge(); age > 0 {
			cfg.TTL = age + blobAgeMargin
		}
	case OutputStream:
		cfg.TTL = l.cfg.outputMaxAge() + blobAgeMargin
	}
	return cfg
}

// blobStore returns the bucket of stream's large bodies, creating it on first use.
func (l *Log) blobStore(ctx context.Context, stream string) (jetstream.ObjectStore, error) {
	l.blobsMu.Lock()
	defer l.blobsMu.Unlock()
	if obs, ok := l.blobs[stream]; ok {
		return obs, nil
	}
	obs, err := l.bjs.CreateOrUpdateObjectStore(ctx, l.blobConfig(stream))
	if err != nil {
		return nil, fmt.Errorf("eventlog: object store %s: %w", BlobBucket(stream), err)
	}
	l.blobs[stream] = obs
	return obs, nil
}

// bucketStream is the stream whose bodies bucket holds.
func bucketStream(bucket string) (string, bool) {
	for s := range streamKinds {
		if BlobBucket(s) == bucket {
			return s, true
		}
	}
	return "", false
}

// PutBlob stores body in the object store of stream under a new name and returns its reference.
func (l *Log) PutBlob(ctx context.Context, stream string, body []byte) (BlobRef, error) {
	ctx, cancel := withDefaultTimeout(ctx, blobTimeout)
	defer cancel()
	obs, err := l.blobStore(ctx, stream)
	if err != nil {
		return BlobRef{}, err
	}
	ref := BlobRef{Bucket: BlobBucket(stream), Name: NewID(time.Now()), Size: len(body)}
	meta := jetstream.ObjectMeta{Name: ref.Name, Opts: &jetstream.ObjectMetaOptions{ChunkSize: blobChunk}}
	if _, err := obs.Put(ctx, meta, bytes.NewReader(body)); err != nil {
		return BlobRef{}, fmt.Errorf("eventlog: store a %d-byte body in %s: %w", len(body), ref.Bucket, err)
	}
	return ref, nil
}

// GetBlob returns the body r names, checked against the digest the object store keeps.
func (l *Log) GetBlob(ctx context.Context, r BlobRef) ([]byte, error) {
	stream, ok := bucketStream(r.Bucket)
	if !ok {
		return nil, fmt.Errorf("eventlog: blob reference to unknown bucket %q", r.Bucket)
	}
	ctx, cancel := withDefaultTimeout(ctx, blobTimeout)
	defer cancel()
	obs, err := l.blobStore(ctx, stream)
	if err != nil {
		return nil, err
	}
	res, err := obs.Get(ctx, r.Name)
	if err != nil {
		return nil, fmt.Errorf("eventlog: get body %s/%s: %w", r.Bucket, r.Name, err)
	}
	defer res.Close()
	body := make([]byte, r.Size)
	if _, err := io.ReadFull(res, body); err != nil {
		return nil, fmt.Errorf("eventlog: read body %s/%s: %w", r.Bucket, r.Name, err)
	}
	// Reading on to the end makes the object store check the digest.
	var one [1]byte
	if n, err := res.Read(one[:]); n != 0 || !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("eventlog: read body %s/%s: not %d bytes as referenced (%v)", r.Bucket, r.Name, r.Size, err)
	}
	return body, nil
}

// getBlobRetrying is GetBlob retried while ctx lasts (at most blobTimeout): a reference is
// never dangling, so a failure is the connection's and passes.
func (l *Log) getBlobRetrying(ctx context.Context, r BlobRef) ([]byte, error) {
	ctx, cancel := withDefaultTimeout(ctx, blobTimeout)
	defer cancel()
	var body []byte
	err := Retry(ctx, func() error {
		var err error
		if body, err = l.GetBlob(ctx, r); err != nil {
			l.log.Warn("eventlog: reading a stored body failed; retrying", "bucket", r.Bucket, "name", r.Name, "err", err)
		}
		return err
	})
	return body, err
}

// Retry calls f until it succeeds, ctx ends or f finds no object (ErrNoObject),
// with a backoff from 50 ms to 2 s between calls, and returns f's last error: for reads of
// objects that exist, whose failures (a timeout on a loaded server) pass.
func Retry(ctx context.Context, f func() error) error {
	wait := 50 * time.Millisecond
	for {
		err := f()
		if err == nil || ctx.Err() != nil || errors.Is(err, ErrNoObject) || errors.Is(err, jetstream.ErrObjectNotFound) {
			return err
		}
		if engine.Sleep(ctx, wait) != nil {
			return err
		}
		wait = min(2*wait, 2*time.Second)
	}
}

// storeLarge returns body as it is, or, when it is too large for a message, a reference to it
// stored first in the object store of kind's stream.
func (l *Log) storeLarge(ctx context.Context, kind string, body []byte) ([]byte, error) {
	if !l.Oversized(body) {
		return body, nil
	}
	stream, err := StreamOf(kind)
	if err != nil {
		return nil, err
	}
	ref, err := l.PutBlob(ctx, stream, body)
	if err != nil {
		return nil, err
	}
	return AppendBlobRef([]byte{frameRef}, ref), nil
}

// DecodeBody is DecodeMessage for any stored body, a reference included: it fetches the body a
// reference names.
func (l *Log) DecodeBody(ctx context.Context, body []byte) ([]Event, error) {
	if len(body) == 0 || body[0] != frameRef {
		return DecodeMessage(body)
	}
	r, err := ParseBlobRef(body[1:])
	if err != nil {
		return nil, err
	}
	full, err := l.getBlobRetrying(ctx, r)
	if err != nil {
		return nil, err
	}
	if len(full) > 0 && full[0] == frameRef {
		return nil, errors.New("eventlog: a stored body refers to another")
	}
	return DecodeMessage(full)
}

// withDefaultTimeout bounds ctx by d when it has no deadline.
func withDefaultTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, d)
}
