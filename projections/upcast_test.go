package projections_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
	"github.com/jetgraph/jetgraph/projections"
)

// noteAdded is a thread event type of this test, which moved: version 1 was {"text": "..."},
// version 2 is {"note": {"body": "...", "format": "..."}}.
const noteAdded = "test_note_added"

// noteV2 is the form of noteAdded this build folds.
type noteV2 struct {
	Note struct {
		Body   string `json:"body"`
		Format string `json:"format"`
	} `json:"note"`
}

// noteV1to2 is the upcaster of noteAdded from version 1: plain text became a note.
func noteV1to2(data json.RawMessage) (json.RawMessage, error) {
	var v1 struct {
		Text *string `json:"text"`
	}
	if err := json.Unmarshal(data, &v1); err != nil || v1.Text == nil {
		return nil, fmt.Errorf("not a version 1 note: %s", data)
	}
	var v2 noteV2
	v2.Note.Body, v2.Note.Format = *v1.Text, "text"
	return json.Marshal(v2)
}

// notes folds noteAdded in its version 2 form only (decoding it ahead, as a Preparer), keeping
// each thread's note as "format:body".
type notes struct{}

func (notes) Name() string      { return "notes" }
func (notes) Buckets() []string { return []string{"notes"} }

func (n notes) Apply(tx *bbolt.Tx, e eventlog.Event) error {
	return n.ApplyPrepared(tx, e, n.Prepare(e))
}

func (notes) Prepare(e eventlog.Event) any {
	if e.Type != noteAdded {
		return nil
	}
	var v noteV2
	if err := json.Unmarshal(e.Data, &v); err != nil {
		return err
	}
	if e.Version != 2 || v.Note.Body == "" {
		return fmt.Errorf("version %d, %s: not the form this build folds", e.Version, e.Data)
	}
	return v
}

func (notes) ApplyPrepared(tx *bbolt.Tx, e eventlog.Event, prepared any) error {
	switch v := prepared.(type) {
	case error:
		return v
	case noteV2:
		return tx.Bucket([]byte("notes")).Put([]byte(e.Aggregate.ID), []byte(v.Note.Format+":"+v.Note.Body))
	}
	return nil
}

// noteUpcasts is the registry of a build in which noteAdded moved to version 2.
func noteUpcasts() *eventlog.Upcasters {
	u := eventlog.NewUpcasters()
	u.Register(noteAdded, 1, noteV1to2)
	return u
}

// appendNote appends a noteAdded event of version v with data to thread id.
func appendNote(t *testing.T, l *eventlog.Log, id string, v int, data string) uint64 {
	t.Helper()
	e := eventlog.Event{ID: eventlog.NewID(time.Now()), Type: noteAdded, Version: v, Time: time.Now().UTC(),
		Aggregate: eventlog.Aggregate{Kind: "thread", Tenant: eventlog.DefaultTenant, ID: id}, Data: json.RawMessage(data)}
	seq, err := l.Append(context.Background(), e, eventlog.Any)
	if err != nil {
		t.Fatal(err)
	}
	return seq
}

func storedNotes(t *testing.T, db *projections.DB) map[string]string {
	t.Helper()
	out := map[string]string{}
	_ = db.View(func(tx *bbolt.Tx) error {
		return tx.Bucket([]byte("notes")).ForEach(func(k, v []byte) error {
			out[string(k)] = string(v)
			return nil
		})
	})
	return out
}

// TestProjectorFoldsAnOlderVersion: an event appended in version 1 of its type is folded,
// after the type moved to version 2, through the registered upcaster, as the events written in
// version 2 are; the log keeps it as it was written.
func TestProjectorFoldsAnOlderVersion(t *testing.T) {
	l := eventlogtest.Open(t)
	appendNote(t, l, "a", 1, `{"text":"written in v1"}`)
	last := appendNote(t, l, "b", 2, `{"note":{"body":"written in v2","format":"markdown"}}`)

	db := openDB(t, filepath.Join(t.TempDir(), "p.db"))
	p := projections.NewProjector(db, l, eventlog.RuntimeStream, notes{})
	p.Upcasters = noteUpcasts()
	run(t, p)
	waitFor(t, p, last)
	want := map[string]string{"a": "text:written in v1", "b": "markdown:written in v2"}
	if got := storedNotes(t, db); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("folded %v, want %v", got, want)
	}
	stored, err := l.Load(context.Background(), eventlog.Aggregate{Kind: "thread", Tenant: eventlog.DefaultTenant, ID: "a"})
	if err != nil || len(stored) != 1 || stored[0].Version != 1 || string(stored[0].Data) != `{"text":"written in v1"}` {
		t.Fatalf("the log was rewritten: %+v %v", stored, err)
	}
}

// TestProjectorHaltsAtAnUnknownVersion: an event of a version newer than the build (or one its
// upcaster refuses) halts the projection right before it, naming it: never skipped.
func TestProjectorHaltsAtAnUnknownVersion(t *testing.T) {
	tests := []struct {
		name, data string
		v          int
		want       string
	}{
		{"a newer version", `{"note":{"body":"x"},"lang":"en"}`, 3, eventlog.ErrUnknownVersion.Error()},
		{"an upcaster refusal", `{"body":"not v1"}`, 1, "not a version 1 note"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := eventlogtest.Open(t)
			before := appendNote(t, l, "a", 1, `{"text":"fine"}`)
			bad := appendNote(t, l, "b", tt.v, tt.data)
			last := appendNote(t, l, "c", 2, `{"note":{"body":"after","format":"text"}}`)
			db := openDB(t, filepath.Join(t.TempDir(), "p.db"))
			p := projections.NewProjector(db, l, eventlog.RuntimeStream, notes{})
			p.Upcasters = noteUpcasts()
			run(t, p)
			wait, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if err := p.WaitFor(wait, last); err == nil || wait.Err() != nil || p.Halted() == nil {
				t.Fatalf("waiting past the event: %v (halted: %v)", err, p.Halted())
			}
			if h := p.Halted().Error(); !strings.Contains(h, fmt.Sprintf("event %d", bad)) || !strings.Contains(h, tt.want) {
				t.Fatalf("halted with %q, want the event %d and %q named", h, bad, tt.want)
			}
			if p.Applied() != before {
				t.Fatalf("applied up to %d, want %d", p.Applied(), before)
			}
			if got := storedNotes(t, db); fmt.Sprint(got) != "map[a:text:fine]" {
				t.Fatalf("folded %v, want only the event before", got)
			}
		})
	}
}
