package scrub_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/jetgraph/jetgraph/engine/controlplane/scrub"
)

func TestScrub(t *testing.T) {
	for _, c := range []struct {
		name, in, want string
		values         []string
	}{
		{"none", "plain output\n", "plain output\n", []string{"s3cret"}},
		{"one", "token=s3cret\n", "token=********\n", []string{"s3cret"}},
		{"twice", "s3crets3cret", "****************", []string{"s3cret"}},
		{"longest first", "key abcdefgh end", "key ******** end", []string{"abcd", "abcdefgh"}},
		{"short values stay", "on 1 off", "on 1 off", []string{"on", "1"}},
		{"prefix only at the end", "token=s3cr", "token=s3cr", []string{"s3cret"}},
		{"no values", "s3cret", "s3cret", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			// Every way of cutting the input in two writes gives the same output.
			for cut := 0; cut <= len(c.in); cut++ {
				var out bytes.Buffer
				w := scrub.NewWriter(&out, c.values)
				if _, err := w.Write([]byte(c.in[:cut])); err != nil {
					t.Fatal(err)
				}
				if _, err := w.Write([]byte(c.in[cut:])); err != nil {
					t.Fatal(err)
				}
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
				if out.String() != c.want {
					t.Fatalf("cut at %d: %q, want %q", cut, out.String(), c.want)
				}
			}
		})
	}
}

// TestScrubHoldsOnlyAPrefix: what cannot begin a value is written at once, before Flush.
func TestScrubHoldsOnlyAPrefix(t *testing.T) {
	var out bytes.Buffer
	w := scrub.NewWriter(&out, []string{"s3cret"})
	_, _ = w.Write([]byte("line one\nvalue s3c"))
	if out.String() != "line one\nvalue " {
		t.Errorf("written before the rest: %q", out.String())
	}
	_, _ = w.Write([]byte("ret!\n"))
	if out.String() != "line one\nvalue ********!\n" {
		t.Errorf("written: %q", out.String())
	}
}

// FuzzScrub: cut anywhere into bytes written one by one, the output never holds a value and
// equals the output of one write.
func FuzzScrub(f *testing.F) {
	f.Add("token=s3cret and s3cr", "s3cret")
	f.Add("aaaa aaab", "aaab")
	f.Fuzz(func(t *testing.T, in, value string) {
		if len(value) < scrub.MinLen || strings.Contains(scrub.Mask, value) || strings.Contains(value, "*") {
			return
		}
		var whole, bytewise bytes.Buffer
		w := scrub.NewWriter(&whole, []string{value})
		_, _ = w.Write([]byte(in))
		_ = w.Close()
		b := scrub.NewWriter(&bytewise, []string{value})
		for i := range len(in) {
			_, _ = b.Write([]byte{in[i]})
		}
		_ = b.Close()
		if whole.String() != bytewise.String() {
			t.Errorf("one write %q, byte by byte %q", whole.String(), bytewise.String())
		}
		if strings.Contains(whole.String(), value) {
			t.Errorf("%q scrubbed of %q is %q", in, value, whole.String())
		}
	})
}
