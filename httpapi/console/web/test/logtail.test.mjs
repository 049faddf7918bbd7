// Unit tests of dist/logtail.js.
import test from "node:test";
import assert from "node:assert/strict";
import { logDelta, isFinal } from "../dist/logtail.js";

test("appends what is new, resets when the head was cut", () => {
  assert.deepEqual(logDelta("", "clone\n"), { reset: false, text: "clone\n" });
  assert.deepEqual(logDelta("clone\n", "clone\nbuild\n"), { reset: false, text: "build\n" });
  assert.deepEqual(logDelta("clone\nbuild\n", "clone\nbuild\n"), { reset: false, text: "" });
  assert.deepEqual(logDelta("clone\nbuild\n", "[cut 10 bytes]\nbuild\nmore\n"), { reset: true, text: "[cut 10 bytes]\nbuild\nmore\n" });
});

test("final statuses", () => {
  for (const s of ["DEPLOYED", "BUILD_FAILED", "DEPLOY_FAILED", "SKIPPED", "INTERRUPTED"]) assert.equal(isFinal(s), true, s);
  for (const s of ["CREATING", "QUEUED", "AWAITING_BUILD", "BUILDING", "AWAITING_DEPLOY", "DEPLOYING"]) assert.equal(isFinal(s), false, s);
});
