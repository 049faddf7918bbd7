package eventlog_test

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
)

// TestObjects checks an object store bucket on real JetStream: objects larger than a message
// round-trip, a missing one is ErrNoObject for every reader, and reopening the bucket keeps
// what it holds.
func TestObjects(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	l := eventlogtest.Open(t)
	objs, err := l.OpenObjects(ctx, "TEST_OBJECTS", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte("0123456789"), 300_000) // 3 MB: several chunks, past max_payload
	if err := objs.Put(ctx, "a/big", big); err != nil {
		t.Fatal(err)
	}
	if err := objs.Put(ctx, "b", []byte("small")); err != nil {
		t.Fatal(err)
	}
	again, err := l.OpenObjects(ctx, "TEST_OBJECTS", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := again.Get(ctx, "a/big"); err != nil || !bytes.Equal(got, big) {
		t.Fatalf("Get: %d bytes, %v", len(got), err)
	}
	if info, err := again.Info(ctx, "a/big"); err != nil || info.Size != uint64(len(big)) || time.Since(info.ModTime) > time.Hour {
		t.Fatalf("Info: %+v, %v", info, err)
	}
	if names, err := again.List(ctx); err != nil || !slices.Equal(slices.Sorted(slices.Values(names)), []string{"a/big", "b"}) {
		t.Fatalf("List: %v, %v", names, err)
	}
	if err := again.Delete(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{
		"Get deleted":   func() error { _, err := again.Get(ctx, "b"); return err }(),
		"Info deleted":  func() error { _, err := again.Info(ctx, "b"); return err }(),
		"Get missing":   func() error { _, err := again.Get(ctx, "never"); return err }(),
		"Info missing":  func() error { _, err := again.Info(ctx, "never"); return err }(),
		"Delete absent": again.Delete(ctx, "never"),
	} {
		if !errors.Is(err, eventlog.ErrNoObject) {
			t.Errorf("%s: %v, want ErrNoObject", name, err)
		}
	}
	if names, err := again.List(ctx); err != nil || !slices.Equal(names, []string{"a/big"}) {
		t.Fatalf("List after delete: %v, %v", names, err)
	}
}
