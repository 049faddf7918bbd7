package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jetgraph/jetgraph/cmd/jetgraph/proctree"
)

// compareTarget is one server of `jetgraph bench compare`: a base URL, the assistant run there
// and, optionally, the process whose tree's CPU time is charged to its runs.
type compareTarget struct {
	Name      string
	URL       string
	Assistant string
	PID       int // 0: CPU not measured
}

// compareConfig is what `jetgraph bench compare` is asked to do: the cycle of `bench runs`
// (benchConfig, whose URL and Assistant each target sets) against every target in turn.
type compareConfig struct {
	benchConfig
	Targets []string // name=...,url=...,assistant=...,pid=...
	Ratios  []string // a/b: target names
	Burst   int
}

// parseTarget reads a --target: comma-separated key=value pairs, url required; the assistant
// defaults to assistant, the name to assistant@host.
func parseTarget(spec, assistant string) (compareTarget, error) {
	t := compareTarget{Assistant: assistant}
	seen := map[string]bool{}
	for part := range strings.SplitSeq(spec, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok || v == "" {
			return t, fmt.Errorf("--target %q: %q is not key=value", spec, part)
		}
		if seen[k] {
			return t, fmt.Errorf("--target %q: %s given twice", spec, k)
		}
		seen[k] = true
		switch k {
		case "name":
			t.Name = v
		case "url":
			t.URL = v
		case "assistant":
			t.Assistant = v
		case "pid":
			pid, err := strconv.Atoi(v)
			if err != nil || pid < 1 {
				return t, fmt.Errorf("--target %q: pid %q is not a process id", spec, v)
			}
			t.PID = pid
		default:
			return t, fmt.Errorf("--target %q: unknown key %q (want name, url, assistant, pid)", spec, k)
		}
	}
	if t.URL == "" {
		return t, fmt.Errorf("--target %q: url is required", spec)
	}
	if t.Name == "" {
		host := t.URL
		if u, err := url.Parse(t.URL); err == nil && u.Host != "" {
			host = u.Host
		}
		t.Name = t.Assistant + "@" + host
	}
	return t, nil
}

// targetReport is one target's outcome: the report `bench runs` gives for it over its bursts
// (elapsed is the sum of its bursts' wall time), and the CPU its process tree used during them.
type targetReport struct {
	Name string `json:"name"`
	benchReport
	PID int `json:"pid,omitempty"`
	// CPUSeconds is the tree's CPU time over the target's bursts, CPUMsPerRun that over its
	// successful cycles, CPUPercent that over its bursts' wall time (200 is two cores busy).
	// Absent without a pid or where the CPU is not read (see compareReport.CPUNote).
	CPUSeconds  *float64 `json:"cpu_seconds,omitempty"`
	CPUMsPerRun *float64 `json:"cpu_ms_per_run,omitempty"`
	CPUPercent  *float64 `json:"cpu_percent,omitempty"`
	// RootMsPerRun is the part of CPUMsPerRun the pid's own process used (a supervisor
	// without its hosts, a dev server without its workers).
	RootMsPerRun *float64 `json:"root_cpu_ms_per_run,omitempty"`
	Procs        int      `json:"processes,omitempty"` // processes in the tree at the end
}

// compareReport is the outcome of `jetgraph bench compare`, and its --json form.
type compareReport struct {
	Mode        string         `json:"mode"` // threads or stateless
	N           int            `json:"n"`
	Concurrency int            `json:"concurrency"`
	Warmup      int            `json:"warmup"`
	Burst       int            `json:"burst"`
	Rounds      int            `json:"rounds"`
	Interrupted bool           `json:"interrupted,omitempty"`
	CPUNote     string         `json:"cpu_note,omitempty"`
	Targets     []targetReport `json:"targets"`
	Ratios      []ratio        `json:"ratios,omitempty"`
}

// ratio compares two targets: A's runs/s over B's, and A's CPU per run over B's (absent when
// either was not measured or B's is zero).
type ratio struct {
	A             string   `json:"a"`
	B             string   `json:"b"`
	RunsPerSecond float64  `json:"runs_per_second"`
	CPUPerRun     *float64 `json:"cpu_per_run,omitempty"`
}

// ratioOf compares a and b.
func ratioOf(a, b targetReport) ratio {
	r := ratio{A: a.Name, B: b.Name}
	if b.RunsPerSecond > 0 {
		r.RunsPerSecond = math.Round(a.RunsPerSecond/b.RunsPerSecond*100) / 100
	}
	if a.CPUMsPerRun != nil && b.CPUMsPerRun != nil && *b.CPUMsPerRun > 0 {
		v := math.Round(*a.CPUMsPerRun / *b.CPUMsPerRun * 100) / 100
		r.CPUPerRun = &v
	}
	return r
}

// benchCompareCommand is `jetgraph bench compare`.
func benchCompareCommand(stdout io.Writer) *cobra.Command {
	var c compareConfig
	cmd := &cobra.Command{
		Use:   "compare",
		Short: "Drive several servers with the same cycles, interleaved, and compare them",
		Long: `Run the cycle of 'jetgraph bench runs' against several targets side by side: N measured
cycles each, in bursts of --burst cycles at concurrency C, the targets taking turns (the order
rotates every round) so that whatever else loads the machine loads them alike. Per target it
prints runs/s (successful cycles over the wall time of its own bursts), the p50/p95/p99 latency of
the whole cycle and of the runs/wait call, and, for a target given a pid, the CPU time that
process and all its descendants used during its bursts, per successful run (and the part of it
the pid's own process used).

A target is --target name=NAME,url=URL[,assistant=ID][,pid=PID] (the assistant defaults to
--assistant). The CPU is read from /proc on Linux: utime+stime of every live process of the
tree plus the time of the children they reaped; on other systems the CPU columns are empty and
the report says why. Exits non-zero when any measured cycle failed.`,
		Example: `  jetgraph bench compare --n 400 -c 16 \
    --target name=jetgraph,url=http://127.0.0.1:8123,assistant=ts_echo,pid=$(cat jg.pid) \
    --target name=reference,url=http://127.0.0.1:2024,assistant=ts_echo,pid=$(cat ref.pid)`,
		Args: cobra.NoArgs,
		RunE: untilInterrupted(func(ctx context.Context) error { return runCompare(ctx, c, stdout) }),
	}
	f := cmd.Flags()
	f.StringArrayVar(&c.Targets, "target", nil, "a server to measure: name=NAME,url=URL[,assistant=ID][,pid=PID] (repeat for each)")
	f.IntVar(&c.Burst, "burst", 100, "cycles a target runs before the next takes its turn")
	f.StringArrayVar(&c.Ratios, "ratio", nil, "also report A's runs/s and CPU per run over B's: A/B, two target names (repeatable)")
	f.StringVar(&c.Assistant, "assistant", "echo", "assistant id or graph id of targets that name none")
	cycleFlags(f, &c.benchConfig, 400, 10) // per target
	return cmd
}

// comparer is one target's bencher and what was measured of it so far.
type comparer struct {
	target  compareTarget
	b       *bencher
	results []cycleResult
	elapsed time.Duration
	cpu     time.Duration
	rootCPU time.Duration
	cpuErr  error
	procs   int
}

func runCompare(ctx context.Context, c compareConfig, w io.Writer) error {
	if len(c.Targets) == 0 {
		return errors.New("--target is required (one per server to measure)")
	}
	if c.Burst < 1 {
		return errors.New("--burst must be at least 1")
	}
	var cs []*comparer
	names := map[string]bool{}
	for _, spec := range c.Targets {
		t, err := parseTarget(spec, c.Assistant)
		if err != nil {
			return err
		}
		if names[t.Name] {
			return fmt.Errorf("--target %q: two targets are named %s", spec, t.Name)
		}
		names[t.Name] = true
		bc := c.benchConfig
		bc.URL, bc.Assistant = t.URL, t.Assistant
		b, err := newBencher(bc)
		if err != nil {
			return fmt.Errorf("--target %s: %w", t.Name, err)
		}
		defer b.client.CloseIdleConnections()
		cs = append(cs, &comparer{target: t, b: b})
	}
	var pairs [][2]string
	for _, spec := range c.Ratios {
		a, b, ok := strings.Cut(spec, "/")
		if !ok || !names[a] || !names[b] {
			return fmt.Errorf("--ratio %q: want A/B, two of the targets' names", spec)
		}
		pairs = append(pairs, [2]string{a, b})
	}
	rep := compareReport{Mode: "threads", N: c.N, Concurrency: c.Concurrency, Warmup: c.Warmup, Burst: c.Burst}
	if c.Stateless {
		rep.Mode = "stateless"
	}
	for _, x := range cs {
		if x.target.PID == 0 {
			continue
		}
		if _, err := proctree.Read(x.target.PID); errors.Is(err, proctree.ErrUnsupported) {
			rep.CPUNote = "CPU not measured: " + err.Error()
		} else if err != nil {
			return fmt.Errorf("--target %s: %w", x.target.Name, err)
		}
	}
	// Warm-up, each target in turn.
	for _, x := range cs {
		if c.Warmup == 0 {
			break
		}
		warm, _ := x.b.phase(ctx, c.Warmup)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err := warmupFailed(warm); err != nil {
			return fmt.Errorf("--target %s: %w", x.target.Name, err)
		}
	}
	// Rounds: every target runs one burst, starting one further along each round.
	rep.Rounds = (c.N + c.Burst - 1) / c.Burst
	for round := 0; round < rep.Rounds && ctx.Err() == nil; round++ {
		n := min(c.Burst, c.N-round*c.Burst)
		for i := range cs {
			x := cs[(round+i)%len(cs)]
			x.burst(ctx, n, rep.CPUNote == "")
		}
	}
	rep.Interrupted = ctx.Err() != nil
	byName := map[string]targetReport{}
	for _, x := range cs {
		t := x.report(rep.Interrupted)
		rep.Targets, byName[t.Name] = append(rep.Targets, t), t
		if x.cpuErr != nil {
			return fmt.Errorf("--target %s: %w", x.target.Name, x.cpuErr)
		}
	}
	for _, p := range pairs {
		rep.Ratios = append(rep.Ratios, ratioOf(byName[p[0]], byName[p[1]]))
	}
	if err := writeReport(w, rep, c.JSON); err != nil {
		return err
	}
	failed, total := 0, 0
	for _, t := range rep.Targets {
		failed, total = failed+t.Errors, total+t.Completed
	}
	if failed > 0 {
		return fmt.Errorf("bench: %d of %d cycles failed", failed, total)
	}
	return nil
}

// warmupFailed is an error when every warm-up cycle failed: the target is not serving.
func warmupFailed(warm []cycleResult) error {
	failed, first := 0, ""
	for _, r := range warm {
		if r.err != "" {
			if failed == 0 {
				first = r.err
			}
			failed++
		}
	}
	if failed == len(warm) {
		return fmt.Errorf("bench: every warm-up cycle failed (%d); first error: %s", failed, first)
	}
	return nil
}

// burst runs n cycles against the target and adds their wall time and, with readCPU and a pid,
// the CPU its process tree used meanwhile.
func (x *comparer) burst(ctx context.Context, n int, readCPU bool) {
	readCPU = readCPU && x.target.PID != 0 && x.cpuErr == nil
	var before proctree.Usage
	if readCPU {
		before, x.cpuErr = proctree.Read(x.target.PID)
		readCPU = x.cpuErr == nil
	}
	results, elapsed := x.b.phase(ctx, n)
	if readCPU {
		after, err := proctree.Read(x.target.PID)
		if err != nil {
			x.cpuErr = fmt.Errorf("reading the CPU of its process tree (did the server exit?): %w", err)
		} else {
			x.cpu += max(after.CPU-before.CPU, 0) // a child that exited unreaped takes its time with it
			x.rootCPU += max(after.Root-before.Root, 0)
			x.procs = len(after.Procs)
		}
	}
	x.results = append(x.results, results...)
	x.elapsed += elapsed
}

// report is the target's outcome so far.
func (x *comparer) report(interrupted bool) targetReport {
	r := targetReport{Name: x.target.Name, PID: x.target.PID, Procs: x.procs,
		benchReport: x.b.report(x.results, x.elapsed, interrupted)}
	if x.target.PID != 0 && x.procs > 0 {
		secs := round3(x.cpu.Seconds())
		r.CPUSeconds = &secs
		if r.OK > 0 {
			ms, root := round3(x.cpu.Seconds()*1e3/float64(r.OK)), round3(x.rootCPU.Seconds()*1e3/float64(r.OK))
			r.CPUMsPerRun, r.RootMsPerRun = &ms, &root
		}
		if x.elapsed > 0 {
			pct := math.Round(x.cpu.Seconds() / x.elapsed.Seconds() * 100)
			r.CPUPercent = &pct
		}
	}
	return r
}

func round3(f float64) float64 { return math.Round(f*1e3) / 1e3 }

// writeTable prints the report for people, one row per target.
func (r compareReport) writeTable(w io.Writer) error {
	var b strings.Builder
	what := "POST /threads + POST /threads/{id}/runs/wait"
	if r.Mode == "stateless" {
		what = "POST /runs/wait"
	}
	fmt.Fprintf(&b, "jetgraph bench compare: %d targets, %d cycles each (+%d warm-up), concurrency %d, bursts of %d over %d rounds\n",
		len(r.Targets), r.N, r.Warmup, r.Concurrency, r.Burst, r.Rounds)
	fmt.Fprintf(&b, "cycle: %s", what)
	if r.Interrupted {
		b.WriteString(" (interrupted)")
	}
	b.WriteString("\n\n")
	width := len("target")
	for _, t := range r.Targets {
		width = max(width, len(t.Name))
	}
	fmt.Fprintf(&b, "%-*s %9s %9s %9s %9s %9s %9s %9s %11s %12s %7s %6s %7s\n", width, "target", "runs/s", "p50 ms", "p95 ms",
		"p99 ms", "wait p50", "wait p95", "wait p99", "cpu ms/run", "(root pid)", "cpu %", "ok", "errors")
	opt := func(v *float64, format string) string {
		if v == nil {
			return "-"
		}
		return fmt.Sprintf(format, *v)
	}
	for _, t := range r.Targets {
		fmt.Fprintf(&b, "%-*s %9.1f %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f %11s %12s %7s %6d %7d\n", width, t.Name, t.RunsPerSecond,
			t.Cycle.P50, t.Cycle.P95, t.Cycle.P99, t.Wait.P50, t.Wait.P95, t.Wait.P99, opt(t.CPUMsPerRun, "%.2f"), opt(t.RootMsPerRun, "%.2f"),
			opt(t.CPUPercent, "%.0f"), t.OK, t.Errors)
	}
	b.WriteString("\n")
	for _, t := range r.Targets {
		fmt.Fprintf(&b, "%-*s %s, assistant %s", width, t.Name, t.URL, t.Assistant)
		if t.PID != 0 {
			fmt.Fprintf(&b, ", CPU of pid %d and its descendants (%d processes)", t.PID, t.Procs)
		}
		b.WriteString("\n")
	}
	if len(r.Ratios) > 0 {
		b.WriteString("\n")
		for _, q := range r.Ratios {
			fmt.Fprintf(&b, "%s / %s: %.2fx the runs/s", q.A, q.B, q.RunsPerSecond)
			if q.CPUPerRun != nil {
				fmt.Fprintf(&b, ", %.2fx the CPU per run", *q.CPUPerRun)
			}
			b.WriteString("\n")
		}
	}
	if r.CPUNote != "" {
		fmt.Fprintf(&b, "\n%s\n", r.CPUNote)
	}
	for _, t := range r.Targets {
		if len(t.ErrorSamples) > 0 {
			fmt.Fprintf(&b, "\nfirst errors of %s:\n", t.Name)
			for _, e := range t.ErrorSamples {
				fmt.Fprintf(&b, "  %s\n", e)
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
