// Two users through the official JS SDK against a server whose langgraph.json names an Auth where
// each user owns what they create (owners_auth.py or owners_auth.ts): each sees only their own
// threads, runs, crons and store namespace; no token is the handler's 401; a rule's 403 carries
// its message.
//
// Run by TestAuthOwners (and, to settle it, against the Python reference dev server);
// JETGRAPH_URL names the server, GRAPH the graph to run and INPUT its input (JSON).
import assert from "node:assert/strict";
import { Client } from "@langchain/langgraph-sdk";

const apiUrl = process.env.JETGRAPH_URL;
const graph = process.env.GRAPH ?? "whoami";
const input = JSON.parse(process.env.INPUT ?? "{}");
const as = (token) => new Client({ apiUrl, apiKey: null, callerOptions: { maxRetries: 0 },
  defaultHeaders: token ? { Authorization: `Bearer ${token}` } : {} });

/** The status and detail of a call the server refuses; 200 and its answer when it does not. */
async function status(call) {
  try {
    return [200, await call];
  } catch (e) {
    if (e.status === undefined) throw e;
    const body = e.message.replace(/^HTTP \d+: /, "");
    try {
      return [e.status, JSON.parse(body).detail];
    } catch {
      return [e.status, body]; // the JS reference answers a refusal as text
    }
  }
}

assert.deepEqual(await status(as(null).threads.search()), [401, "Missing bearer token"]);
const ada = as("tok-ada");
const bob = as("tok-bob");

// Threads: created with the owner's metadata, each user's search and reads their own only.
const ta = await ada.threads.create({ metadata: { topic: "ada's" } });
const tb = await bob.threads.create({ metadata: { owner: "ada" } }); // the rule overwrites a forged owner
assert.deepEqual(ta.metadata, { topic: "ada's", owner: "ada" });
assert.deepEqual(tb.metadata, { owner: "bob" });
assert.deepEqual((await ada.threads.search()).map((t) => t.thread_id), [ta.thread_id]);
assert.deepEqual((await bob.threads.search()).map((t) => t.thread_id), [tb.thread_id]);
assert.equal((await status(bob.threads.get(ta.thread_id)))[0], 404, "bob reads ada's thread");
assert.equal((await status(bob.threads.update(ta.thread_id, { metadata: { x: 1 } })))[0], 404, "bob updates ada's thread");
assert.equal((await status(bob.threads.getState(ta.thread_id)))[0], 404, "bob reads ada's state");

// Runs belong to their thread; a stream of ada's thread is hers.
const parts = [];
for await (const p of ada.runs.stream(ta.thread_id, graph, { input, streamMode: "values" })) parts.push(p.event);
assert.ok(parts.includes("values"), `ada's stream: ${parts}`);
const runs = await ada.runs.list(ta.thread_id);
assert.equal(runs.length, 1);
assert.equal((await status(bob.runs.list(ta.thread_id)))[0], 404, "bob lists ada's runs");
assert.equal((await status(bob.runs.get(ta.thread_id, runs[0].run_id)))[0], 404, "bob reads ada's run");
assert.equal((await status(bob.runs.create(ta.thread_id, graph, { input })))[0], 404, "bob runs on ada's thread");

// Crons: filtered on their metadata.
const ca = await ada.crons.createForThread(ta.thread_id, graph, { schedule: "0 0 1 1 *", input });
const cb = await bob.crons.create(graph, { schedule: "0 0 1 1 *", input });
assert.deepEqual((await ada.crons.search()).map((c) => c.cron_id), [ca.cron_id]);
assert.deepEqual((await bob.crons.search()).map((c) => c.cron_id), [cb.cron_id]);
assert.equal((await status(bob.crons.createForThread(ta.thread_id, graph, { schedule: "0 0 1 1 *", input })))[0], 404, "bob's cron on ada's thread");
assert.equal((await status(bob.crons.delete(ca.cron_id)))[0], 404, "bob deletes ada's cron");
assert.equal((await ada.crons.search()).length, 1, "ada's cron after bob's delete");

// The store: each user's namespace under their identity.
await ada.store.putItem(["notes"], "k", { by: "ada" });
await bob.store.putItem(["notes"], "k", { by: "bob" });
const item = await ada.store.getItem(["notes"], "k");
assert.deepEqual([item.value, item.namespace], [{ by: "ada" }, ["ada", "notes"]]);
assert.deepEqual((await bob.store.searchItems(["notes"])).items.map((i) => i.value), [{ by: "bob" }]);
assert.deepEqual((await bob.store.listNamespaces()).namespaces, [["bob", "notes"]]);

// Rules that refuse, with their messages.
assert.deepEqual(await status(bob.threads.delete(tb.thread_id)), [403, "bob may not delete threads"]);
await ada.threads.delete(ta.thread_id);
assert.deepEqual(await status(as("tok-guest").threads.search()), [403, "guests may not search threads"]);
const [assistant] = await ada.assistants.search({ graphId: graph });
assert.deepEqual(await status(ada.assistants.update(assistant.assistant_id, { metadata: { x: 1 } })), [403, "Forbidden"]);
console.log("ok");
