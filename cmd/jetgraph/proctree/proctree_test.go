package proctree

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParseStat(t *testing.T) {
	// Fields after the name: state ppid pgrp session tty tpgid flags minflt cminflt majflt
	// cmajflt utime stime cutime cstime ...
	tail := " S 1 10 10 0 -1 4194560 100 0 0 0 7 3 20 5 20 0 4 0 123 456 789"
	for _, tc := range []struct {
		name, line string
		want       stat
		err        string
	}{
		{name: "plain", line: "42 (jetgraph)" + tail, want: stat{pid: 42, ppid: 1, ticks: 35}},
		{name: "name with spaces and parentheses", line: "7 (my (odd) name) )" + tail, want: stat{pid: 7, ppid: 1, ticks: 35}},
		{name: "trailing newline", line: "9 (node)" + tail + "\n", want: stat{pid: 9, ppid: 1, ticks: 35}},
		{name: "no name", line: "42 jetgraph S 1", err: "without a command name"},
		{name: "too short", line: "42 (x) S 1 10 10", err: "has 4 fields"},
		{name: "bad pid", line: "x (y)" + tail, err: "pid"},
		{name: "bad ppid", line: "42 (x) S one 10 10 0 -1 4194560 100 0 0 0 7 3 20 5", err: "ppid"},
		{name: "negative time", line: "42 (x) S 1 10 10 0 -1 4194560 100 0 0 0 7 3 -20 5", err: `CPU time "-20"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseStat(tc.line)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("parseStat: error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("parseStat = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestSumTree(t *testing.T) {
	system := []stat{
		{pid: 1, ppid: 0, ticks: 1000},
		{pid: 2, ppid: 0, ticks: 500},
		{pid: 10, ppid: 1, ticks: 100}, // the server
		{pid: 11, ppid: 10, ticks: 20}, // its host
		{pid: 12, ppid: 10, ticks: 30}, // its other host
		{pid: 13, ppid: 11, ticks: 4},  // a host's child
		{pid: 20, ppid: 1, ticks: 700}, // another server, not ours
		{pid: 21, ppid: 20, ticks: 70},
	}
	for _, tc := range []struct {
		name  string
		root  int
		cpu   time.Duration
		own   time.Duration
		procs []int
		ok    bool
	}{
		{name: "a tree three deep", root: 10, cpu: 1540 * time.Millisecond, own: time.Second, procs: []int{10, 11, 12, 13}, ok: true},
		{name: "a subtree", root: 11, cpu: 240 * time.Millisecond, own: 200 * time.Millisecond, procs: []int{11, 13}, ok: true},
		{name: "a leaf", root: 21, cpu: 700 * time.Millisecond, own: 700 * time.Millisecond, procs: []int{21}, ok: true},
		{name: "no such process", root: 99},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, ok := sumTree(tc.root, system)
			if ok != tc.ok {
				t.Fatalf("sumTree(%d) ok = %v, want %v", tc.root, ok, tc.ok)
			}
			if u.CPU != tc.cpu || u.Root != tc.own || !equalSets(u.Procs, tc.procs) {
				t.Fatalf("sumTree(%d) = %v (own %v) over %v, want %v (own %v) over %v", tc.root, u.CPU, u.Root, u.Procs, tc.cpu, tc.own, tc.procs)
			}
			if ok && u.Procs[0] != tc.root {
				t.Fatalf("sumTree(%d): the root is not first: %v", tc.root, u.Procs)
			}
		})
	}
}

func equalSets(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	in := map[int]bool{}
	for _, v := range a {
		in[v] = true
	}
	for _, v := range b {
		if !in[v] {
			return false
		}
	}
	return true
}

func FuzzParseStat(f *testing.F) {
	f.Add("42 (jetgraph) S 1 10 10 0 -1 4194560 100 0 0 0 7 3 20 5 20 0 4 0")
	f.Add("7 (a) b) R 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15")
	f.Add("(")
	f.Fuzz(func(t *testing.T, line string) {
		s, err := parseStat(line)
		if err != nil {
			return
		}
		// What it read must be what the line says before the name.
		if pid, perr := strconv.Atoi(strings.TrimSpace(line[:strings.IndexByte(line, '(')])); perr != nil || pid != s.pid {
			t.Fatalf("parseStat(%q) = pid %d; the line's is %d (%v)", line, s.pid, pid, perr)
		}
	})
}
