// Thread status and stream joins as the official LangGraph JS SDK (and useStream, built on it)
// rely on them: a cancelled run leaves the thread idle when there is nothing to resume; a state
// update on an interrupted thread that leaves a task keeps it interrupted; joinStream with the
// last event id "-1" (useStream's default when it joins a run: dist/ui/orchestrator.js) streams
// the run from its start. Then the development routes: prune and /internal/truncate.
//
//   node thread_status.mjs     (the server URL comes from JETGRAPH_URL; the server runs --dev)
import assert from "node:assert/strict";
import { Client } from "@langchain/langgraph-sdk";

const url = process.env.JETGRAPH_URL;
const client = new Client({ apiUrl: url, apiKey: null, callerOptions: { maxRetries: 0 } });
const status = async (id) => (await client.threads.get(id)).status;
const until = async (what, f) => {
  for (let i = 0; i < 600; i++) {
    if (await f()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
};

// A run cancelled before it started: nothing to resume, the thread is idle.
const t1 = await client.threads.create();
await client.runs.wait(t1.thread_id, "echo", { input: { messages: ["one"] } });
const later = await client.runs.create(t1.thread_id, "echo", { input: { messages: ["two"] }, afterSeconds: 600 });
assert.equal(await status(t1.thread_id), "busy");
await client.runs.cancel(t1.thread_id, later.run_id, true);
assert.equal((await client.runs.get(t1.thread_id, later.run_id)).status, "interrupted");
assert.equal(await status(t1.thread_id), "idle", "a run cancelled before it started leaves the thread idle");

// A run cancelled inside its node: that node is left to resume, the thread is interrupted.
const t2 = await client.threads.create();
const slow = await client.runs.create(t2.thread_id, "delay", { input: { messages: ["x"], delay: 60000 }, durability: "sync" });
// "running" comes before the checkpoint that enters the node: wait for that checkpoint too, or
// the cancel lands in the input step and leaves __start__ to resume.
await until("the slow run to enter its node", async () =>
  (await client.runs.get(t2.thread_id, slow.run_id)).status === "running" &&
  (await client.threads.getState(t2.thread_id)).next.includes("long_running"));
await client.runs.cancel(t2.thread_id, slow.run_id, true);
let state = await client.threads.getState(t2.thread_id);
assert.deepEqual(state.next, ["long_running"]);
assert.equal(await status(t2.thread_id), "interrupted");

// A static interrupt, then state updates: interrupted while a task is left, idle when none is.
const t3 = await client.threads.create();
await client.runs.wait(t3.thread_id, "agent", { input: { messages: "x" }, interruptBefore: ["tool"] });
assert.equal(await status(t3.thread_id), "interrupted");
state = await client.threads.getState(t3.thread_id);
const ai = state.values.messages[1];
await client.threads.updateState(t3.thread_id, { values: { messages: [{ ...ai, content: "begin again" }] }, asNode: "agent" });
assert.deepEqual((await client.threads.getState(t3.thread_id)).next, ["tool"]);
assert.equal(await status(t3.thread_id), "interrupted", "a state update that leaves a task keeps the thread interrupted");
await client.threads.updateState(t3.thread_id, { values: { messages: [{ ...ai, content: "end" }] }, asNode: "agent" });
assert.deepEqual((await client.threads.getState(t3.thread_id)).next, []);
assert.equal(await status(t3.thread_id), "idle");

// Joining a run with the last event id "-1" streams it from the start, as a plain join does.
const t4 = await client.threads.create();
const run = await client.runs.create(t4.thread_id, "agent", { input: { messages: [{ role: "user", content: "foo" }] }, streamMode: ["values", "updates"] });
await client.runs.join(t4.thread_id, run.run_id);
const collect = async (opts) => {
  const events = [];
  for await (const part of client.runs.joinStream(t4.thread_id, run.run_id, opts)) events.push(part);
  return events;
};
const plain = await collect({});
const fromStart = await collect({ lastEventId: "-1" });
assert.equal(fromStart[0].event, "metadata");
assert.equal(fromStart[0].data.run_id, run.run_id);
assert.deepEqual(fromStart.map((e) => e.event), plain.map((e) => e.event));
assert.deepEqual(fromStart.filter((e) => e.event === "values").at(-1).data.messages.map((m) => m.content),
  ["foo", "begin", "tool_call__begin", "end"]);

// Prune: delete, and keep the latest checkpoint only.
assert.deepEqual(await client.threads.prune([t1.thread_id, crypto.randomUUID()]), { pruned_count: 1 });
await assert.rejects(client.threads.get(t1.thread_id), /404/);
assert.deepEqual(await client.threads.prune([t4.thread_id], { strategy: "keep_latest" }), { pruned_count: 1 });
assert.equal((await client.threads.getHistory(t4.thread_id, { limit: 50 })).length, 1);

// The reference dev server's truncation, as LangGraph's own API test suites call it.
const resp = await fetch(`${url}/internal/truncate`, {
  method: "POST", headers: { "Content-Type": "application/json" },
  body: JSON.stringify({ runs: true, threads: true, assistants: true, store: true, checkpoint: true }),
});
assert.equal(resp.status, 200);
assert.deepEqual(await client.threads.search({ limit: 100 }), []);
const left = await client.assistants.search({ limit: 100 });
assert.ok(left.length > 0 && left.every((a) => a.metadata.created_by === "system"));
const fresh = await client.threads.create();
assert.equal((await client.runs.wait(fresh.thread_id, "echo", { input: { messages: ["after"] } })).messages.length, 2);

console.log("thread status scenario passed");
