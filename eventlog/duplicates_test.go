package eventlog

import (
	"context"
	"testing"
)

// TestDuplicateWindowOutlastsResending: every stream of events remembers an append's id longer
// than publish sends it again, so a message whose acknowledgement was lost is stored once; the
// output stream's window, which its own sender bounds (streaming's resendFor, 30 s), is a minute
// but never longer than the output is kept.
func TestDuplicateWindowOutlastsResending(t *testing.T) {
	ctx := context.Background()
	l, err := Open(ctx, Config{Dir: t.TempDir(), Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for name := range streamKinds {
		info, err := l.streams[name].Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		window := info.Config.Duplicates
		switch name {
		case OutputStream:
			if window != min(outputDuplicates, DefaultOutputRetention) {
				t.Errorf("%s: duplicate window %v, want %v", name, window, outputDuplicates)
			}
		default:
			if window != duplicates || window <= publishFor+attemptTimeout {
				t.Errorf("%s: duplicate window %v: want %v, more than publish sends again (%v and an attempt)", name, window, duplicates, publishFor)
			}
		}
	}
}
