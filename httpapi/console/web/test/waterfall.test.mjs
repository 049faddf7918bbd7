// Unit tests of dist/waterfall.js (run by `node --test test/` from TestConsoleUnits).
import test from "node:test";
import assert from "node:assert/strict";
import { layout, fmtDuration, fmtCost } from "../dist/waterfall.js";

const root = "11111111-1111-1111-1111-111111111111";
const chain = "22222222-2222-2222-2222-222222222222";
const llm = "33333333-3333-3333-3333-333333333333";
const tool = "44444444-4444-4444-4444-444444444444";
const lost = "55555555-5555-5555-5555-555555555555";
const d = (t, id) => `20260101T0000${t}Z${id}`;

const spans = [
  // Out of order, as a query answers them.
  { id: tool, name: "search", run_type: "tool", dotted_order: [d("00000000", root), d("01000000", chain), d("03000000", tool)].join("."),
    parent_run_id: chain, start_time: "2026-01-01T00:00:03Z", end_time: "2026-01-01T00:00:04Z", error: "boom", status: "error" },
  { id: root, name: "agent", run_type: "chain", dotted_order: d("00000000", root), parent_run_id: null,
    start_time: "2026-01-01T00:00:00Z", end_time: "2026-01-01T00:00:10Z", status: "success" },
  { id: llm, name: "model", run_type: "llm", dotted_order: [d("00000000", root), d("01000000", chain), d("01000000", llm)].join("."),
    parent_run_id: chain, start_time: "2026-01-01T00:00:01Z", end_time: "2026-01-01T00:00:03Z", first_token_time: "2026-01-01T00:00:01.500Z",
    prompt_tokens: 100, completion_tokens: 20, total_tokens: 120, prompt_cost: 0.001, completion_cost: 0.0005, total_cost: 0.0015 },
  { id: chain, name: "node", run_type: "chain", dotted_order: [d("00000000", root), d("01000000", chain)].join("."),
    parent_run_id: root, start_time: "2026-01-01T00:00:01Z", end_time: "2026-01-01T00:00:05Z" },
];

test("orders spans by dotted order, depth by nesting", () => {
  const w = layout(spans, 0);
  assert.deepEqual(w.rows.map((r) => [r.span.name, r.depth]), [["agent", 0], ["node", 1], ["model", 2], ["search", 2]]);
});

test("bars to scale, ttft within the LLM bar", () => {
  const w = layout(spans, 0);
  assert.equal(w.totalMs, 10000);
  const m = w.rows[2];
  assert.equal(m.offset, 0.1);
  assert.equal(m.width, 0.2);
  assert.equal(m.durationMs, 2000);
  assert.equal(m.ttft, 0.15);
  assert.equal(m.ttftMs, 500);
});

test("errors marked and counted up", () => {
  const w = layout(spans, 0);
  assert.equal(w.rows[3].failed, true);
  assert.equal(w.rows[0].failed, false);
  assert.equal(w.rows[0].total.errors, 1);
  assert.equal(w.totals.errors, 1);
});

test("tokens and cost rolled up to the trace", () => {
  const w = layout(spans, 0);
  assert.equal(w.rows[0].own.totalTokens, 0);
  assert.equal(w.rows[0].total.totalTokens, 120);
  assert.equal(w.rows[1].total.promptTokens, 100);
  assert.equal(w.totals.totalTokens, 120);
  assert.equal(w.totals.completionTokens, 20);
  assert.ok(Math.abs(w.totals.cost - 0.0015) < 1e-12);
  assert.equal(w.totals.llmCalls, 1);
});

test("a parent that already summed its children is not counted twice", () => {
  const summed = spans.map((s) => (s.id === chain ? { ...s, prompt_tokens: 100, completion_tokens: 20, total_tokens: 120, total_cost: 0.0015 } : s));
  const w = layout(summed, 0);
  assert.equal(w.totals.totalTokens, 120);
  assert.ok(Math.abs(w.totals.cost - 0.0015) < 1e-12);
});

test("a running span reaches now; a span whose parent is missing hangs under the nearest ancestor", () => {
  const running = { id: lost, name: "late", run_type: "chain", parent_run_id: "66666666-6666-6666-6666-666666666666",
    dotted_order: [d("00000000", root), d("06000000", "66666666-6666-6666-6666-666666666666"), d("07000000", lost)].join("."),
    start_time: "2026-01-01T00:00:07Z", end_time: null };
  const now = Date.parse("2026-01-01T00:00:20Z");
  const w = layout([...spans, running], now);
  const r = w.rows.find((x) => x.span.id === lost);
  assert.equal(r.depth, 1);
  assert.equal(r.running, true);
  assert.equal(w.totalMs, 20000);
  assert.equal(r.durationMs, 13000);
  assert.equal(w.rows.at(-1).span.id, lost);
});

test("no spans", () => {
  const w = layout([], 0);
  assert.deepEqual(w.rows, []);
  assert.equal(w.totals.totalTokens, 0);
  assert.equal(w.totals.cost, null);
});

test("formats", () => {
  assert.equal(fmtDuration(850), "850ms");
  assert.equal(fmtDuration(1250), "1.25s");
  assert.equal(fmtDuration(125000), "2m 5s");
  assert.equal(fmtCost(null), "");
  assert.equal(fmtCost(0.0015), "$0.00150");
  assert.equal(fmtCost(0.25), "$0.2500");
});
