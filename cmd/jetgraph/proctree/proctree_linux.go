//go:build linux

package proctree

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// Read returns the CPU time of the process pid and of every live descendant of it.
func Read(pid int) (Usage, error) { return readFrom("/proc", pid) }

// readFrom reads the tree below pid from a proc file system mounted at dir.
func readFrom(dir string, pid int) (Usage, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return Usage{}, fmt.Errorf("proctree: %w", err)
	}
	stats := make([]stat, 0, len(ents))
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(dir, e.Name(), "stat"))
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) || errors.Is(err, os.ErrPermission) {
			continue // it exited since the listing, or is not ours to read
		}
		if err != nil {
			return Usage{}, fmt.Errorf("proctree: %w", err)
		}
		s, err := parseStat(string(raw))
		if err != nil {
			return Usage{}, err
		}
		stats = append(stats, s)
	}
	u, ok := sumTree(pid, stats)
	if !ok {
		return Usage{}, fmt.Errorf("proctree: no process %d", pid)
	}
	return u, nil
}
