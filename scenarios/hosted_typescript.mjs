// The official JS SDK against LangGraph.js graphs that jetgraph hosts (scenarios/hosted/typescript).
// Run by TestHostedTypeScript; JETGRAPH_URL names the server.
import assert from "node:assert/strict";
import { Client } from "@langchain/langgraph-sdk";

const client = new Client({ apiUrl: process.env.JETGRAPH_URL, apiKey: null, callerOptions: { maxRetries: 0 } });
const contents = (values) => (values.messages ?? []).map((m) => m.content);

const graphs = new Set((await client.assistants.search({ limit: 100 })).map((a) => a.graph_id));
for (const g of ["visits", "greeter", "echo"]) assert.ok(graphs.has(g), `system assistant of ${g}`);

// A waited run that stops at the graph's interrupt.
const thread = await client.threads.create();
const tid = thread.thread_id;
let out = await client.runs.wait(tid, "visits", { input: { messages: [{ role: "user", content: "Ada" }] } });
assert.deepEqual(contents(out), ["Ada", "hello Ada (visit 1)"], JSON.stringify(out));
assert.equal(out.__interrupt__?.length, 1, JSON.stringify(out));
assert.deepEqual(out.__interrupt__[0].value, { question: "continue?" });
assert.equal(out.messages[0].type, "human");
assert.equal(out.messages[1].type, "ai");
assert.equal(out.messages[1].id, "greet-1");
assert.equal(out.visits, 1);

const state = await client.threads.getState(tid);
assert.deepEqual(state.next, ["ask"]);
assert.equal(state.tasks[0].name, "ask");
assert.equal(state.tasks[0].interrupts[0].id, out.__interrupt__[0].id);
assert.equal((await client.threads.get(tid)).status, "interrupted");

// Resumed with a command, streamed in values and updates.
const seen = [];
for await (const part of client.runs.stream(tid, "visits", { command: { resume: "yes" }, streamMode: ["values", "updates"] })) {
  seen.push(part);
}
assert.ok(!seen.some((p) => p.event === "error"), JSON.stringify(seen));
assert.ok(seen.some((p) => p.event === "updates" && "ask" in p.data), JSON.stringify(seen));
const values = seen.filter((p) => p.event === "values");
assert.deepEqual(contents(values.at(-1).data), ["Ada", "hello Ada (visit 1)", "Ada said yes"]);

const history = await client.threads.getHistory(tid, { limit: 10 });
assert.deepEqual(history.map((h) => h.metadata.step), [2, 1, 0, -1]);
assert.deepEqual(history[1].next, ["ask"]);
assert.equal((await client.threads.get(tid)).status, "idle");

// The graph's store is jetgraph's.
const item = await client.store.getItem(["users", "Ada"], "profile");
assert.deepEqual(item?.value, { visits: 1 });
const t2 = await client.threads.create();
out = await client.runs.wait(t2.thread_id, "visits", { input: { messages: [{ role: "user", content: "Ada" }] } });
assert.equal(contents(out).at(-1), "hello Ada (visit 2)");

// A factory graph built from an assistant's config, on a thread and stateless.
const assistant = await client.assistants.create({ graphId: "greeter", config: { configurable: { greeting: "Howdy" } } });
const t3 = await client.threads.create();
out = await client.runs.wait(t3.thread_id, assistant.assistant_id, { input: { messages: [{ role: "user", content: "Bo" }] } });
assert.deepEqual(contents(out), ["Bo", "Howdy, Bo"]);
out = await client.runs.wait(null, "greeter", { input: { messages: [{ role: "user", content: "Cy" }] } });
assert.deepEqual(contents(out), ["Cy", "Hello, Cy"]);

// The graph's drawing comes from the library (schemas and xray: hosted_typescript_surfaces.mjs).
const visitsId = (await client.assistants.search({ graphId: "visits" }))[0].assistant_id;
const drawn = await client.assistants.getGraph(visitsId);
assert.deepEqual(drawn.nodes.map((n) => n.id), ["__start__", "greet", "ask", "__end__"]);
// The JS library lists edges in its own order (ask → __end__ before greet → ask).
assert.deepEqual(drawn.edges.map((e) => `${e.source}>${e.target}`).sort(), ["__start__>greet", "ask>__end__", "greet>ask"]);
assert.ok(drawn.nodes.every((n) => n.data === undefined || n.data.id === undefined), "no class paths");
assert.deepEqual(await client.assistants.getGraph(visitsId, { xray: true }), drawn);

// A subgraph: a run streamed with subgraphs names the subgraph's events by the parent's node and task.
const nested = (await client.assistants.search({ graphId: "nested" }))[0].assistant_id;
// The JS library draws a subgraph of one node as that node, also with xray (as the JS
// reference server answers).
const flat = await client.assistants.getGraph(nested);
assert.deepEqual(flat.nodes.map((n) => n.id), ["__start__", "child", "outer_word", "__end__"]);
assert.deepEqual(await client.assistants.getGraph(nested, { xray: true }), flat);
const parts = [];
for await (const p of client.runs.stream(null, "nested", { input: { words: [] }, streamMode: "updates", streamSubgraphs: true })) {
  if (p.event !== "metadata" && p.event !== "end") parts.push([p.event, p.data]);
}
assert.match(parts[0][0], /^updates\|child:/);
assert.deepEqual(parts.map(([, d]) => d), [{ inner_word: { words: ["inner"] } }, { child: { words: ["inner"] } }, { outer_word: { words: ["inner", "outer"] } }]);

// A Go graph beside them.
out = await client.runs.wait(null, "echo", { input: { messages: [{ role: "user", content: "hi" }] } });
assert.equal(contents(out).at(-1), "echo: hi");
console.log("ok");
