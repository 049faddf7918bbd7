// Package forward sends the traces of a jetgraph's own trace stream (eventlog.TraceStream) to a
// LangSmith-compatible tracing API: LangSmith itself, or another jetgraph's /tracing (a
// deployment's processes send theirs to the control plane's, in the deployment's project).
//
// A Forwarder reads the stream through a durable JetStream consumer of its own (named after the
// target URL, project and tenant), so it resumes where it stopped after a restart and starts from
// the stream's beginning the first time. Each batch read is held as leased work until sent
// (eventlog.Held): a process cut off from the log stops sending it before another reads it again.
// It turns each run post and patch (with its attachments) and each feedback into the parts of the
// clients' multipart ingestion, POSTs them to <URL>/runs/multipart with the API key, and
// acknowledges the events only once the target answered 2xx: while the target is down (or refuses
// the key) it retries with backoff, keeping the events in progress, so nothing acknowledged is
// lost. A batch sent again (an acknowledgement lost, a process killed after the post) is harmless:
// run posts and patches are upserts by run id and feedback is keyed by its id, so the target
// stores each once.
//
// Not forwarded: project renames and deletions, feedback updates and deletions (the ingestion
// protocol has no part for them). Items the target refuses for good (400, 409, 413 alone, 422)
// are logged and skipped: sending them again would never succeed.
package forward

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/projections/traces"
)

// Defaults of Config.
const (
	DefaultBatchSize       = 100
	DefaultMaxRequestBytes = 16 << 20
	DefaultAckWait         = time.Minute
	DefaultMinBackoff      = 250 * time.Millisecond
	DefaultMaxBackoff      = 30 * time.Second
	DefaultTimeout         = 30 * time.Second
	// fetchWait is how long a fetch waits for new events.
	fetchWait = 5 * time.Second
	// outageLogEvery bounds how often a failing target is logged.
	outageLogEvery = time.Minute
)

// Config says where traces go.
type Config struct {
	// URL is the tracing API's base URL, as LANGSMITH_ENDPOINT would be:
	// https://api.smith.langchain.com, or http://host:8123/tracing for a jetgraph.
	URL string
	// APIKey is sent as X-Api-Key.
	APIKey string
	// Project, when set, is the target project of every forwarded run (session_name); empty
	// keeps each run's own project name.
	Project string
	// Tenant is the source tenant whose traces are forwarded (the trace stream holds every
	// tenant's); empty is the default tenant, the single-user setup's.
	Tenant string
	// BatchSize is the most events read, and items sent, at once. 0: DefaultBatchSize.
	BatchSize int
	// MaxRequestBytes bounds a request's body (the target announces 25 MiB). 0:
	// DefaultMaxRequestBytes.
	MaxRequestBytes int
	// AckWait is how long events read by a process that died wait before they are read again.
	// 0: DefaultAckWait.
	AckWait time.Duration
	// MinBackoff and MaxBackoff bound the wait between attempts while the target fails.
	MinBackoff, MaxBackoff time.Duration
	// Client sends the requests; nil: a client with a DefaultTimeout timeout.
	Client *http.Client
	// Logger receives what goes wrong (never the key); nil: slog.Default().
	Logger *slog.Logger
}

// Blobs reads the trace object store (*tracing.Objects): payloads too large for an event, by
// object name, and attachments, by tenant and digest. Both fail wrapping eventlog.ErrNoObject
// for a blob that is not stored (expired).
type Blobs interface {
	Get(ctx context.Context, name string) ([]byte, error)
	Attachment(ctx context.Context, tenant, digest string) ([]byte, error)
}

// Forwarder sends the trace stream's events of one tenant to a tracing API.
type Forwarder struct {
	log      *eventlog.Log
	blobs    Blobs
	cfg      Config
	endpoint string // <URL>/runs/multipart
	consumer string
}

// New checks cfg and returns the forwarder of l's trace stream; blobs reads its object store.
func New(l *eventlog.Log, blobs Blobs, cfg Config) (*Forwarder, error) {
	const op = "forward.new"
	u, err := url.Parse(strings.TrimSpace(cfg.URL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, engine.E(engine.Op(op), engine.Invalid, fmt.Sprintf("trace forwarding URL %q: want http(s)://host[/path]", cfg.URL))
	}
	cfg.URL = strings.TrimSuffix(u.String(), "/")
	if cfg.Tenant == "" {
		cfg.Tenant = engine.DefaultTenant
	}
	if !eventlog.ValidToken(cfg.Tenant) {
		return nil, engine.E(engine.Op(op), engine.Invalid, fmt.Sprintf("tenant %q is not a subject token", cfg.Tenant))
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = DefaultBatchSize
	}
	if cfg.MaxRequestBytes <= 0 {
		cfg.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if cfg.AckWait <= 0 {
		cfg.AckWait = DefaultAckWait
	}
	if cfg.MinBackoff <= 0 {
		cfg.MinBackoff = DefaultMinBackoff
	}
	if cfg.MaxBackoff < cfg.MinBackoff {
		cfg.MaxBackoff = max(DefaultMaxBackoff, cfg.MinBackoff)
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: DefaultTimeout}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Forwarder{log: l, blobs: blobs, cfg: cfg, endpoint: cfg.URL + "/runs/multipart", consumer: ConsumerName(cfg)}, nil
}

// ConsumerName is the durable consumer of a forwarding target: one per URL, project and tenant,
// so that a new target gets every trace the stream still holds, and the same one resumes.
func ConsumerName(cfg Config) string {
	tenant := cfg.Tenant
	if tenant == "" {
		tenant = engine.DefaultTenant
	}
	sum := sha256.Sum256([]byte(strings.TrimSuffix(strings.TrimSpace(cfg.URL), "/") + "\x00" + cfg.Project + "\x00" + tenant))
	return "JG_TRACE_FORWARD_" + hex.EncodeToString(sum[:8])
}

// Target describes where the traces go, for logs: the URL and project, never the key.
func (f *Forwarder) Target() string {
	if f.cfg.Project == "" {
		return f.cfg.URL
	}
	return f.cfg.URL + " (project " + f.cfg.Project + ")"
}

// Run forwards the tenant's traces until ctx ends; it returns nil then, or the error that kept
// it from opening its consumer. Events it read and had not sent are read again at once by the
// next Run.
func (f *Forwarder) Run(ctx context.Context) error {
	q, err := f.log.OpenDispatch(ctx, eventlog.DispatchConfig{Name: f.consumer, Stream: eventlog.TraceStream,
		Filter: traces.TraceKind + "." + f.cfg.Tenant + ".>", AckWait: f.cfg.AckWait})
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("forward: open the consumer %s: %w", f.consumer, err)
	}
	o := &outage{logger: f.cfg.Logger, target: f.Target()}
	for ctx.Err() == nil {
		msgs, err := q.Fetch(ctx, f.cfg.BatchSize, fetchWait)
		if err != nil && ctx.Err() == nil {
			f.cfg.Logger.Warn("forward: reading the trace stream failed; retrying", "err", err)
			_ = engine.Sleep(ctx, time.Second)
		}
		if len(msgs) > 0 {
			f.deliver(ctx, q, msgs, o)
		}
	}
	return nil
}

// deliver sends the events of msgs, in order, retrying until each request was answered, then
// acknowledges them; when ctx ends first, it hands them back to the consumer. The messages are
// held as leased work (eventlog.Held): when their in-progress acknowledgements go unconfirmed
// (the log is unreachable) the delivery stops before their AckWait could run out and another
// process read them, so one batch is not sent by two processes at once.
func (f *Forwarder) deliver(ctx context.Context, q *eventlog.DispatchQueue, msgs []*eventlog.Dispatch, o *outage) {
	held, err := q.Hold(ctx, msgs...)
	if err != nil {
		settle(msgs, false)
		return
	}
	defer func() { _ = held.Release() }()
	ctx = held.Context()
	defer func() {
		if lost := held.Lost(); lost != nil {
			f.cfg.Logger.Warn("forward: traces left to be read again: their delivery could not be kept", "target", f.Target(), "err", lost)
		}
	}()
	backoff := f.cfg.MinBackoff
	var reqs []request
	for {
		var err error
		if reqs, err = f.requests(ctx, msgs); err == nil {
			break
		}
		if ctx.Err() != nil {
			settle(msgs, false)
			return
		}
		o.failed(err)
		_ = engine.Sleep(ctx, backoff)
		backoff = min(2*backoff, f.cfg.MaxBackoff)
	}
	for len(reqs) > 0 {
		res, err := f.send(ctx, reqs[0])
		switch {
		case ctx.Err() != nil:
			settle(msgs, false)
			return
		case err == nil:
			o.recovered()
			backoff = f.cfg.MinBackoff
			reqs = reqs[1:]
		case res == tooLarge && len(reqs[0]) > 1:
			half := len(reqs[0]) / 2
			reqs = append([]request{reqs[0][:half], reqs[0][half:]}, reqs[1:]...)
		case res == refused || res == tooLarge:
			f.cfg.Logger.Error("forward: the target refused traces for good; they are not sent again",
				"target", f.Target(), "items", len(reqs[0]), "err", err)
			reqs = reqs[1:]
		default:
			o.failed(err)
			_ = engine.Sleep(ctx, backoff)
			backoff = min(2*backoff, f.cfg.MaxBackoff)
		}
	}
	settle(msgs, true)
}

// settle acknowledges msgs (ack) or hands them back to be read again at once.
func settle(msgs []*eventlog.Dispatch, ack bool) {
	for _, m := range msgs {
		if ack {
			_ = m.Ack()
		} else {
			_ = m.Nak(0)
		}
	}
}

// requests decodes msgs' events and groups their items into requests.
func (f *Forwarder) requests(ctx context.Context, msgs []*eventlog.Dispatch) ([]request, error) {
	var items []item
	for _, m := range msgs {
		events, err := f.log.DecodeBody(ctx, m.Data())
		if err != nil {
			return nil, fmt.Errorf("forward: decode a trace stream message: %w", err)
		}
		for _, e := range events {
			if e.Aggregate.Kind != traces.TraceKind || e.Aggregate.Tenant != f.cfg.Tenant {
				continue
			}
			its, err := f.items(ctx, e)
			if err != nil {
				return nil, err
			}
			items = append(items, its...)
		}
	}
	return chunk(items, f.cfg.BatchSize, f.cfg.MaxRequestBytes), nil
}

// Outcomes of a request that failed.
type outcome int

const (
	retry    outcome = iota // the target is down or refuses the key: send it again later
	refused                 // the target will never take it (400, 409, 422)
	tooLarge                // 413: split it, or give up on a single item
)

// ingestAnswer is what a jetgraph target answers an ingestion (LangSmith answers less).
type ingestAnswer struct {
	Errors []engine.FieldError `json:"errors"`
}

// send POSTs one request; nil once the target answered 2xx.
func (f *Forwarder) send(ctx context.Context, r request) (outcome, error) {
	body, ctype, err := r.body()
	if err != nil {
		return refused, fmt.Errorf("forward: write the request: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.endpoint, bytes.NewReader(body))
	if err != nil {
		return refused, fmt.Errorf("forward: %w", err)
	}
	req.Header.Set("Content-Type", ctype)
	req.Header.Set("User-Agent", "jetgraph-trace-forwarder")
	if f.cfg.APIKey != "" {
		req.Header.Set("X-Api-Key", f.cfg.APIKey)
	}
	resp, err := f.cfg.Client.Do(req)
	if err != nil {
		return retry, fmt.Errorf("forward: POST %s: %w", f.endpoint, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 == 2 {
		var a ingestAnswer
		if json.Unmarshal(raw, &a) == nil && len(a.Errors) > 0 {
			f.cfg.Logger.Warn("forward: the target refused some traced items", "target", f.Target(), "problems", a.Errors)
		}
		return retry, nil
	}
	err = fmt.Errorf("forward: POST %s: %s: %s", f.endpoint, resp.Status, bytes.TrimSpace(raw))
	switch resp.StatusCode {
	case http.StatusBadRequest, http.StatusConflict, http.StatusUnprocessableEntity:
		return refused, err
	case http.StatusRequestEntityTooLarge:
		return tooLarge, err
	}
	return retry, err
}

// outage logs a failing target once a minute at most, and its recovery.
type outage struct {
	logger *slog.Logger
	target string
	since  time.Time
	logged time.Time
	count  int
}

func (o *outage) failed(err error) {
	now := time.Now()
	if o.since.IsZero() {
		o.since = now
	}
	o.count++
	if now.Sub(o.logged) >= outageLogEvery {
		o.logged = now
		o.logger.Warn("forward: traces not sent yet; retrying", "target", o.target, "attempts", o.count, "err", err)
	}
}

func (o *outage) recovered() {
	if o.since.IsZero() {
		return
	}
	o.logger.Info("forward: traces sent again", "target", o.target, "after", time.Since(o.since).Round(time.Millisecond), "attempts", o.count)
	o.since, o.logged, o.count = time.Time{}, time.Time{}, 0
}
