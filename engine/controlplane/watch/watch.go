// Package watch reports where a git ref points now, for build_on_push: it asks the remote for its
// references (git ls-remote) instead of cloning, so a poll costs one round trip however big the
// repository is.
package watch

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/controlplane"
)

// Git is the controlplane.RefWatcher of any git URL or local path go-git can reach.
type Git struct{}

var _ controlplane.RefWatcher = Git{}

// peeledSuffix marks, in a remote's advertisement, the commit an annotated tag points to.
const peeledSuffix = "^{}"

// Head returns the commit sha ref points to in the repository at repoURL. ref is a branch name
// ("main", "release/2") or a full ref ("refs/tags/v1", "refs/heads/main"); an annotated tag
// is resolved to its commit, so a moved tag and a new commit read the same way.
func (Git) Head(ctx context.Context, repoURL, ref string) (string, error) {
	const op = "watch.head"
	name, err := RefName(ref)
	if err != nil {
		return "", engine.E(engine.Op(op), err)
	}
	remote := git.NewRemote(memory.NewStorage(), &config.RemoteConfig{Name: "origin", URLs: []string{repoURL}})
	refs, err := remote.ListContext(ctx, &git.ListOptions{PeelingOption: git.AppendPeeled})
	if err != nil {
		if errors.Is(err, transport.ErrEmptyRemoteRepository) {
			return "", engine.E(engine.Op(op), engine.NotFound, fmt.Sprintf("ref %s not found: %s is an empty repository", ref, Redact(repoURL)))
		}
		err = RedactError(err, repoURL)
		return "", engine.E(engine.Op(op), engine.Unavailable, fmt.Sprintf("list the refs of %s", Redact(repoURL)), err)
	}
	var direct, peeled string
	for _, r := range refs {
		switch r.Name() {
		case name:
			direct = r.Hash().String()
		case name + peeledSuffix:
			peeled = r.Hash().String()
		}
	}
	switch {
	case peeled != "":
		return peeled, nil
	case direct != "":
		return direct, nil
	}
	return "", engine.E(engine.Op(op), engine.NotFound, fmt.Sprintf("ref %s not found in %s", ref, Redact(repoURL)))
}

// RefName is the full reference name of a repo_ref: a branch name means refs/heads/<name>, and
// a name starting with refs/ is taken as it is. It refuses what git itself would refuse.
func RefName(ref string) (plumbing.ReferenceName, error) {
	name := plumbing.ReferenceName(ref)
	if !strings.HasPrefix(ref, "refs/") {
		name = plumbing.NewBranchReferenceName(ref)
	}
	if ref == "" || name.Validate() != nil || !name.IsSafe() {
		return "", engine.E(engine.Invalid, fmt.Sprintf("%q is not a valid git ref: give a branch name or refs/tags/<tag>", ref))
	}
	return name, nil
}

// redacted stands for a credential in a logged URL.
const redacted = "xxxxx"

// Redact hides the password of a URL (https://user:token@host/...), so that a repository's
// address can be logged and shown without its credential.
func Redact(repoURL string) string {
	u, err := url.Parse(repoURL)
	if err != nil || u.User == nil {
		return repoURL
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), redacted)
	} else if u.Scheme == "http" || u.Scheme == "https" {
		u.User = url.User(redacted) // a token given as the user name
	}
	return u.String()
}

// RedactError is err with repoURL redacted in its text (git errors often quote the URL) and err
// still in its chain, so that errors.Is sees a cancelled context through it.
func RedactError(err error, repoURL string) error {
	if err == nil {
		return nil
	}
	return redactedError{err: err, url: repoURL}
}

type redactedError struct {
	err error
	url string
}

func (e redactedError) Error() string {
	return strings.ReplaceAll(e.err.Error(), e.url, Redact(e.url))
}

func (e redactedError) Unwrap() error { return e.err }
