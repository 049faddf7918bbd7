package controlplane

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// sink records the pieces a stepLog appends; failing makes the next appends fail.
type sink struct {
	mu      sync.Mutex
	pieces  []string
	failing int
}

func (s *sink) emit(text string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failing > 0 {
		s.failing--
		return errors.New("log unavailable")
	}
	s.pieces = append(s.pieces, text)
	return nil
}

func (s *sink) stillFailing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failing > 0
}

func (s *sink) text() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.pieces, "")
}

func TestStepLog(t *testing.T) {
	big := strings.Repeat("0123456789abcdef", (stepLogBudget+maxLogEvent)/16+1000)
	for _, c := range []struct {
		name       string
		writes     []string
		concurrent bool // written from a goroutine each, as a command's stdout and stderr
		failing    int
		check      func(t *testing.T, s *sink)
	}{
		{name: "small output is whole, in order", writes: []string{"cloning\n", "building\n", "done\n"},
			check: func(t *testing.T, s *sink) {
				if got := s.text(); got != "cloning\nbuilding\ndone\n" {
					t.Errorf("log %q", got)
				}
			}},
		{name: "concurrent writers lose nothing", writes: []string{strings.Repeat("a", 100_000), strings.Repeat("b", 100_000)}, concurrent: true,
			check: func(t *testing.T, s *sink) {
				if got := s.text(); strings.Count(got, "a") != 100_000 || strings.Count(got, "b") != 100_000 {
					t.Errorf("log of %d bytes", len(got))
				}
			}},
		{name: "chunks are bounded", writes: []string{strings.Repeat("x", 3*logChunkBytes+10)},
			check: func(t *testing.T, s *sink) {
				if len(s.pieces) != 4 || len(s.text()) != 3*logChunkBytes+10 {
					t.Errorf("%d pieces, %d bytes", len(s.pieces), len(s.text()))
				}
				for _, p := range s.pieces {
					if len(p) > logChunkBytes {
						t.Errorf("a piece of %d bytes", len(p))
					}
				}
			}},
		{name: "a rune is never split", writes: []string{strings.Repeat("x", logChunkBytes-1) + "é" + "tail"},
			check: func(t *testing.T, s *sink) {
				if !strings.HasPrefix(s.pieces[1], "é") || s.text() != strings.Repeat("x", logChunkBytes-1)+"étail" {
					t.Errorf("pieces split a rune: %q...", s.pieces[1][:min(8, len(s.pieces[1]))])
				}
			}},
		{name: "past the budget the end is kept", writes: []string{"start\n", big, "the end\n"},
			check: func(t *testing.T, s *sink) {
				got := s.text()
				if !strings.HasPrefix(got, "start\n") || !strings.HasSuffix(got, "the end\n") || !strings.Contains(got, " bytes of output cut ...]") {
					t.Errorf("log of %d bytes: %q ... %q", len(got), got[:20], got[len(got)-20:])
				}
				if len(got) > stepLogBudget+maxLogEvent+100 {
					t.Errorf("log of %d bytes, over the bounds", len(got))
				}
			}},
		{name: "failed appends are kept for the next", writes: []string{"one\n", "two\n"}, failing: 1,
			check: func(t *testing.T, s *sink) {
				if got := s.text(); got != "one\ntwo\n" {
					t.Errorf("log %q", got)
				}
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := &sink{failing: c.failing}
			l := newStepLog(s.emit)
			var wg sync.WaitGroup
			for _, w := range c.writes {
				if !c.concurrent {
					_, _ = l.Write([]byte(w))
					continue
				}
				wg.Go(func() {
					for b := range strings.SplitSeq(w, "") { // byte by byte: interleaved
						_, _ = l.Write([]byte(b))
					}
				})
			}
			wg.Wait()
			if c.failing > 0 { // the timed append fails, the next one (Close's) carries its text
				deadline := time.Now().Add(5 * time.Second)
				for s.stillFailing() && time.Now().Before(deadline) {
					time.Sleep(10 * time.Millisecond)
				}
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			c.check(t, s)
		})
	}
}

// TestStepLogStreams checks that output is appended while the step runs, before Close.
func TestStepLogStreams(t *testing.T) {
	s := &sink{}
	l := newStepLog(s.emit)
	defer l.Close()
	_, _ = l.Write([]byte("compiling...\n"))
	deadline := time.Now().Add(3 * logFlushInterval)
	for s.text() == "" {
		if time.Now().After(deadline) {
			t.Fatalf("nothing appended within %v", 3*logFlushInterval)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := s.text(); got != "compiling...\n" {
		t.Errorf("log %q", got)
	}
}
