// Unit tests of dist/tracefilter.js.
import test from "node:test";
import assert from "node:assert/strict";
import { buildFilter, quote, sinceTime } from "../dist/tracefilter.js";

test("empty form is every run", () => {
  assert.equal(buildFilter({}), "");
  assert.equal(buildFilter({ name: "  ", tags: " , ", status: "" }), "");
});

test("one criterion alone, several and-ed", () => {
  assert.equal(buildFilter({ runType: "llm" }), 'eq(run_type, "llm")');
  assert.equal(
    buildFilter({ name: "agent", runType: "chain", status: "error", tags: "a, b", metadata: "user=ann, env", text: "paris", until: "2026-01-01T00:00:00Z", raw: "gt(total_tokens, 10)" }),
    'and(search(name, "agent"), eq(run_type, "chain"), eq(error, true), has(tags, "a"), has(tags, "b"), ' +
      'and(eq(metadata_key, "user"), eq(metadata_value, "ann")), eq(metadata_key, "env"), search("paris"), ' +
      'lte(start_time, "2026-01-01T00:00:00Z"), gt(total_tokens, 10))',
  );
  assert.equal(buildFilter({ status: "success" }), 'eq(status, "success")');
});

test("values cannot break out of their string", () => {
  assert.equal(quote('a"), or(eq(name, "x'), '"a\\"), or(eq(name, \\"x"');
  assert.equal(buildFilter({ tags: 'x") ' }), 'has(tags, "x\\")")');
  assert.equal(quote("a\\b\nc"), '"a\\\\b\\nc"');
});

test("since", () => {
  assert.equal(sinceTime(0, 1000), "");
  assert.equal(sinceTime(3_600_000, Date.parse("2026-01-01T01:00:00Z")), "2026-01-01T00:00:00.000Z");
});
