// The official JS SDK against the run and assistant surfaces of LangGraph.js graphs that jetgraph
// hosts (scenarios/hosted/typescript/src/schemas.ts and surfaces.ts). Run by TestHostedTypeScript;
// JETGRAPH_URL names the server. The answers asserted were settled against the JS reference server
// (`langgraphjs dev`) and, where the two references differ, the Python one (see the comments).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { Client } from "@langchain/langgraph-sdk";

const client = new Client({ apiUrl: process.env.JETGRAPH_URL, apiKey: null, callerOptions: { maxRetries: 0 } });
const json = (v) => JSON.stringify(v);
const assistantOf = async (graphId) => (await client.assistants.search({ graphId }))[0].assistant_id;

// startLong starts a run of `long` on a thread and returns its id once the run has stored its
// input (its first values event): "running" alone may come before the graph has begun.
async function startLong(threadId, content, delay) {
  let runId;
  for await (const p of client.runs.stream(threadId, "long", { input: { messages: [{ role: "user", content }], delay },
    streamMode: "values", onDisconnect: "continue" })) {
    if (p.event === "metadata") runId = p.data.run_id;
    if (p.event === "values") break;
  }
  return runId;
}

async function collect(threadId, graphId, options) {
  const parts = [];
  for await (const p of client.runs.stream(threadId, graphId, options)) {
    if (p.event !== "metadata" && p.event !== "end") parts.push(p);
  }
  return parts;
}

// --- /schemas: Zod and StateSchema state exactly as the reference draws it with the same libraries.
const golden = JSON.parse(readFileSync("testdata/hosted_typescript_schemas.golden.json", "utf8"));
for (const graphId of ["state_schema_graph", "zod_registry_graph", "plain_zod_graph"]) {
  assert.deepEqual(await client.assistants.getSchemas(await assistantOf(graphId)), golden[graphId], graphId);
}
// Annotation state has no runtime types (the reference parses the TypeScript source): its channels,
// messages marked as such, a channel with a default by its default's type, the rest any value.
const messages = { type: "array", items: { type: "object" }, langgraph_type: "messages" };
const visits = await client.assistants.getSchemas(await assistantOf("visits"));
assert.deepEqual(visits.state_schema, { type: "object", properties: { messages, visits: { type: "number" } } });
assert.deepEqual(visits.input_schema, visits.state_schema);
assert.equal(visits.config_schema, null);
assert.equal(visits.context_schema, null);
const router = await client.assistants.getSchemas(await assistantOf("router"));
assert.deepEqual(router.state_schema.properties, { log: { type: "array" }, volume: {} });

// --- /subgraphs by namespace, in the library's order, with the schemas under both names.
const generations = await assistantOf("generations");
const words = { type: "object", properties: { messages: { type: "array" } } };
let subs = await client.assistants.getSubgraphs(generations);
assert.deepEqual(Object.keys(subs), ["gp_two"]);
assert.deepEqual(subs.gp_two.state_schema, words);
assert.deepEqual(subs.gp_two.state, words);
subs = await client.assistants.getSubgraphs(generations, { recurse: true });
assert.deepEqual(Object.keys(subs), ["gp_two", "gp_two|p_two"]);
subs = await client.assistants.getSubgraphs(generations, { namespace: "gp_two|p_two", recurse: true });
assert.deepEqual(Object.keys(subs), ["gp_two|p_two"]);
assert.deepEqual(await client.assistants.getSubgraphs(await assistantOf("state_schema_graph")), {});

// --- /graph?xray: subgraphs drawn inside their node, to any depth.
const drawn = async (xray) => (await client.assistants.getGraph(generations, xray === undefined ? undefined : { xray })).nodes.map((n) => n.id);
assert.deepEqual(await drawn(), ["__start__", "gp_one", "gp_two", "__end__"]);
assert.deepEqual(await drawn(true), ["__start__", "gp_one", "gp_two:p_one", "gp_two:p_two:c_one", "gp_two:p_two:c_two", "__end__"]);
// A depth, as the LangGraph API takes it (the JS dev server reads any xray but "true"/"1" as false).
assert.deepEqual(await drawn(1), ["__start__", "gp_one", "gp_two:p_one", "gp_two:p_two", "__end__"]);
const edges = (await client.assistants.getGraph(generations, { xray: true })).edges.map((e) => `${e.source}>${e.target}`);
assert.deepEqual(edges.sort(), ["__start__>gp_one", "gp_one>gp_two:p_one", "gp_two:p_one>gp_two:p_two:c_one",
  "gp_two:p_two:c_one>gp_two:p_two:c_two", "gp_two:p_two:c_two>__end__"]);

// --- The StateSchema graph runs as jetgraph's Go port of it does (its golden run).
const goRun = JSON.parse(readFileSync("../engine/graphs/testdata/state_schema_graph.golden.json", "utf8"));
let thread = await client.threads.create();
let out = await client.runs.wait(thread.thread_id, "state_schema_graph", { input: { count: 1 } });
assert.equal(out.count, goRun.steps[0].values.count);
assert.deepEqual(out.messages.map((m) => [m.type, m.content]), goRun.steps[0].values.messages.map((m) => [m.type, m.content]));
const history = await client.threads.getHistory(thread.thread_id);
assert.deepEqual(history.map((h) => [h.metadata.step, h.metadata.source, h.next]), goRun.history.map((h) => [h.metadata.step, h.metadata.source, h.next]));

// --- Cancel: the node sleeps 60 s without looking at the abort signal; the run stops at once.
for (const action of ["interrupt", "rollback"]) {
  thread = await client.threads.create();
  const run = { run_id: await startLong(thread.thread_id, "wait", 60_000) };
  const started = Date.now();
  await client.runs.cancel(thread.thread_id, run.run_id, true, action);
  assert.ok(Date.now() - started < 10_000, `cancel (${action}) took ${Date.now() - started} ms`);
  const th = await client.threads.get(thread.thread_id);
  if (action === "interrupt") {
    // As the Python reference answers (the JS dev server shows the thread idle without values).
    assert.equal((await client.runs.get(thread.thread_id, run.run_id)).status, "interrupted");
    assert.equal(th.status, "interrupted");
    assert.deepEqual(th.values.messages.map((m) => m.content), ["wait"]);
    assert.deepEqual((await client.threads.getState(thread.thread_id)).next, ["long_running"]);
  } else {
    // The run and its checkpoints are gone (the JS dev server marks both as errored instead).
    await assert.rejects(client.runs.get(thread.thread_id, run.run_id), (e) => e.status === 404);
    assert.equal(th.status, "idle");
    assert.deepEqual(await client.threads.getHistory(thread.thread_id), []);
  }
}

// A node that listens to the run's abort signal hears it, and can still use the store then.
thread = await client.threads.create();
let runId;
for await (const p of client.runs.stream(thread.thread_id, "listening", { input: { messages: [{ role: "user", content: "wait" }], delay: 60_000 },
  streamMode: "values", onDisconnect: "continue" })) {
  if (p.event === "metadata") runId = p.data.run_id;
  if (p.event === "values") break;
}
await client.runs.cancel(thread.thread_id, runId, true, "interrupt");
assert.deepEqual((await client.store.getItem(["aborted"], thread.thread_id))?.value, { node: "wait_for_abort" });
assert.equal((await client.runs.get(thread.thread_id, runId)).status, "interrupted");

// --- The four multitask strategies on a busy thread.
for (const strategy of ["reject", "interrupt", "rollback", "enqueue"]) {
  thread = await client.threads.create();
  const tid = thread.thread_id;
  const first = { run_id: await startLong(tid, "one", 1500) };
  const second = client.runs.create(tid, "long", { input: { messages: [{ role: "user", content: "two" }], delay: 10 }, multitaskStrategy: strategy });
  if (strategy === "reject") {
    await assert.rejects(second, (e) => e.status === 409);
    await client.runs.join(tid, first.run_id);
  } else {
    await client.runs.join(tid, (await second).run_id);
  }
  const contents = (await client.threads.getState(tid)).values.messages.map((m) => m.content);
  const expected = {
    reject: [["one", "finished after 1500ms"], "success"],
    // The interrupted run's input stays: its checkpoint was stored before the run stopped.
    interrupt: [["one", "two", "finished after 10ms"], "interrupted"],
    rollback: [["two", "finished after 10ms"], null],
    enqueue: [["one", "finished after 1500ms", "two", "finished after 10ms"], "success"],
  }[strategy];
  assert.deepEqual(contents, expected[0], strategy);
  if (expected[1] === null) await assert.rejects(client.runs.get(tid, first.run_id), (e) => e.status === 404);
  else assert.equal((await client.runs.get(tid, first.run_id)).status, expected[1], strategy);
  assert.equal((await client.threads.get(tid)).status, "idle");
}

// --- Two interrupts at once, resumed together by their ids.
thread = await client.threads.create();
out = await client.runs.wait(thread.thread_id, "pair", { input: {} });
assert.deepEqual(out.__interrupt__.map((i) => i.value), [{ side: "left" }, { side: "right" }], json(out));
const state = await client.threads.getState(thread.thread_id);
assert.deepEqual(state.next, ["left", "right"]);
assert.deepEqual(state.tasks.map((t) => t.interrupts.map((i) => i.id)), out.__interrupt__.map((i) => [i.id]));
assert.equal((await client.threads.get(thread.thread_id)).status, "interrupted");
const resume = Object.fromEntries(out.__interrupt__.map((i) => [i.id, `yes to ${i.value.side}`]));
let parts = await collect(thread.thread_id, "pair", { command: { resume }, streamMode: "updates" });
assert.deepEqual(parts.map((p) => p.data), [{ left: { answers: ["left: yes to left"] } }, { right: { answers: ["right: yes to right"] } }]);
assert.deepEqual((await client.threads.getState(thread.thread_id)).values.answers, ["left: yes to left", "right: yes to right"]);

// --- A node's Command routes; custom events from config.writer; the run's context.
thread = await client.threads.create();
parts = await collect(thread.thread_id, "router", { input: { volume: "quiet" }, context: { loudness: "low" }, streamMode: ["custom", "updates"] });
assert.deepEqual(parts.map((p) => [p.event, p.data]), [
  ["updates", { decide: { log: ["decided"] } }], ["custom", { progress: "whispering" }], ["updates", { whisper: { log: ["whisper low"] } }],
]);
parts = await collect(null, "router", { input: { volume: "loud" }, context: { loudness: "high" }, streamMode: "custom" });
assert.deepEqual(parts.map((p) => [p.event, p.data]), [["custom", { progress: "shouting" }]]);
// A client's Command: an update and where to go, on a new thread.
// Its writes go to the library's empty checkpoint, which is never stored: nothing waits for it.
thread = await client.threads.create();
let began = Date.now();
out = await client.runs.wait(thread.thread_id, "router", { command: { update: { log: ["from client"], volume: "quiet" }, goto: "whisper" }, context: { loudness: "mid" } });
assert.deepEqual(out, { log: ["from client", "whisper mid"], volume: "quiet" });
assert.ok(Date.now() - began < 30_000, `a Command on a new thread took ${Date.now() - began} ms`);
// events: the graph's and each node's chain, in order.
parts = await collect(null, "router", { input: { volume: "loud" }, streamMode: "events" });
assert.deepEqual(parts.map((p) => `${p.data.event}:${p.data.name}`), ["on_chain_start:router", "on_chain_start:decide",
  "on_chain_end:decide", "on_chain_start:shout", "on_chain_end:shout", "on_chain_end:router"]);

// --- The recursion limit: the run fails with the library's error, in the references' shape.
await assert.rejects(client.runs.wait(null, "loop", { input: { n: 0 }, config: { recursion_limit: 5 } }),
  (e) => /GraphRecursionError: Recursion limit of 5 reached/.test(e.message));
thread = await client.threads.create();
parts = await collect(thread.thread_id, "loop", { input: { n: 0 }, config: { recursion_limit: 4 }, streamMode: "values" });
assert.deepEqual(parts.slice(0, -1).map((p) => p.data.n), [0, 1, 2, 3, 4]);
assert.equal(parts.at(-1).event, "error");
assert.equal(parts.at(-1).data.error, "GraphRecursionError");
assert.match(parts.at(-1).data.message, /^Recursion limit of 4 reached/);
assert.equal((await client.threads.get(thread.thread_id)).status, "error");

// --- tasks, checkpoints and debug of three levels of subgraphs on a thread, in the references' order.
const level = (p) => p.event.split("|").length - 1;
const onThread = async () => (await client.threads.create()).thread_id;
parts = await collect(await onThread(), "generations", { input: { messages: [] }, streamMode: "debug", streamSubgraphs: true });
assert.deepEqual(parts.map((p) => `${level(p)} ${p.data.type} ${p.data.step}`), [
  "0 checkpoint -1", "0 checkpoint 0", "0 task 1", "0 task_result 1", "0 checkpoint 1", "0 task 2",
  "1 checkpoint -1", "1 checkpoint 0", "1 task 1", "1 task_result 1", "1 checkpoint 1", "1 task 2",
  "2 checkpoint -1", "2 checkpoint 0", "2 task 1", "2 task_result 1", "2 checkpoint 1", "2 task 2", "2 task_result 2", "2 checkpoint 2",
  "1 task_result 2", "1 checkpoint 2", "0 task_result 2", "0 checkpoint 2",
]);
assert.match(parts[6].event, /^debug\|gp_two:[0-9a-f-]{36}$/);
parts = await collect(await onThread(), "generations", { input: { messages: [] }, streamMode: "checkpoints", streamSubgraphs: true });
assert.deepEqual(parts.map((p) => `${level(p)} ${p.data.metadata.step} ${p.data.next.join(",")} ${p.data.values.messages.length}`), [
  "0 -1 __start__ 0", "0 0 gp_one 0", "0 1 gp_two 1", "1 -1 __start__ 0", "1 0 p_one 1", "1 1 p_two 2",
  "2 -1 __start__ 0", "2 0 c_one 2", "2 1 c_two 3", "2 2  4", "1 2  6", "0 2  7",
]);
parts = await collect(await onThread(), "generations", { input: { messages: [] }, streamMode: "tasks", streamSubgraphs: true });
assert.deepEqual(parts.map((p) => `${level(p)} ${p.data.name} ${"triggers" in p.data ? "start" : "result"}`), [
  "0 gp_one start", "0 gp_one result", "0 gp_two start", "1 p_one start", "1 p_one result", "1 p_two start",
  "2 c_one start", "2 c_one result", "2 c_two start", "2 c_two result", "1 p_two result", "0 gp_two result",
]);
console.log("ok");
