package eventlog

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Waits between the attempts of Retry: from retryMin, doubling up to retryMax. Each attempt
// gets retryAttempt at most.
const (
	retryMin     = 100 * time.Millisecond
	retryMax     = 2 * time.Second
	retryAttempt = 5 * time.Second
)

// Retry calls f until it succeeds, fails for good or ctx ends. A cluster that is still forming,
// or electing a leader, answers for a while with no responders, timeouts, "JetStream not
// enabled" or "insufficient resources" (not every server has joined yet): f is called again
// then, at growing intervals, and the wait is logged. Any other error is returned at once.
func (l *Log) Retry(ctx context.Context, what string, f func(context.Context) error) error {
	wait := retryMin
	start := time.Now()
	for attempt := 1; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, retryAttempt)
		err := f(actx)
		cancel()
		if err == nil {
			if attempt > 1 {
				l.log.Info("eventlog: the cluster answers", "what", what, "after", time.Since(start).Round(time.Millisecond))
			}
			return nil
		}
		if !transient(err) || ctx.Err() != nil {
			return fmt.Errorf("eventlog: %s: %w", what, err)
		}
		if attempt == 1 || attempt%10 == 0 {
			l.log.Warn("eventlog: the cluster is not ready, retrying", "what", what, "attempt", attempt, "err", err)
		}
		if serr := engine.Sleep(ctx, wait); serr != nil {
			return fmt.Errorf("eventlog: %s: %w (last error: %w)", what, serr, err)
		}
		wait = min(2*wait, retryMax)
	}
}

// transient reports whether err may go away by itself while a cluster forms or fails over.
func transient(err error) bool {
	if Unanswered(err) || errors.Is(err, jetstream.ErrJetStreamNotEnabled) ||
		errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount) || errors.Is(err, nats.ErrConnectionReconnecting) ||
		errors.Is(err, nats.ErrNoServers) {
		return true
	}
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		switch apiErr.ErrorCode {
		case jetstream.JSErrCodeJetStreamNotEnabled, jetstream.JSErrCodeJetStreamNotEnabledForAccount,
			clusterNotAvailable, insufficientResources, clusterNoPeers:
			return true
		}
		return apiErr.Code == 503
	}
	return false
}

// JetStream error codes of a cluster that is not ready (nats-server's JSClusterNotAvailErr,
// JSInsufficientResourcesErr, JSClusterNoPeersErr).
const (
	clusterNotAvailable   jetstream.ErrorCode = 10008
	insufficientResources jetstream.ErrorCode = 10023
	clusterNoPeers        jetstream.ErrorCode = 10005
)
