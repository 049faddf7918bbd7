package build

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// cacheKey hashes what a dependency install is made from (the parts in order, each framed by
// its length, so that no two different lists hash alike): the cache entry's name.
func cacheKey(parts ...[]byte) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d\x00", len(p))
		h.Write(p)
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// shortKey is a cache key's abbreviation, for the log.
func shortKey(key string) string { return key[:min(len(key), 12)] }

// completeMarker is the file written last into a cache entry: an entry without it was left
// half made by a build that stopped, and is made again.
const completeMarker = ".jetgraph-complete"

// cacheLock holds an exclusive lock on a cache entry (path+".lock") while one build makes or
// reads it: two builds with the same dependencies wait for each other instead of installing
// into the same folder at once. The lock goes with the process, so a killed build leaves none.
func cacheLock(path string) (unlock func(), err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// complete reports whether a cache entry was made to the end.
func complete(entry string) bool {
	_, err := os.Stat(filepath.Join(entry, completeMarker))
	return err == nil
}

// markComplete writes the entry's marker, last.
func markComplete(entry string) error {
	return os.WriteFile(filepath.Join(entry, completeMarker), nil, 0o644)
}

// linkTree makes dst a copy of the tree src whose files are hard links to src's (a copy where
// linking is not possible, across file systems): a cached node_modules is put into a revision's
// folder in a moment and takes no room twice. Folders are the copy's own, so files written
// later (the hosts' compiled graphs) go to the revision only; symbolic links are copied as
// they are.
func linkTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(path)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		case d.Type().IsRegular():
			if err := os.Link(path, target); err == nil {
				return nil
			} else if !errors.Is(err, syscall.EXDEV) && !errors.Is(err, syscall.EPERM) && !errors.Is(err, syscall.EMLINK) {
				return err
			}
			return copyFile(path, target)
		}
		return nil // sockets, devices: nothing a dependency folder needs
	})
}

// copyFile copies a regular file with its permissions.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_EXCL, fi.Mode().Perm())
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	return errors.Join(err, out.Close())
}
