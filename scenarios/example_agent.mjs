// The official JS SDK against the TypeScript example project (scenarios/examples/typescript-agent).
// Run by TestExampleTypeScriptAgent; JETGRAPH_URL names the server. The agent answers about the
// weather: its model streams tokens and calls get_weather, an interrupt asks before the call, the
// tool runs in a subgraph, and the user's city comes from the store.
import assert from "node:assert/strict";
import { Client } from "@langchain/langgraph-sdk";

// The streams the SDK reconnected (a GET of the run's stream with Last-Event-ID after a dropped
// connection), said on stderr: a failure then shows whether its stream was a reconnected one.
const reconnects = [];
function noteReconnect(url, init) {
  const last = new Headers(init.headers).get("Last-Event-ID");
  if (init.method === "GET" && last !== null && /\/stream$/.test(new URL(url).pathname)) {
    reconnects.push({ path: new URL(url).pathname, after: last });
    console.error(`the SDK reconnected: GET ${new URL(url).pathname} Last-Event-ID ${last}`);
  }
  return init;
}

// A fetch that says on stderr how each event stream the SDK reads ended early: failed, left by
// the SDK (its idle watchdog errs with "No SSE bytes received"), or ended by the server before a
// byte (the SDK then rejoins without Last-Event-ID), so that a reconnection shows its cause.
// With drop, the first run stream is cut once drop is called, as a dropped connection would cut
// it (cut before the SDK has read an event, the event would be lost too).
function watchingFetch() {
  let drop, dropped = false, cut = false;
  const dropping = new Promise((resolve) => (drop = () => resolve((dropped = true))));
  const fetchWatched = async (url, init) => {
    const res = await fetch(url, init);
    if (!res.body || !(res.headers.get("content-type") ?? "").startsWith("text/event-stream")) return res;
    const path = new URL(url).pathname;
    const started = Date.now();
    const say = (what) => console.error(`${init?.method ?? "GET"} ${path}: ${what} after ${Date.now() - started} ms`);
    const droppable = !cut && init?.method === "POST";
    cut ||= droppable;
    const reader = res.body.getReader();
    let bytes = 0;
    const cutOff = async (controller) => {
      await reader.cancel();
      controller.error(new TypeError("fetch failed: the connection was dropped"));
    };
    const body = new ReadableStream({
      async pull(controller) {
        if (droppable && dropped) return cutOff(controller);
        const read = reader.read().catch((e) => {
          say(`the stream failed (${e})`);
          throw e;
        });
        read.catch(() => {}); // awaited below, unless the cut came first
        const next = await (droppable ? Promise.race([read, dropping.then(() => null)]) : read);
        if (next === null) return cutOff(controller);
        if (next.done) {
          if (bytes === 0) say(`the server ended the stream before a byte (${res.status}, Location ${res.headers.get("location")})`);
          return controller.close();
        }
        bytes += next.value.byteLength;
        controller.enqueue(next.value);
      },
      cancel(reason) {
        say(`the SDK left the stream (${reason})`);
        return reader.cancel(reason);
      },
    });
    return new Response(body, { status: res.status, headers: res.headers });
  };
  return { fetch: fetchWatched, drop };
}

// LANGGRAPH_API_KEY is set when the example runs as a deployment of the control plane.
const options = { apiUrl: process.env.JETGRAPH_URL, apiKey: process.env.LANGGRAPH_API_KEY ?? null, onRequest: noteReconnect };
const client = new Client({ ...options, callerOptions: { maxRetries: 0, fetch: watchingFetch().fetch } });
const ANSWER = "In Paris it is sunny, 21 °C.";

async function stream(tid, opts, through = client, onPart = () => {}) {
  const parts = [];
  for await (const p of through.runs.stream(tid, "agent", { streamMode: ["messages-tuple", "updates"], streamSubgraphs: true, ...opts })) {
    assert.notEqual(p.event, "error", JSON.stringify(p.data));
    parts.push([p.event, p.data]);
    onPart(p);
  }
  return parts;
}

// The AI's token chunks of the parent graph's messages events (typed "ai" by the JS reference
// server, "AIMessageChunk" by the Python one).
const isAI = (m) => m.type === "ai" || m.type === "AIMessageChunk";
const tokens = (parts) => parts.filter(([e, d]) => e === "messages" && isAI(d[0]) && d[0].content).map(([, d]) => d[0].content);

assert.deepEqual((await client.assistants.search({ limit: 100 })).map((a) => a.graph_id), ["agent"]);

// The store: what the agent remembers of ada.
await client.store.putItem(["users", "ada"], "memory", { city: "Paris" });
const ada = { user_id: "ada" };

// A question without a city: the model calls the tool with ada's city, read from the store, and
// the run stops before the call.
let tid = (await client.threads.create()).thread_id;
let parts = await stream(tid, { input: { messages: [{ role: "user", content: "What is the weather?" }] }, context: ada });
const calls = parts.filter(([e]) => e === "messages").flatMap(([, d]) => d[0].tool_calls ?? []);
assert.deepEqual(calls.map((c) => [c.name, c.args]), [["get_weather", { city: "Paris" }]], JSON.stringify(parts));
const asked = parts.filter(([e, d]) => e === "updates" && "__interrupt__" in d).map(([, d]) => d.__interrupt__);
assert.equal(asked.length, 1, JSON.stringify(parts));
assert.deepEqual(asked[0][0].value.tool_calls[0].args, { city: "Paris" });
let state = await client.threads.getState(tid);
assert.deepEqual(state.next, ["approve"]);
assert.equal(state.tasks[0].interrupts[0].id, asked[0][0].id);
assert.equal((await client.threads.get(tid)).status, "interrupted");

// Approved: the tool runs in the subgraph, then the answer streams token by token.
async function approved(tid, parts) {
  const said = JSON.stringify({ parts, reconnects });
  const inner = parts.filter(([e]) => e.startsWith("updates|tools:"));
  assert.equal(inner.length, 1, said);
  assert.ok("run_tools" in inner[0][1], JSON.stringify(inner));
  const tool = parts.filter(([e]) => e.startsWith("messages|tools:")).map(([, d]) => d[0].content);
  assert.deepEqual(tool, ["sunny, 21 °C"], said);
  const got = tokens(parts);
  assert.ok(got.length >= 5 && got.join("") === ANSWER, JSON.stringify(got));
  const state = await client.threads.getState(tid);
  assert.deepEqual(state.values.messages.map((m) => m.type), ["human", "ai", "tool", "ai"], JSON.stringify(state.values));
  assert.equal(state.values.messages.at(-1).content, ANSWER);
  assert.equal((await client.threads.get(tid)).status, "idle");
}
parts = await stream(tid, { command: { resume: "yes" }, context: ada });
await approved(tid, parts);

// The same approval through a connection dropped after the stream's first event: the SDK
// reconnects, and the stream goes on as it began, the subgraph's events included.
tid = (await client.threads.create()).thread_id;
await stream(tid, { input: { messages: [{ role: "user", content: "What is the weather?" }] }, context: ada });
const before = reconnects.length;
const dropping = watchingFetch();
const through = new Client({ ...options, callerOptions: { maxRetries: 0, fetch: dropping.fetch } });
const ids = [];
parts = await stream(tid, { command: { resume: "yes" }, context: ada }, through, (p) => {
  ids.push(p.id);
  dropping.drop();
});
assert.equal(reconnects.length, before + 1, JSON.stringify(reconnects));
assert.equal(parts[0][0], "metadata", JSON.stringify(parts));
// The subgraph's events came through the reconnected stream.
const resumedAt = ids.indexOf(reconnects.at(-1).after);
const innerAt = parts.findIndex(([e]) => e.startsWith("updates|tools:"));
assert.ok(resumedAt >= 0 && innerAt !== -1 && innerAt > resumedAt, JSON.stringify({ ids, reconnects, parts }));
await approved(tid, parts);

// Declined: no tool runs, the model says so.
tid = (await client.threads.create()).thread_id;
let out = await client.runs.wait(tid, "agent", { input: { messages: [{ role: "user", content: "Weather in Tokyo?" }] } });
assert.deepEqual(out.__interrupt__[0].value.tool_calls[0].args, { city: "Tokyo" }, JSON.stringify(out));
out = await client.runs.wait(tid, "agent", { command: { resume: "no" } });
assert.equal(out.messages.at(-1).content, "Alright, I did not look it up.", JSON.stringify(out.messages));
assert.equal(out.messages.at(-2).type, "tool");
assert.equal(out.messages.at(-2).status, "error");

// Another user, nothing remembered: the model asks for the city and calls nothing.
out = await client.runs.wait(null, "agent", { input: { messages: [{ role: "user", content: "What is the weather?" }] }, context: { user_id: "bo" } });
assert.ok(!("__interrupt__" in out) && out.messages.at(-1).content.startsWith("Which city?"), JSON.stringify(out));
console.log("ok");
