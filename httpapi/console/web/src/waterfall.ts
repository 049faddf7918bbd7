// A trace as a waterfall: its spans ordered by dotted_order (a parent before its children, the
// children in start order), indented by depth, with each bar's offset and width as fractions of
// the trace's time span, time to first token within the bar, and tokens and cost rolled up from
// the spans below. Pure: no DOM, so `node --test` checks it on the compiled output.

/** A span of a trace as the tracing API answers it (the fields the waterfall reads). */
export interface Span {
  id: string;
  trace_id?: string;
  parent_run_id?: string | null;
  dotted_order?: string;
  name: string;
  run_type: string;
  status?: string;
  start_time: string;
  end_time?: string | null;
  error?: string | null;
  first_token_time?: string | null;
  prompt_tokens?: number;
  completion_tokens?: number;
  total_tokens?: number;
  prompt_cost?: number | null;
  completion_cost?: number | null;
  total_cost?: number | null;
}

/** Tokens and cost of a span with everything below it, and what went wrong there. */
export interface Rollup {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  /** cost is null when no span below carries one (a model without a price). */
  cost: number | null;
  llmCalls: number;
  errors: number;
}

/** One row of the waterfall. */
export interface Row {
  span: Span;
  depth: number;
  /** offset and width of the bar: fractions of the trace's span, 0..1. */
  offset: number;
  width: number;
  /** durationMs is the span's time, or up to now while it runs. */
  durationMs: number;
  running: boolean;
  failed: boolean;
  /** ttft is where the first token came, as a fraction of the trace's span; ttftMs its delay. */
  ttft: number | null;
  ttftMs: number | null;
  /** own is the span's own tokens and cost; total adds every span below it. */
  own: Rollup;
  total: Rollup;
}

/** A laid-out trace. */
export interface Waterfall {
  rows: Row[];
  startMs: number;
  endMs: number;
  totalMs: number;
  /** totals are the trace's, rolled up over its roots. */
  totals: Rollup;
}

/** minWidth keeps an instant span's bar visible. */
export const minWidth = 0.004;

function ms(t: string | null | undefined): number | null {
  if (!t) return null;
  // The API answers microseconds; Date keeps milliseconds, which is the bar's resolution.
  const v = Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(t) ? t : t + "Z");
  return Number.isNaN(v) ? null : v;
}

function isFailed(s: Span): boolean {
  return (s.error !== null && s.error !== undefined && s.error !== "") || s.status === "error";
}

/** ownRollup is a span's own tokens and cost. */
export function ownRollup(s: Span): Rollup {
  const p = s.prompt_tokens ?? 0;
  const c = s.completion_tokens ?? 0;
  const t = s.total_tokens ?? 0;
  let cost = s.total_cost ?? null;
  if (cost === null && (s.prompt_cost != null || s.completion_cost != null)) {
    cost = (s.prompt_cost ?? 0) + (s.completion_cost ?? 0);
  }
  return {
    promptTokens: p,
    completionTokens: c,
    totalTokens: t || p + c,
    cost,
    llmCalls: s.run_type === "llm" ? 1 : 0,
    errors: isFailed(s) ? 1 : 0,
  };
}

function addRollup(a: Rollup, b: Rollup): Rollup {
  return {
    promptTokens: a.promptTokens + b.promptTokens,
    completionTokens: a.completionTokens + b.completionTokens,
    totalTokens: a.totalTokens + b.totalTokens,
    cost: a.cost === null && b.cost === null ? null : (a.cost ?? 0) + (b.cost ?? 0),
    llmCalls: a.llmCalls + b.llmCalls,
    errors: a.errors + b.errors,
  };
}

/** emptyRollup is nothing. */
export function emptyRollup(): Rollup {
  return { promptTokens: 0, completionTokens: 0, totalTokens: 0, cost: null, llmCalls: 0, errors: 0 };
}

/**
 * combine rolls a span's own figures up with its children's. A tracer may already have summed its
 * children's tokens into a parent (LangChain's chains do not, some wrappers do): the larger of
 * the span's own and its children's sum is taken, so nothing is counted twice. Calls and errors
 * are counted per span.
 */
function combine(own: Rollup, children: Rollup): Rollup {
  const tokens = own.totalTokens >= children.totalTokens ? own : children;
  const costOwn = own.cost ?? 0;
  const costKids = children.cost ?? 0;
  return {
    promptTokens: tokens.promptTokens,
    completionTokens: tokens.completionTokens,
    totalTokens: tokens.totalTokens,
    cost: own.cost === null && children.cost === null ? null : Math.max(costOwn, costKids),
    llmCalls: own.llmCalls + children.llmCalls,
    errors: own.errors + children.errors,
  };
}

/** segments splits a dotted order into its parts ("<time><id>" each, root first). */
function segments(s: Span): string[] {
  return s.dotted_order ? s.dotted_order.split(".") : [];
}

/**
 * layout orders spans into a waterfall. now stands for the end of spans still running. Spans
 * whose parent is missing (not arrived yet, or a partial page) are shown under the nearest
 * ancestor present, or as roots.
 */
export function layout(spans: Span[], now: number = Date.now()): Waterfall {
  const byId = new Map<string, Span>();
  for (const s of spans) byId.set(s.id, s);
  const parentOf = (s: Span): string | null => {
    const segs = segments(s);
    // The dotted order names every ancestor: the nearest one present is the parent shown.
    for (let i = segs.length - 2; i >= 0; i--) {
      const id = (segs[i] ?? "").slice(-36);
      if (byId.has(id)) return id;
    }
    if (s.parent_run_id && byId.has(s.parent_run_id)) return s.parent_run_id;
    return null;
  };
  const children = new Map<string | null, Span[]>();
  for (const s of spans) {
    const p = parentOf(s);
    const list = children.get(p) ?? [];
    list.push(s);
    children.set(p, list);
  }
  const order = (a: Span, b: Span): number => {
    const da = a.dotted_order ?? "";
    const db = b.dotted_order ?? "";
    if (da && db && da !== db) return da < db ? -1 : 1;
    return (ms(a.start_time) ?? 0) - (ms(b.start_time) ?? 0);
  };
  for (const list of children.values()) list.sort(order);

  let startMs = Infinity;
  let endMs = -Infinity;
  for (const s of spans) {
    const st = ms(s.start_time);
    if (st === null) continue;
    startMs = Math.min(startMs, st);
    endMs = Math.max(endMs, ms(s.end_time) ?? Math.max(now, st));
  }
  if (!Number.isFinite(startMs)) {
    startMs = 0;
    endMs = 0;
  }
  const totalMs = Math.max(endMs - startMs, 1);

  const rows: Row[] = [];
  const visit = (s: Span, depth: number): Rollup => {
    const st = ms(s.start_time) ?? startMs;
    const end = ms(s.end_time);
    const running = end === null && !isFailed(s);
    const stop = end ?? Math.max(now, st);
    const first = ms(s.first_token_time);
    const row: Row = {
      span: s,
      depth,
      offset: (st - startMs) / totalMs,
      width: Math.max((stop - st) / totalMs, minWidth),
      durationMs: Math.max(stop - st, 0),
      running,
      failed: isFailed(s),
      ttft: first === null ? null : (first - startMs) / totalMs,
      ttftMs: first === null ? null : Math.max(first - st, 0),
      own: ownRollup(s),
      total: emptyRollup(),
    };
    row.offset = Math.min(Math.max(row.offset, 0), 1);
    row.width = Math.min(row.width, 1 - row.offset || minWidth);
    rows.push(row);
    let below = emptyRollup();
    for (const c of children.get(s.id) ?? []) below = addRollup(below, visit(c, depth + 1));
    row.total = combine(row.own, below);
    return row.total;
  };
  let totals = emptyRollup();
  for (const r of children.get(null) ?? []) totals = addRollup(totals, visit(r, 0));
  return { rows, startMs, endMs, totalMs, totals };
}

/** fmtDuration renders milliseconds: 850ms, 1.25s, 2m 5s. */
export function fmtDuration(msv: number): string {
  if (msv < 1000) return `${Math.round(msv)}ms`;
  if (msv < 60_000) return `${(msv / 1000).toFixed(msv < 10_000 ? 2 : 1)}s`;
  const m = Math.floor(msv / 60_000);
  return `${m}m ${Math.round((msv - m * 60_000) / 1000)}s`;
}

/** fmtCost renders a cost in dollars with the digits a small cost needs. */
export function fmtCost(c: number | null): string {
  if (c === null) return "";
  if (c === 0) return "$0";
  return c >= 0.01 ? `$${c.toFixed(4)}` : `$${c.toPrecision(3)}`;
}
