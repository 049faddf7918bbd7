// Package proctree reads the CPU time a process and all its descendants have used, for load
// tools that compare servers whose work is spread over child processes (a supervisor and its
// language hosts, a dev server and its workers).
//
// On Linux it reads /proc: a process's utime+stime plus cutime+cstime (the time of children it
// has waited for), summed over the live tree below it, so that a child that exits and is reaped
// during a measurement still counts (its time moves into its parent's cutime/cstime). On other
// systems Read answers ErrUnsupported.
package proctree

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ErrUnsupported is Read's answer where process CPU times are not read (systems without /proc).
var ErrUnsupported = errors.New("proctree: reading a process tree's CPU time needs Linux's /proc")

// clockTick is the unit of the times in /proc/<pid>/stat: USER_HZ, fixed at 100 by the kernel's
// ABI whatever the kernel's own tick rate.
const clockTick = 10 * time.Millisecond

// Usage is the CPU time of a process tree at one moment.
type Usage struct {
	CPU   time.Duration // user + system, the reaped children's included
	Root  time.Duration // of which the root process's own (and its reaped children's)
	Procs []int         // the live processes counted, the root first
}

// stat is what a load tool needs from one /proc/<pid>/stat line.
type stat struct {
	pid, ppid int
	ticks     uint64 // utime + stime + cutime + cstime
}

// parseStat reads one /proc/<pid>/stat line. The command name (field 2) is in parentheses and
// may itself hold spaces and parentheses, so the fields after it are found from the last ')'.
func parseStat(line string) (stat, error) {
	open, end := strings.IndexByte(line, '('), strings.LastIndexByte(line, ')')
	if open < 1 || end < open {
		return stat{}, fmt.Errorf("proctree: stat line without a command name: %.60q", line)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line[:open]))
	if err != nil {
		return stat{}, fmt.Errorf("proctree: stat line's pid: %w", err)
	}
	// After the name: state(3) ppid(4) ... utime(14) stime(15) cutime(16) cstime(17).
	f := strings.Fields(line[end+1:])
	if len(f) < 15 {
		return stat{}, fmt.Errorf("proctree: stat line of pid %d has %d fields after its name, want at least 15", pid, len(f))
	}
	s := stat{pid: pid}
	if s.ppid, err = strconv.Atoi(f[1]); err != nil {
		return stat{}, fmt.Errorf("proctree: stat line of pid %d: ppid: %w", pid, err)
	}
	for _, v := range f[11:15] {
		// cutime and cstime are signed in the kernel's format; they are never negative in practice.
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return stat{}, fmt.Errorf("proctree: stat line of pid %d: CPU time %q", pid, v)
		}
		s.ticks += uint64(n)
	}
	return s, nil
}

// sumTree adds up the tree below root among stats (every process of the system). It answers
// false when root is not among them.
func sumTree(root int, stats []stat) (Usage, bool) {
	children := map[int][]int{}
	byPID := make(map[int]stat, len(stats))
	for _, s := range stats {
		byPID[s.pid] = s
		if s.pid != s.ppid {
			children[s.ppid] = append(children[s.ppid], s.pid)
		}
	}
	if _, ok := byPID[root]; !ok {
		return Usage{}, false
	}
	var u Usage
	var ticks uint64
	seen := map[int]bool{}
	queue := []int{root}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		if seen[pid] {
			continue
		}
		seen[pid] = true
		u.Procs = append(u.Procs, pid)
		ticks += byPID[pid].ticks
		queue = append(queue, children[pid]...)
	}
	u.CPU = time.Duration(ticks) * clockTick
	u.Root = time.Duration(byPID[root].ticks) * clockTick
	return u, true
}
