// Package scrub replaces known secret values in a stream of output (a build's, a revision
// process's) with a mask before it is written on, also when a value arrives split across
// writes.
package scrub

import (
	"bytes"
	"io"
	"slices"
	"strings"
	"sync"
)

// Mask replaces a secret value in scrubbed output.
const Mask = "********"

// MinLen is the shortest value scrubbed: masking every "1" or "on" of a log would make it
// unreadable and protect nothing (a value that short is guessed, not leaked).
const MinLen = 4

// Writer writes to its destination what is written to it, every known value replaced by Mask.
// It holds back the end of what it was given while that end could be the start of a value
// (at most the longest value's length minus one byte); Flush or Close writes it on. Writes may
// come from several goroutines.
type Writer struct {
	dst    io.Writer
	values [][]byte // longest first: a value that contains another is masked whole
	first  [256]bool
	maxLen int

	mu   sync.Mutex
	held []byte
}

// NewWriter scrubs values (those shorter than MinLen are left alone) from what goes to dst.
func NewWriter(dst io.Writer, values []string) *Writer {
	w := &Writer{dst: dst}
	seen := map[string]bool{}
	for _, v := range values {
		if len(v) < MinLen || seen[v] {
			continue
		}
		seen[v] = true
		w.values = append(w.values, []byte(v))
		w.first[v[0]] = true
		w.maxLen = max(w.maxLen, len(v))
	}
	slices.SortFunc(w.values, func(a, b []byte) int { return len(b) - len(a) })
	return w
}

// String is s with every value of the writer masked (a failure's reason, a single line).
func (w *Writer) String(s string) string {
	for _, v := range w.values {
		s = strings.ReplaceAll(s, string(v), Mask)
	}
	return s
}

// Write takes p; it always reports len(p) unless the destination fails.
func (w *Writer) Write(p []byte) (int, error) {
	if len(w.values) == 0 {
		return w.dst.Write(p)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.held = append(w.held, p...)
	out, rest := w.scrub(w.held, false)
	w.held = append(w.held[:0], rest...)
	if len(out) > 0 {
		if _, err := w.dst.Write(out); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// scrub masks the values in b and returns what can be written on and, unless final, the end
// held back because a value may continue in the next write.
func (w *Writer) scrub(b []byte, final bool) (out, rest []byte) {
	out = make([]byte, 0, len(b))
	i := 0
	for i < len(b) {
		if !w.first[b[i]] {
			out = append(out, b[i])
			i++
			continue
		}
		// Longest first: a longer value that may go on in the next write is waited for even
		// where a shorter one matches now, so that none of it is written unmasked.
		matched, partial := 0, false
		for _, v := range w.values {
			if bytes.HasPrefix(b[i:], v) {
				matched = len(v)
				break
			}
			if !final && len(b)-i < len(v) && bytes.HasPrefix(v, b[i:]) {
				partial = true
				break
			}
		}
		switch {
		case matched > 0:
			out = append(out, Mask...)
			i += matched
		case partial:
			return out, b[i:]
		default:
			out = append(out, b[i])
			i++
		}
	}
	return out, nil
}

// Flush writes on what is held back, as it is (the output ended: no value continues it).
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.held) == 0 {
		return nil
	}
	out, _ := w.scrub(w.held, true)
	w.held = w.held[:0]
	_, err := w.dst.Write(out)
	return err
}

// Close flushes; the destination is the caller's to close.
func (w *Writer) Close() error { return w.Flush() }
