// Crons through the official LangGraph JS SDK's crons client: create (stateless) and
// createForThread, the runs a cron makes on its schedule, search with sorting, paging and select,
// count, update, delete.
//
//   node crons.mjs     (the server URL comes from JETGRAPH_URL)
import assert from "node:assert/strict";
import { Client } from "@langchain/langgraph-sdk";

const client = new Client({ apiUrl: process.env.JETGRAPH_URL, apiKey: null, callerOptions: { maxRetries: 0 } });
const until = async (what, f) => {
  for (let i = 0; i < 600; i++) {
    if (await f()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
};

// A thread cron, every second: its runs appear on the thread with the cron's input.
const thread = await client.threads.create();
const onThread = await client.crons.createForThread(thread.thread_id, "echo", {
  schedule: "* * * * * *",
  input: { messages: [{ role: "user", content: "every second" }] },
  metadata: { kind: "thread" },
});
assert.equal(onThread.thread_id, thread.thread_id);
assert.ok(onThread.next_run_date, "a cron has its next run date");
await until("two runs of the thread cron", async () => (await client.runs.list(thread.thread_id)).length >= 2);

// A stateless cron in a time zone, disabled, that keeps its threads.
const daily = await client.crons.create("echo", {
  schedule: "0 9 * * *",
  timezone: "Europe/Paris",
  enabled: false,
  onRunCompleted: "keep",
  metadata: { kind: "daily" },
  input: { messages: [{ role: "user", content: "good morning" }] },
});
assert.equal(daily.thread_id, null);
assert.equal(daily.timezone, "Europe/Paris");
assert.equal(daily.enabled, false);
assert.equal(daily.on_run_completed, "keep");
assert.match(daily.next_run_date, /T0[78]:00:00/, "9:00 in Paris is 07:00 or 08:00 UTC");

// Search: filters, sorting, paging, select.
const all = await client.crons.search({ sortBy: "created_at", sortOrder: "asc" });
assert.deepEqual(all.map((c) => c.cron_id), [onThread.cron_id, daily.cron_id]);
const page = await client.crons.search({ limit: 1, offset: 1, sortBy: "created_at", sortOrder: "asc", select: ["cron_id", "schedule"] });
assert.deepEqual(page, [{ cron_id: daily.cron_id, schedule: "0 9 * * *" }]);
assert.deepEqual((await client.crons.search({ threadId: thread.thread_id })).map((c) => c.cron_id), [onThread.cron_id]);
assert.deepEqual((await client.crons.search({ enabled: false })).map((c) => c.cron_id), [daily.cron_id]);
assert.deepEqual((await client.crons.search({ metadata: { kind: "daily" } })).map((c) => c.cron_id), [daily.cron_id]);
assert.equal(await client.crons.count(), 2);
assert.equal(await client.crons.count({ assistantId: "echo" }), 2);
assert.equal(await client.crons.count({ threadId: thread.thread_id }), 1);

// Update: a new schedule and enabled; a stateless cron then makes threads of its own.
const updated = await client.crons.update(daily.cron_id, { schedule: "* * * * * *", enabled: true, timezone: "UTC" });
assert.equal(updated.schedule, "* * * * * *");
assert.equal(updated.enabled, true);
await until("a kept thread of the stateless cron", async () => {
  const threads = await client.threads.search({ metadata: { graph_id: "echo" }, status: "idle" });
  return threads.some((t) => t.thread_id !== thread.thread_id);
});

// Delete: no more runs.
await client.crons.delete(onThread.cron_id);
await client.crons.delete(daily.cron_id);
assert.equal(await client.crons.count(), 0);
await assert.rejects(client.crons.delete(daily.cron_id), /404|not found/i);
const before = (await client.runs.list(thread.thread_id, { limit: 100 })).length;
await new Promise((r) => setTimeout(r, 1500));
assert.equal((await client.runs.list(thread.thread_id, { limit: 100 })).length, before, "a deleted cron makes no run");

// Bad input is 422 with every problem.
await assert.rejects(client.crons.create("echo", { schedule: "not a schedule", timezone: "Nowhere/Land" }), (e) => e.status === 422);
await assert.rejects(client.crons.create("no-such-assistant", { schedule: "* * * * *" }), (e) => e.status === 404);

console.log("crons scenario passed");
