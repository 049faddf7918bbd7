package engine

import (
	"context"
	"time"
)

// Sleep waits d, or less when ctx ends first; it returns ctx's error when ctx ended (before or
// during the wait), nil otherwise. Every wait of the services and the log that a shutdown or a
// cancelled request must cut short goes through it, rather than time.Sleep or time.After, which
// keep a timer alive after the context ends.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
