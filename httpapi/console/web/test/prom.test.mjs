// Unit tests of dist/prom.js.
import test from "node:test";
import assert from "node:assert/strict";
import { parseProm, sum, rate, buckets, quantile, Series, path } from "../dist/prom.js";

const text = `# HELP jetgraph_http_requests_total HTTP requests answered, by method, route and status.
# TYPE jetgraph_http_requests_total counter
jetgraph_http_requests_total{method="POST",route="/runs/wait",status="200"} 10
jetgraph_http_requests_total{method="POST",route="/runs/wait",status="500"} 2
jetgraph_http_requests_total{method="GET",route="/ok",status="200"} 1e3
jetgraph_weird{a="x\\"y",b="line\\nbreak"} NaN 1700000000000
go_goroutines 34
h_bucket{le="0.1"} 4
h_bucket{le="1"} 8
h_bucket{le="+Inf"} 10
`;

test("parses samples, labels with escapes, exponents, NaN and timestamps", () => {
  const s = parseProm(text);
  assert.equal(s.length, 8);
  assert.deepEqual(s[0], { name: "jetgraph_http_requests_total", labels: { method: "POST", route: "/runs/wait", status: "200" }, value: 10 });
  assert.equal(s[2].value, 1000);
  assert.deepEqual(s[3].labels, { a: 'x"y', b: "line\nbreak" });
  assert.ok(Number.isNaN(s[3].value));
  assert.equal(sum(s, "go_goroutines"), 34);
});

test("malformed lines throw with their number", () => {
  assert.throws(() => parseProm("ok 1\nbad{a=1} 2"), /line 2/);
  assert.throws(() => parseProm('x{a="1} 2'), /line 1/);
  assert.throws(() => parseProm("x"), /line 1: not a number/);
});

test("sums with filters; absent is null", () => {
  const s = parseProm(text);
  assert.equal(sum(s, "jetgraph_http_requests_total", { method: "POST" }), 12);
  assert.equal(sum(s, "jetgraph_http_requests_total", { status: (v) => v.startsWith("5") }), 2);
  assert.equal(sum(s, "jetgraph_runs_pending"), null);
});

test("rates, resets", () => {
  assert.equal(rate(10, 30, 2), 10);
  assert.equal(rate(30, 4, 2), 2);
  assert.equal(rate(null, 4, 2), null);
  assert.equal(rate(1, 4, 0), null);
});

test("histogram quantiles between scrapes", () => {
  const cur = buckets(parseProm(text), "h");
  assert.equal(quantile(0.5, cur), 0.325);
  assert.equal(quantile(0.2, cur), 0.05);
  assert.equal(quantile(0.99, cur), 1);
  const prev = new Map([[0.1, 4], [1, 8], [Infinity, 9]]);
  assert.equal(quantile(0.5, cur, prev), 1);
  assert.equal(quantile(0.5, prev, prev), null);
});

test("series keep a window; paths scale and break at gaps", () => {
  const s = new Series(1000);
  s.push(0, 1);
  s.push(500, null);
  s.push(1500, 2);
  assert.deepEqual(s.points.map((p) => p.t), [500, 1500]);
  assert.equal(s.last(), 2);
  const p = path([{ t: 0, v: 0 }, { t: 500, v: 2 }, { t: 750, v: null }, { t: 1000, v: 1 }], 1000, 1000, 100, 10);
  assert.equal(p.d, "M0.0,10.0 L50.0,0.0 M100.0,5.0");
  assert.equal(p.max, 2);
});
