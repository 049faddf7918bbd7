// Package webhooks delivers a run's outcome to the webhook URL given at run creation: when the run
// ends, its record (status, timestamps, metadata, final values, error as {error, message}) is
// POSTed there as JSON, retried on timeouts, connection errors and 5xx answers with exponential
// backoff, and the delivery's result is recorded on the log as a webhook_delivered or
// webhook_failed event of the run's thread.
//
// The run layer uses it in three steps:
//
//	webhooks.ValidateURL(body.webhook)               // at run creation: a 422 when bad
//	res := d.Deliver(ctx, url, payload)              // after the run ended, off the request path
//	evs, _ := webhooks.Events(threadAgg, res)         // append to the thread's subject
//
// Secrets never leave the package in clear: events, logs and errors show the URL as Redact does,
// without user info, query string or fragment.
package webhooks

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/jetgraph/jetgraph/engine"
)

// Defaults of Config.
const (
	DefaultTimeout     = 10 * time.Second
	DefaultMaxAttempts = 5
	DefaultUserAgent   = "jetgraph-webhooks/1"
	// DeliveryHeader carries the run id: the same on every attempt of a delivery, so a receiver
	// can drop duplicates.
	DeliveryHeader = "X-Jetgraph-Delivery"
	// AttemptHeader carries the attempt number, from 1.
	AttemptHeader = "X-Jetgraph-Attempt"
)

// Config says whether and how webhooks are delivered. The zero value delivers every field with
// the defaults.
type Config struct {
	// Disabled turns webhooks off for the whole server: Deliver sends nothing and reports Skipped.
	Disabled bool
	// Fields are the payload keys sent (see the Fields variable); nil sends them all.
	Fields []string
	// Timeout bounds one attempt, reading the answer included; 0 means DefaultTimeout.
	Timeout time.Duration
	// MaxAttempts bounds the attempts of one delivery; 0 means DefaultMaxAttempts.
	MaxAttempts int
	// Backoff is the wait after failed attempt n (from 1) before the next; nil means
	// DefaultBackoff.
	Backoff func(attempt int) time.Duration
	// Client sends the requests. nil: a client of its own that does not follow redirects (a
	// redirected POST would turn into a GET).
	Client *http.Client
	// AllowedHosts, when not empty, restricts webhook hosts: "example.com" allows that host,
	// ".example.com" or "*.example.com" its subdomains.
	AllowedHosts []string
	// UserAgent of the requests; "" means DefaultUserAgent.
	UserAgent string
	// Headers are added to every request (an authorization token for the receivers, say).
	Headers map[string]string
	// Logger receives a line per failed attempt and per delivery; nil logs nothing.
	Logger *slog.Logger
}

// DefaultBackoff waits 1s after the first failed attempt and doubles with every further one, up
// to 30s, each wait drawn at random from its upper half so that retries do not come in waves.
func DefaultBackoff(attempt int) time.Duration {
	const base, limit = time.Second, 30 * time.Second
	d := limit
	if attempt < 6 {
		d = min(base<<max(attempt-1, 0), limit)
	}
	return d/2 + rand.N(d/2+1)
}

// Deliverer POSTs run payloads to webhooks. It is safe for concurrent use.
type Deliverer struct {
	cfg    Config
	client *http.Client
	log    *slog.Logger
	now    func() time.Time
	sleep  func(ctx context.Context, d time.Duration) error
}

// New returns a deliverer for cfg, with the defaults filled in. It fails on an unknown field name
// or a negative setting.
func New(cfg Config) (*Deliverer, error) {
	if err := checkFields(cfg.Fields); err != nil {
		return nil, err
	}
	if cfg.Timeout < 0 || cfg.MaxAttempts < 0 {
		return nil, errors.New("webhooks: Timeout and MaxAttempts must not be negative")
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxAttempts == 0 {
		cfg.MaxAttempts = DefaultMaxAttempts
	}
	if cfg.Backoff == nil {
		cfg.Backoff = DefaultBackoff
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = DefaultUserAgent
	}
	if cfg.Fields != nil {
		cfg.Fields = append([]string{}, cfg.Fields...)
	}
	d := &Deliverer{cfg: cfg, client: cfg.Client, log: cfg.Logger, now: time.Now, sleep: engine.Sleep}
	if d.client == nil {
		d.client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	return d, nil
}

// Enabled reports whether webhooks are delivered at all.
func (d *Deliverer) Enabled() bool { return !d.cfg.Disabled }

// ValidateURL is the package's ValidateURL plus the AllowedHosts rule.
func (d *Deliverer) ValidateURL(u string) error {
	p, err := parseURL(u)
	if err != nil {
		return err
	}
	if !hostAllowed(d.cfg.AllowedHosts, p.Hostname()) {
		return invalidURL(fmt.Sprintf("host %q is not allowed", p.Hostname()))
	}
	return nil
}

// Attempt is the outcome of one POST.
type Attempt struct {
	N        int           // from 1
	Status   int           // HTTP status of the answer; 0 when none came
	Err      error         // nil when the answer was 2xx; never holds the URL's secrets
	Duration time.Duration // from sending to the end of reading the answer
	Timeout  bool          // the attempt ran out of Config.Timeout
}

// Result is the outcome of one delivery.
type Result struct {
	RunID     string
	URL       string // redacted: scheme://host/path
	Skipped   bool   // webhooks are disabled: nothing was sent
	Delivered bool   // an attempt got a 2xx answer
	Attempts  []Attempt
	Err       error // why the delivery failed; nil when Delivered or Skipped
	Duration  time.Duration
}

// Status is the HTTP status of the last answer, 0 when none came.
func (r Result) Status() int {
	if len(r.Attempts) == 0 {
		return 0
	}
	return r.Attempts[len(r.Attempts)-1].Status
}

// Deliver POSTs p to rawURL until an attempt gets a 2xx answer, an attempt fails in a way that
// retrying cannot mend (a 4xx or 3xx answer, a bad certificate), Config.MaxAttempts attempts have
// failed, or ctx ends. Timeouts, connection errors and 5xx answers are retried after
// Config.Backoff. It blocks for the whole delivery, so a caller that must not wait runs it in a
// goroutine; ctx bounds it.
func (d *Deliverer) Deliver(ctx context.Context, rawURL string, p Payload) (res Result) {
	start := d.now()
	res = Result{RunID: p.RunID, URL: Redact(rawURL)}
	defer func() { res.Duration = d.now().Sub(start) }()
	if d.cfg.Disabled {
		res.Skipped = true
		return res
	}
	if err := d.ValidateURL(rawURL); err != nil {
		res.Err = err
		d.log.Warn("webhook not sent", "run_id", p.RunID, "url", res.URL, "err", err)
		return res
	}
	if p.WebhookSentAt.IsZero() {
		p.WebhookSentAt = engine.At(start)
	}
	body, err := encode(p, d.cfg.Fields)
	if err != nil {
		res.Err = fmt.Errorf("webhooks: encode payload of run %s: %w", p.RunID, err)
		return res
	}
	for n := 1; ; n++ {
		a, retry := d.attempt(ctx, rawURL, body, p.RunID, n)
		res.Attempts = append(res.Attempts, a)
		if a.Err == nil {
			res.Delivered, res.Err = true, nil
			d.log.Info("webhook delivered", "run_id", p.RunID, "url", res.URL, "status", a.Status, "attempts", n)
			return res
		}
		res.Err = a.Err
		d.log.Warn("webhook attempt failed", "run_id", p.RunID, "url", res.URL, "attempt", n,
			"status", a.Status, "err", a.Err, "retry", retry && n < d.cfg.MaxAttempts)
		if !retry || n >= d.cfg.MaxAttempts {
			break
		}
		if err := d.sleep(ctx, d.cfg.Backoff(n)); err != nil {
			res.Err = fmt.Errorf("webhook delivery stopped after %d attempt(s): %w (last: %v)", n, err, a.Err)
			break
		}
	}
	d.log.Warn("webhook failed", "run_id", p.RunID, "url", res.URL, "attempts", len(res.Attempts), "err", res.Err)
	return res
}

// attempt POSTs body once and says whether a failure is worth retrying.
func (d *Deliverer) attempt(ctx context.Context, rawURL string, body []byte, runID string, n int) (Attempt, bool) {
	a := Attempt{N: n}
	if err := ctx.Err(); err != nil {
		a.Err = fmt.Errorf("webhook not sent: %w", err)
		return a, false
	}
	actx, cancel := context.WithTimeout(ctx, d.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, rawURL, bytes.NewReader(body))
	if err != nil {
		a.Err = unwrapURLError(err)
		return a, false
	}
	for k, v := range d.cfg.Headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", d.cfg.UserAgent)
	req.Header.Set(DeliveryHeader, runID)
	req.Header.Set(AttemptHeader, strconv.Itoa(n))
	start := d.now()
	resp, err := d.client.Do(req)
	if err == nil {
		// Drain (a bounded part of) the answer so the connection can be reused.
		_, err = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		a.Status = resp.StatusCode
	}
	a.Duration = d.now().Sub(start)
	switch {
	case a.Status >= 200 && a.Status < 300:
		return a, false // delivered, even if the answer's body broke off
	case a.Status >= 500:
		a.Err = fmt.Errorf("webhook answered %d %s", a.Status, http.StatusText(a.Status))
		return a, true
	case a.Status >= 300 && a.Status < 400:
		a.Err = fmt.Errorf("webhook answered %d %s (redirects are not followed)", a.Status, http.StatusText(a.Status))
		return a, false
	case a.Status != 0:
		a.Err = fmt.Errorf("webhook answered %d %s", a.Status, http.StatusText(a.Status))
		return a, false
	}
	err = unwrapURLError(err)
	if ctx.Err() != nil {
		a.Err = fmt.Errorf("webhook delivery stopped: %w", ctx.Err())
		return a, false
	}
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		a.Timeout = true
		a.Err = fmt.Errorf("webhook timed out after %v: %w", d.cfg.Timeout, context.DeadlineExceeded)
		return a, true
	}
	var cert *tls.CertificateVerificationError
	if errors.As(err, &cert) {
		a.Err = fmt.Errorf("webhook TLS: %w", err)
		return a, false
	}
	a.Err = fmt.Errorf("webhook: %w", err)
	return a, true
}

// unwrapURLError drops the *url.Error wrapper that net/http puts around transport errors: its
// text holds the whole URL, query string included.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
