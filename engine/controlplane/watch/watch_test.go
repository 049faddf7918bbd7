package watch

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/jetgraph/jetgraph/engine"
)

var sig = &object.Signature{Name: "test", Email: "test@example.com", When: time.Unix(1_700_000_000, 0)}

// commit writes name=content in the work tree of r and commits it on the current branch.
func commit(t *testing.T, r *git.Repository, dir, name, content string) plumbing.Hash {
	t.Helper()
	w, err := r.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Add(name); err != nil {
		t.Fatal(err)
	}
	h, err := w.Commit("change "+name, &git.CommitOptions{Author: sig})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestHeadFollowsABranchAndTags(t *testing.T) {
	dir := t.TempDir()
	r, err := git.PlainInit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	first := commit(t, r, dir, "graph.json", `{"graphs":{}}`)
	if _, err := r.CreateTag("v1", first, &git.CreateTagOptions{Tagger: sig, Message: "v1"}); err != nil { // annotated
		t.Fatal(err)
	}
	if _, err := r.CreateTag("light", first, nil); err != nil { // lightweight
		t.Fatal(err)
	}
	head, err := r.Head()
	if err != nil {
		t.Fatal(err)
	}
	branch := head.Name().Short()
	ctx := context.Background()
	w := Git{}

	for _, tc := range []struct{ ref, want string }{
		{branch, first.String()},
		{"refs/heads/" + branch, first.String()},
		{"refs/tags/v1", first.String()},
		{"refs/tags/light", first.String()},
	} {
		got, err := w.Head(ctx, dir, tc.ref)
		if err != nil || got != tc.want {
			t.Errorf("Head(%s) = %s, %v; want %s", tc.ref, got, err, tc.want)
		}
	}

	second := commit(t, r, dir, "graph.json", `{"graphs":{"a":{}}}`)
	if got, err := w.Head(ctx, dir, branch); err != nil || got != second.String() {
		t.Errorf("after a push Head(%s) = %s, %v; want %s", branch, got, err, second)
	}
	if got, err := w.Head(ctx, "file://"+dir, "refs/tags/v1"); err != nil || got != first.String() {
		t.Errorf("the tag moved with the branch: Head = %s, %v; want %s", got, err, first)
	}
}

func TestHeadErrors(t *testing.T) {
	dir := t.TempDir()
	r, err := git.PlainInit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	empty := t.TempDir()
	if _, err := git.PlainInit(empty, true); err != nil {
		t.Fatal(err)
	}
	commit(t, r, dir, "a", "a")
	ctx := context.Background()
	for _, tc := range []struct {
		name, url, ref string
		kind           engine.Kind
	}{
		{"missing branch", dir, "nope", engine.NotFound},
		{"missing tag", dir, "refs/tags/nope", engine.NotFound},
		{"empty repository", empty, "main", engine.NotFound},
		{"no repository", filepath.Join(dir, "absent"), "main", engine.Unavailable},
		{"bad ref", dir, "a..b", engine.Invalid},
		{"empty ref", dir, "", engine.Invalid},
		{"escaping ref", dir, "refs/../config", engine.Invalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Git{}.Head(ctx, tc.url, tc.ref)
			if engine.KindOf(err) != tc.kind {
				t.Errorf("Head(%s, %s) = %v (%v); want kind %v", tc.url, tc.ref, err, engine.KindOf(err), tc.kind)
			}
		})
	}
}

// TestErrorsHideCredentials: a credential in the URL is in no error text.
func TestErrorsHideCredentials(t *testing.T) {
	for _, u := range []string{"http://user:s3cret@127.0.0.1:1/repo.git", "http://s3cret@127.0.0.1:1/repo.git"} {
		_, err := Git{}.Head(context.Background(), u, "main")
		if engine.KindOf(err) != engine.Unavailable || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("Head(%s) = %v; want Unavailable without the credential", u, err)
		}
	}
}

func TestRedact(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"https://user:secret@example.com/org/repo.git", "https://user:xxxxx@example.com/org/repo.git"},
		{"https://ghp_token@example.com/org/repo.git", "https://xxxxx@example.com/org/repo.git"},
		{"ssh://git@example.com/org/repo.git", "ssh://git@example.com/org/repo.git"},
		{"git@example.com:org/repo.git", "git@example.com:org/repo.git"},
		{"/srv/git/repo", "/srv/git/repo"},
	} {
		if got := Redact(tc.in); got != tc.want {
			t.Errorf("Redact(%s) = %s; want %s", tc.in, got, tc.want)
		}
	}
}
