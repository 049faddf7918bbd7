package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// benchConfig is what `jetgraph bench runs` is asked to do.
type benchConfig struct {
	URL         string
	N           int
	Concurrency int
	Warmup      int
	Assistant   string
	Input       string
	APIKey      string
	Stateless   bool
	JSON        bool
	Timeout     time.Duration
}

const defaultBenchInput = `{"messages":[{"role":"user","content":"hi"}]}`

// benchCommand is `jetgraph bench`, load generators for any LangGraph-compatible server.
func benchCommand(stdout io.Writer) *cobra.Command {
	bench := &cobra.Command{
		Use:   "bench",
		Short: "Drive a LangGraph-compatible server with load and report throughput and latency",
	}
	var c benchConfig
	runs := &cobra.Command{
		Use:   "runs",
		Short: "Create threads and wait for runs on them, N times at concurrency C",
		Long: `Drive any LangGraph-compatible base URL with N cycles of
  POST /threads, then POST /threads/{thread_id}/runs/wait {assistant_id, input}
(or, with --stateless, one POST /runs/wait per cycle) on C connections, and print runs/s, the
p50/p90/p99 latency of the runs/wait call and of the whole cycle, and the errors. A few warm-up
cycles run first and are not counted. A cycle fails on a transport error, a timeout, a non-2xx
answer or a run that ended in error (an "__error__" key in the answer).

It exits non-zero when any measured cycle failed. Flags can also be set from the environment as
JETGRAPH_<FLAG> (JETGRAPH_URL, JETGRAPH_API_KEY, ...).`,
		Example: `  jetgraph bench runs --url http://localhost:8123 --n 1000 --concurrency 16 --assistant echo
  jetgraph bench runs --stateless --json --n 200`,
		Args: cobra.NoArgs,
		RunE: untilInterrupted(func(ctx context.Context) error { return runBench(ctx, c, stdout) }),
	}
	f := runs.Flags()
	f.StringVar(&c.URL, "url", "http://localhost:8123", "base URL of the server")
	f.StringVar(&c.Assistant, "assistant", "echo", "assistant id or graph id to run")
	cycleFlags(f, &c, 1000, 5)
	bench.AddCommand(runs, benchCompareCommand(stdout))
	return bench
}

// writeReport prints a report as indented JSON or as its table.
func writeReport(w io.Writer, rep interface{ writeTable(io.Writer) error }, asJSON bool) error {
	if !asJSON {
		return rep.writeTable(w)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

// untilInterrupted runs a load whose context ends at Ctrl-C or SIGTERM, so that it reports
// what it measured so far.
func untilInterrupted(load func(context.Context) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, _ []string) error {
		ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		return load(ctx)
	}
}

// cycleFlags defines the flags of the cycle and its load, which `bench runs` and `bench
// compare` share.
func cycleFlags(f *pflag.FlagSet, c *benchConfig, n, warmup int) {
	f.IntVarP(&c.N, "n", "n", n, "measured cycles")
	f.IntVarP(&c.Concurrency, "concurrency", "c", 16, "cycles in flight at once")
	f.IntVar(&c.Warmup, "warmup", warmup, "warm-up cycles run first and not counted")
	f.StringVar(&c.Input, "input", defaultBenchInput, "run input, as JSON")
	f.StringVar(&c.APIKey, "api-key", "", "value of the x-api-key header")
	f.BoolVar(&c.Stateless, "stateless", false, "use POST /runs/wait without threads")
	f.BoolVar(&c.JSON, "json", false, "print the report as JSON")
	f.DurationVar(&c.Timeout, "timeout", time.Minute, "timeout of each request")
}

// benchReport is the outcome of a bench, and its --json form. Latencies are in milliseconds over
// the successful cycles; runs_per_second counts successful cycles over the measured wall time.
type benchReport struct {
	URL            string        `json:"url"`
	Mode           string        `json:"mode"` // threads or stateless
	Assistant      string        `json:"assistant"`
	N              int           `json:"n"`
	Concurrency    int           `json:"concurrency"`
	Warmup         int           `json:"warmup"`
	Completed      int           `json:"completed"` // measured cycles that ran (N unless interrupted)
	Interrupted    bool          `json:"interrupted,omitempty"`
	ElapsedSeconds float64       `json:"elapsed_seconds"`
	RunsPerSecond  float64       `json:"runs_per_second"`
	OK             int           `json:"ok"`
	Errors         int           `json:"errors"`
	ErrorSamples   []string      `json:"error_samples"`
	Thread         *latencyStats `json:"thread_create,omitempty"` // POST /threads; threads mode only
	Wait           latencyStats  `json:"wait"`                    // POST .../runs/wait
	Cycle          latencyStats  `json:"cycle"`                   // the whole cycle
}

// latencyStats summarises durations, in milliseconds.
type latencyStats struct {
	Count int     `json:"count"`
	Mean  float64 `json:"mean_ms"`
	P50   float64 `json:"p50_ms"`
	P90   float64 `json:"p90_ms"`
	P95   float64 `json:"p95_ms"`
	P99   float64 `json:"p99_ms"`
	Max   float64 `json:"max_ms"`
}

// maxErrorSamples is how many distinct error texts a report keeps.
const maxErrorSamples = 5

// cycleResult is one cycle's outcome.
type cycleResult struct {
	done                bool
	thread, wait, total time.Duration
	err                 string
}

// bencher runs cycles against one server.
type bencher struct {
	cfg     benchConfig
	base    string
	client  *http.Client
	runBody []byte
}

func runBench(ctx context.Context, c benchConfig, w io.Writer) error {
	b, err := newBencher(c)
	if err != nil {
		return err
	}
	defer b.client.CloseIdleConnections()
	if c.Warmup > 0 {
		warm, _ := b.phase(ctx, c.Warmup)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err := warmupFailed(warm); err != nil {
			return err
		}
	}
	results, elapsed := b.phase(ctx, c.N)
	rep := b.report(results, elapsed, ctx.Err() != nil)
	if err := writeReport(w, rep, c.JSON); err != nil {
		return err
	}
	if rep.Errors > 0 {
		return fmt.Errorf("bench: %d of %d cycles failed", rep.Errors, rep.Completed)
	}
	return nil
}

func newBencher(c benchConfig) (*bencher, error) {
	switch {
	case c.N < 1:
		return nil, errors.New("--n must be at least 1")
	case c.Concurrency < 1:
		return nil, errors.New("--concurrency must be at least 1")
	case c.Warmup < 0:
		return nil, errors.New("--warmup must not be negative")
	case c.Timeout <= 0:
		return nil, errors.New("--timeout must be positive")
	case c.Assistant == "":
		return nil, errors.New("--assistant is required")
	}
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--url %q: want an absolute http(s) URL", c.URL)
	}
	if !json.Valid([]byte(c.Input)) {
		return nil, fmt.Errorf("--input is not valid JSON: %s", c.Input)
	}
	body, err := json.Marshal(map[string]any{"assistant_id": c.Assistant, "input": json.RawMessage(c.Input)})
	if err != nil {
		return nil, err
	}
	tr := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        c.Concurrency,
		MaxIdleConnsPerHost: c.Concurrency,
		MaxConnsPerHost:     c.Concurrency,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: 10 * time.Second,
		ForceAttemptHTTP2:   true,
	}
	return &bencher{cfg: c, base: strings.TrimRight(c.URL, "/"), client: &http.Client{Transport: tr}, runBody: body}, nil
}

// phase runs n cycles on cfg.Concurrency workers and returns their results in cycle order, and
// the wall time it took. It stops early when ctx ends; cycles not run are not done.
func (b *bencher) phase(ctx context.Context, n int) ([]cycleResult, time.Duration) {
	results := make([]cycleResult, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range min(b.cfg.Concurrency, n) {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n || ctx.Err() != nil {
					return
				}
				results[i] = b.cycle(ctx)
			}
		})
	}
	wg.Wait()
	return results, time.Since(start)
}

// cycle creates a thread and waits for a run on it (or runs statelessly).
func (b *bencher) cycle(ctx context.Context) cycleResult {
	r := cycleResult{}
	start := time.Now()
	path, label := "/runs/wait", "POST /runs/wait"
	if !b.cfg.Stateless {
		raw, err := b.post(ctx, "/threads", []byte(`{}`), "POST /threads")
		r.thread = time.Since(start)
		if err != nil {
			return b.fail(ctx, r, err)
		}
		var th struct {
			ThreadID string `json:"thread_id"`
		}
		if err := json.Unmarshal(raw, &th); err != nil || th.ThreadID == "" {
			return b.fail(ctx, r, fmt.Errorf("POST /threads: no thread_id in %s", clip(raw)))
		}
		path, label = "/threads/"+url.PathEscape(th.ThreadID)+"/runs/wait", "POST /threads/{id}/runs/wait"
	}
	waitStart := time.Now()
	raw, err := b.post(ctx, path, b.runBody, label)
	r.wait = time.Since(waitStart)
	r.total = time.Since(start)
	if err != nil {
		return b.fail(ctx, r, err)
	}
	var out map[string]json.RawMessage
	if err := json.Unmarshal(raw, &out); err != nil {
		return b.fail(ctx, r, fmt.Errorf("%s: answer is not a JSON object: %s", label, clip(raw)))
	}
	if e, ok := out["__error__"]; ok {
		return b.fail(ctx, r, fmt.Errorf("%s: run failed: %s", label, clip(e)))
	}
	r.done = true
	return r
}

// fail marks r failed with err, or not done when the bench itself was interrupted.
func (b *bencher) fail(ctx context.Context, r cycleResult, err error) cycleResult {
	if ctx.Err() != nil {
		return cycleResult{} // interrupted: the cycle does not count
	}
	r.done, r.err = true, err.Error()
	return r
}

// post sends one JSON request with the per-request timeout and returns the 2xx answer's body.
func (b *bencher) post(ctx context.Context, path string, body []byte, label string) ([]byte, error) {
	rctx, cancel := context.WithTimeout(ctx, b.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, b.base+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "jetgraph-bench/"+moduleVersion())
	if b.cfg.APIKey != "" {
		req.Header.Set("x-api-key", b.cfg.APIKey)
	}
	resp, err := b.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its text repeats the URL
		}
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			return nil, fmt.Errorf("%s: timed out after %v", label, b.cfg.Timeout)
		}
		return nil, fmt.Errorf("%s: %v", label, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("%s: reading the answer: %v", label, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, fmt.Errorf("%s: %s: %s", label, resp.Status, clip(raw))
	}
	return raw, nil
}

// clip shortens an answer for an error message.
func clip(raw []byte) string {
	s := strings.TrimSpace(string(raw))
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// report summarises the measured cycles.
func (b *bencher) report(results []cycleResult, elapsed time.Duration, interrupted bool) benchReport {
	c := b.cfg
	rep := benchReport{
		URL: b.base, Mode: "threads", Assistant: c.Assistant, N: c.N, Concurrency: c.Concurrency,
		Warmup: c.Warmup, Interrupted: interrupted, ElapsedSeconds: math.Round(elapsed.Seconds()*1e3) / 1e3,
		ErrorSamples: []string{},
	}
	if c.Stateless {
		rep.Mode = "stateless"
	}
	var thread, wait, total []time.Duration
	for _, r := range results {
		if !r.done {
			continue
		}
		rep.Completed++
		if r.err != "" {
			rep.Errors++
			if len(rep.ErrorSamples) < maxErrorSamples && !slices.Contains(rep.ErrorSamples, r.err) {
				rep.ErrorSamples = append(rep.ErrorSamples, r.err)
			}
			continue
		}
		rep.OK++
		thread, wait, total = append(thread, r.thread), append(wait, r.wait), append(total, r.total)
	}
	if elapsed > 0 {
		rep.RunsPerSecond = math.Round(float64(rep.OK)/elapsed.Seconds()*100) / 100
	}
	if !c.Stateless {
		s := summarise(thread)
		rep.Thread = &s
	}
	rep.Wait, rep.Cycle = summarise(wait), summarise(total)
	return rep
}

// summarise computes nearest-rank percentiles of ds.
func summarise(ds []time.Duration) latencyStats {
	s := latencyStats{Count: len(ds)}
	if len(ds) == 0 {
		return s
	}
	slices.Sort(ds)
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	rank := func(p float64) float64 {
		i := int(math.Ceil(p/100*float64(len(ds)))) - 1
		return msOf(ds[max(i, 0)])
	}
	s.Mean = msOf(sum / time.Duration(len(ds)))
	s.P50, s.P90, s.P95, s.P99, s.Max = rank(50), rank(90), rank(95), rank(99), msOf(ds[len(ds)-1])
	return s
}

func msOf(d time.Duration) float64 { return math.Round(float64(d)/1e3) / 1e3 }

// writeTable prints the report for people.
func (r benchReport) writeTable(w io.Writer) error {
	var b strings.Builder
	what := "POST /threads + POST /threads/{id}/runs/wait"
	if r.Mode == "stateless" {
		what = "POST /runs/wait"
	}
	fmt.Fprintf(&b, "jetgraph bench runs: %s\n", r.URL)
	fmt.Fprintf(&b, "cycle: %s, assistant %s\n", what, r.Assistant)
	fmt.Fprintf(&b, "cycles %d (+%d warm-up), concurrency %d, elapsed %.2fs", r.Completed, r.Warmup, r.Concurrency, r.ElapsedSeconds)
	if r.Interrupted {
		fmt.Fprintf(&b, " (interrupted: %d of %d cycles ran)", r.Completed, r.N)
	}
	b.WriteString("\n\n")
	fmt.Fprintf(&b, "%-13s%9.1f\n", "runs/s", r.RunsPerSecond)
	fmt.Fprintf(&b, "%-13s%9d\n", "ok", r.OK)
	fmt.Fprintf(&b, "%-13s%9d\n", "errors", r.Errors)
	fmt.Fprintf(&b, "\n%-13s%9s%9s%9s%9s%9s\n", "latency (ms)", "p50", "p90", "p99", "mean", "max")
	row := func(name string, s latencyStats) {
		fmt.Fprintf(&b, "%-13s%9.2f%9.2f%9.2f%9.2f%9.2f\n", name, s.P50, s.P90, s.P99, s.Mean, s.Max)
	}
	if r.Thread != nil {
		row("threads", *r.Thread)
	}
	row("runs/wait", r.Wait)
	row("cycle", r.Cycle)
	if len(r.ErrorSamples) > 0 {
		b.WriteString("\nfirst errors:\n")
		for _, e := range r.ErrorSamples {
			fmt.Fprintf(&b, "  %s\n", e)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
