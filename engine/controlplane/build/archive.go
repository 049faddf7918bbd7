package build

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// MaxProjectArchive bounds a built project's archive (its files without the installed
// dependencies), kept in the object store so that every process of a cluster can run it.
const MaxProjectArchive = 256 << 20

// packProject archives the folder dir (gzipped tar) without the folders of skip (paths
// relative to dir: the installed dependencies, which each process makes from its own cache)
// and without .git.
func packProject(dir string, skip map[string]bool) ([]byte, error) {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || rel == "." {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() && (skip[rel] || rel == ".git") {
			return filepath.SkipDir
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		link := ""
		if info.Mode()&fs.ModeSymlink != 0 {
			if link, err = os.Readlink(p); err != nil {
				return err
			}
		} else if !info.Mode().IsRegular() && !info.IsDir() {
			return nil // sockets, pipes: nothing a project needs
		}
		hdr, err := tar.FileInfoHeader(info, link)
		if err != nil {
			return err
		}
		hdr.Name, hdr.Uname, hdr.Gname, hdr.Uid, hdr.Gid = rel, "", "", 0, 0
		if info.IsDir() {
			hdr.Name += "/"
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if info.Mode().IsRegular() {
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			_, err = io.Copy(tw, f)
			f.Close()
			if err != nil {
				return err
			}
		}
		if buf.Len() > MaxProjectArchive {
			return fmt.Errorf("the project's files are over %d MiB (MaxProjectArchive) without its dependencies", MaxProjectArchive>>20)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := errors.Join(tw.Close(), gz.Close()); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// unpackProject extracts an archive of packProject into the folder dir, which it makes. Every
// entry stays inside dir (os.Root: neither "../" nor a symbolic link leads out of it).
func unpackProject(data []byte, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("the project's archive: %w", err)
	}
	tr := tar.NewReader(io.LimitReader(gz, 4*MaxProjectArchive))
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("the project's archive: %w", err)
		}
		name := path.Clean(strings.TrimSuffix(hdr.Name, "/"))
		if name == "." || path.IsAbs(name) || name == ".." || strings.HasPrefix(name, "../") {
			return fmt.Errorf("the project's archive: %q is not a path inside the project", hdr.Name)
		}
		if dirName := path.Dir(name); dirName != "." {
			if err := root.MkdirAll(dirName, 0o755); err != nil {
				return err
			}
		}
		mode := hdr.FileInfo().Mode().Perm()
		switch hdr.Typeflag {
		case tar.TypeDir:
			if err := root.MkdirAll(name, 0o755); err != nil {
				return err
			}
		case tar.TypeSymlink:
			if err := root.Symlink(hdr.Linkname, name); err != nil {
				return err
			}
		case tar.TypeReg:
			f, err := root.OpenFile(name, os.O_CREATE|os.O_WRONLY|os.O_EXCL, mode|0o600)
			if err != nil {
				return err
			}
			_, err = io.Copy(f, tr)
			if err := errors.Join(err, f.Close()); err != nil {
				return err
			}
		default:
			return fmt.Errorf("the project's archive: %q is neither a file, a folder nor a symbolic link", hdr.Name)
		}
	}
}
