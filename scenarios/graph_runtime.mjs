// Graph runtime scenario: the official LangGraph JS SDK drives threads through runs, a dynamic
// interrupt, a state update, a resume, time travel with a fork, a subgraph interrupted inside
// and updated through its task checkpoint, and reads the graphs' schemas.
//
//   node graph_runtime.mjs     (the server URL comes from JETGRAPH_URL)
import assert from "node:assert/strict";
import { Client } from "@langchain/langgraph-sdk";

const client = new Client({ apiUrl: process.env.JETGRAPH_URL, apiKey: null, callerOptions: { maxRetries: 0 } });
const texts = (values) => (values.messages ?? []).map((m) => m.content);

// A full run of the agent graph.
const thread = await client.threads.create();
let out = await client.runs.wait(thread.thread_id, "agent", { input: { messages: [{ role: "user", content: "foo" }] } });
assert.deepEqual(texts(out), ["foo", "begin", "tool_call__begin", "end"]);
let history = await client.threads.getHistory(thread.thread_id, { limit: 20 });
assert.deepEqual(history.map((h) => [h.metadata.step, h.metadata.source]),
  [[3, "loop"], [2, "loop"], [1, "loop"], [0, "loop"], [-1, "input"]]);
assert.deepEqual(history.map((h) => h.next), [[], ["agent"], ["tool"], ["agent"], ["__start__"]]);

// A dynamic interrupt, seen in the thread state and on the thread; then resumed.
const t2 = await client.threads.create();
out = await client.runs.wait(t2.thread_id, "agent", { input: { messages: "hi", interrupt: true } });
assert.equal(out.__interrupt__?.[0]?.value, "i want to interrupt");
let state = await client.threads.getState(t2.thread_id);
assert.deepEqual(state.next, ["agent"]);
assert.equal(state.tasks[0].interrupts[0].value, "i want to interrupt");
assert.equal(state.interrupts[0].id, out.__interrupt__[0].id);
assert.equal((await client.threads.get(t2.thread_id)).status, "interrupted");
out = await client.runs.wait(t2.thread_id, "agent", { command: { resume: "go on" } });
assert.deepEqual(texts(out), ["hi", "begin", "tool_call__begin", "end"]);
assert.equal((await client.threads.get(t2.thread_id)).status, "idle");

// Interrupt before the tool, rewrite the AI answer as the agent: the graph ends there.
const t3 = await client.threads.create();
await client.runs.wait(t3.thread_id, "agent", { input: { messages: "x" }, interruptBefore: ["tool"] });
state = await client.threads.getState(t3.thread_id);
assert.deepEqual(state.next, ["tool"]);
const ai = state.values.messages[1];
await client.threads.updateState(t3.thread_id, { values: { messages: [{ ...ai, content: "end" }] }, asNode: "agent" });
state = await client.threads.getState(t3.thread_id);
assert.deepEqual(state.next, []);
assert.equal(state.metadata.source, "update");
assert.deepEqual(texts(state.values), ["x", "end"]);

// Time travel: fork from the checkpoint before the tool ran, with other input, and run on.
history = await client.threads.getHistory(t3.thread_id, { limit: 20 });
const beforeTool = history.find((h) => h.next.length === 1 && h.next[0] === "tool");
const fork = await client.threads.updateState(t3.thread_id, {
  values: { messages: [{ role: "user", content: "forked" }] }, asNode: "tool", checkpointId: beforeTool.checkpoint_id,
});
state = await client.threads.getState(t3.thread_id);
assert.equal(state.checkpoint_id, fork.checkpoint.checkpoint_id);
assert.equal(state.parent_checkpoint_id, beforeTool.checkpoint_id);
assert.equal(state.metadata.source, "fork");
out = await client.runs.wait(t3.thread_id, "agent", { input: null });
assert.deepEqual(texts(out), ["x", "begin", "forked", "end"]);
const older = await client.threads.getState(t3.thread_id, beforeTool.checkpoint_id);
assert.deepEqual(older.next, ["tool"], "the old branch is kept");

// A subgraph stopped inside (interrupt-before in the subgraph), updated through its task
// checkpoint, then resumed with no input.
const t4 = await client.threads.create();
await client.runs.wait(t4.thread_id, "weather", { input: { messages: "weather in sf?" } });
state = await client.threads.getState(t4.thread_id, undefined, { subgraphs: true });
assert.deepEqual(state.next, ["weather_graph"]);
assert.deepEqual(state.tasks[0].state.next, ["weather_node"]);
assert.equal(state.tasks[0].state.values.city, "San Francisco");
// The task names its checkpoint in the plain state (with subgraphs, it carries the state instead).
assert.equal(state.tasks[0].checkpoint, null);
const plain = await client.threads.getState(t4.thread_id);
assert.equal(plain.tasks[0].state, null);
await client.threads.updateState(t4.thread_id, {
  values: { city: "LA" }, asNode: "model_node", checkpoint: plain.tasks[0].checkpoint,
});
out = await client.runs.wait(t4.thread_id, "weather", { input: null });
assert.equal(out.messages.at(-1).content, "It's sunny in LA!");

// Copy a thread: same values and history under a new id.
const copy = await client.threads.copy(thread.thread_id);
assert.notEqual(copy.thread_id, thread.thread_id);
assert.deepEqual(texts(copy.values), ["foo", "begin", "tool_call__begin", "end"]);

// A failing graph: the SDK raises the run's error.
await assert.rejects(client.runs.wait(null, "error", { input: {} }), /CustomError: Boo!/);

// Graph descriptions.
const schemas = await client.assistants.getSchemas("agent");
assert.equal(schemas.state_schema.properties.messages.langgraph_type, "messages");
assert.deepEqual(Object.keys(schemas.config_schema.properties), ["model_name"]);
const drawn = await client.assistants.getGraph("agent");
assert.ok(drawn.nodes.some((n) => n.id === "tool") && drawn.edges.some((e) => e.source === "agent" && e.conditional));
const subgraphs = await client.assistants.getSubgraphs("nested", { recurse: true });
assert.deepEqual(Object.keys(subgraphs).sort(), ["gp_two", "gp_two|p_two"]);

console.log("graph runtime scenario passed");
