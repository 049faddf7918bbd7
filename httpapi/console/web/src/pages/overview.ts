// The Overview page: jetgraph's /metrics (Prometheus text) read every few seconds and drawn as
// small charts over the last minutes: runs per second, the queue (pending runs), active runs,
// errors (runs ending in error or timeout, and HTTP 5xx answers) and latency (run duration and
// HTTP answers, p50 and p95 between two reads). The series live in the page: leaving it forgets
// them.

import { h, mount, pageSignal, s } from "../dom.js";
import { type Sample, Series, buckets, parseProm, path, quantile, rate, sum } from "../prom.js";

/** How often /metrics is read, and how far back the charts go. */
const pollMs = 2000;
const windowMs = 5 * 60_000;

/** A chart: its title, unit, and how a value is computed from two reads dt seconds apart. */
interface Chart {
  id: string;
  title: string;
  unit: string;
  value: (cur: Sample[], prev: Sample[] | null, dt: number) => number | null;
}

const ended = "jetgraph_runs_ended_total";
const failed = { status: (v: string) => v === "error" || v === "timeout" };
const server5xx = { status: (v: string) => v.startsWith("5") };

const charts: Chart[] = [
  {
    id: "runs-per-second",
    title: "Runs per second (ended)",
    unit: "runs/s",
    // The ended counter has a series once a run ended; the created one says the server exports runs.
    value: (c, p, dt) => (p && sum(c, "jetgraph_runs_created_total") !== null ? rate(sum(p, ended) ?? 0, sum(c, ended) ?? 0, dt) : null),
  },
  { id: "queue", title: "Queue (pending runs)", unit: "runs", value: (c) => sum(c, "jetgraph_runs_pending") },
  { id: "active", title: "Active runs", unit: "runs", value: (c) => sum(c, "jetgraph_runs_running") },
  {
    id: "run-errors",
    title: "Runs failing per second",
    unit: "runs/s",
    value: (c, p, dt) => (p && sum(c, "jetgraph_runs_created_total") !== null ? rate(sum(p, ended, failed) ?? 0, sum(c, ended, failed) ?? 0, dt) : null),
  },
  {
    id: "run-p50",
    title: "Run duration p50",
    unit: "s",
    value: (c, p) => quantile(0.5, buckets(c, "jetgraph_run_duration_seconds"), p ? buckets(p, "jetgraph_run_duration_seconds") : undefined),
  },
  {
    id: "run-p95",
    title: "Run duration p95",
    unit: "s",
    value: (c, p) => quantile(0.95, buckets(c, "jetgraph_run_duration_seconds"), p ? buckets(p, "jetgraph_run_duration_seconds") : undefined),
  },
  {
    id: "http-5xx",
    title: "HTTP 5xx per second",
    unit: "req/s",
    value: (c, p, dt) =>
      p ? rate(sum(p, "jetgraph_http_requests_total", server5xx) ?? 0, sum(c, "jetgraph_http_requests_total", server5xx) ?? 0, dt) : null,
  },
  {
    id: "http-p95",
    title: "HTTP answer p95",
    unit: "s",
    value: (c, p) =>
      quantile(0.95, buckets(c, "jetgraph_http_request_duration_seconds"), p ? buckets(p, "jetgraph_http_request_duration_seconds") : undefined),
  },
];

/** fmt renders a chart's value with its unit. */
function fmt(v: number | null, unit: string): string {
  if (v === null || !Number.isFinite(v)) return "–";
  if (unit === "s") return v < 1 ? `${(v * 1000).toFixed(v < 0.01 ? 2 : 0)} ms` : `${v.toFixed(2)} s`;
  const n = Number.isInteger(v) ? String(v) : v.toFixed(v < 10 ? 2 : 1);
  return `${n} ${unit}`;
}

const width = 300;
const height = 60;

export async function render(root: HTMLElement, _params: Record<string, string>): Promise<void> {
  const signal = pageSignal();
  const series = new Map(charts.map((c) => [c.id, new Series(windowMs)]));
  const cards = new Map<string, { value: HTMLElement; line: SVGPathElement; max: HTMLElement }>();
  const status = h("p", { class: "muted", role: "status" }, "Reading /metrics...");
  const grid = h("div", { class: "charts" });
  for (const c of charts) {
    const value = h("div", { class: "chart-value", "data-chart-value": c.id }, "–");
    const line = s("path", { class: "chart-line", d: "" });
    const max = h("div", { class: "chart-max" }, "");
    grid.append(
      h(
        "figure",
        { class: "chart", "data-chart": c.id },
        h("figcaption", null, c.title),
        value,
        s(
          "svg",
          { class: "spark", viewBox: `0 0 ${width} ${height}`, preserveAspectRatio: "none", role: "img", "aria-label": `${c.title} over the last ${windowMs / 60_000} minutes` },
          s("line", { class: "chart-base", x1: "0", x2: String(width), y1: String(height - 0.5), y2: String(height - 0.5) }),
          line,
        ),
        max,
      ),
    );
    cards.set(c.id, { value, line, max });
  }
  mount(
    root,
    h("h1", null, "Overview"),
    h("p", { class: "muted" }, `This server's /metrics, read every ${pollMs / 1000} seconds; the charts show the last ${windowMs / 60_000} minutes since this page opened.`),
    status,
    grid,
  );

  let prev: { at: number; samples: Sample[] } | null = null;
  const read = async (): Promise<void> => {
    const res = await fetch("/metrics", { headers: { Accept: "text/plain" }, signal });
    if (!res.ok) throw new Error(`GET /metrics: ${res.status}`);
    const samples = parseProm(await res.text());
    const at = Date.now();
    const dt = prev ? (at - prev.at) / 1000 : 0;
    for (const c of charts) series.get(c.id)?.push(at, c.value(samples, prev?.samples ?? null, dt));
    prev = { at, samples };
    const exported = sum(samples, "jetgraph_runs_pending") !== null;
    status.textContent = exported
      ? `Updated ${new Date(at).toLocaleTimeString()}.`
      : `Updated ${new Date(at).toLocaleTimeString()}. This server exports no run metrics (jetgraph_runs_*): only the HTTP charts have data.`;
    for (const c of charts) {
      const card = cards.get(c.id);
      const ser = series.get(c.id);
      if (!card || !ser) continue;
      const p = path(ser.points, at, windowMs, width, height);
      card.line.setAttribute("d", p.d);
      card.max.textContent = p.max > 0 ? `max ${fmt(p.max, c.unit)}` : "";
      card.value.textContent = fmt(ser.last(), c.unit);
    }
  };
  const tick = (): void => {
    read().catch((err: unknown) => {
      if (!signal.aborted) status.textContent = `Could not read /metrics: ${err instanceof Error ? err.message : String(err)}`;
    });
  };
  const timer = setInterval(tick, pollMs);
  signal.addEventListener("abort", () => clearInterval(timer), { once: true });
  await read().catch((err: unknown) => {
    status.textContent = `Could not read /metrics: ${err instanceof Error ? err.message : String(err)}`;
  });
}
