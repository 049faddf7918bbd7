// Run semantics scenario: the official LangGraph JS SDK streams runs that continue from a
// checkpoint, as a chat UI does: a resume after an interrupt (at the root and in a subgraph), a
// "regenerate" from an earlier checkpoint, and a command.update without resume. Each first
// streams the state it continues from, so that the UI replaces what it shows.
//
//   node semantics.mjs     (the server URL comes from JETGRAPH_URL)
import assert from "node:assert/strict";
import { Client } from "@langchain/langgraph-sdk";

const client = new Client({ apiUrl: process.env.JETGRAPH_URL, apiKey: null, callerOptions: { maxRetries: 0 } });
const texts = (values) => (values.messages ?? []).map((m) => m.content);
const gather = async (stream) => {
  const out = [];
  for await (const chunk of stream) out.push(chunk);
  return out;
};
const valuesOf = (chunks) => chunks.filter((c) => c.event === "values").map((c) => c.data);

// A resume after a dynamic interrupt: the first values event is the interrupted state.
const t1 = await client.threads.create();
let out = await client.runs.wait(t1.thread_id, "agent", { input: { messages: [{ role: "user", content: "hi" }], interrupt: true } });
assert.equal(out.__interrupt__?.[0]?.value, "i want to interrupt");
let chunks = await gather(client.runs.stream(t1.thread_id, "agent", { command: { resume: "go on" }, streamMode: ["values", "checkpoints"] }));
assert.deepEqual(chunks.map((c) => c.event).slice(0, 3), ["metadata", "values", "checkpoints"]);
let values = valuesOf(chunks);
assert.deepEqual(texts(values[0]), ["hi"], "the first values event is the state the run resumes from");
assert.deepEqual(texts(values.at(-1)), ["hi", "begin", "tool_call__begin", "end"]);
const resumedFrom = chunks.find((c) => c.event === "checkpoints").data;
assert.deepEqual(resumedFrom.next, ["agent"], "the first checkpoint is the one the run resumes from");
// /wait answers with every channel of the state, not only the output schema's.
assert.ok("sharedStateFromStoreConfig" in out || "sharedStateFromStoreConfig" in values.at(-1));

// A subgraph stopped inside, continued with no input: the root's state, then the subgraph's.
const t2 = await client.threads.create();
await client.runs.wait(t2.thread_id, "weather", { input: { messages: [{ role: "user", content: "SF" }] } });
chunks = await gather(client.runs.stream(t2.thread_id, "weather", { input: null, streamMode: ["values"], streamSubgraphs: true }));
const named = chunks.filter((c) => c.event.startsWith("values"));
assert.deepEqual(named.slice(0, 2).map((c) => c.event.split(":")[0]), ["values", "values|weather_graph"]);
assert.deepEqual(texts(named[0].data), ["SF"]);
assert.equal(named[0].data.route, "weather");
assert.equal(named[1].data.city, "San Francisco");
assert.equal(named.at(-1).data.messages.at(-1).content, "It's sunny in San Francisco!");
assert.deepEqual(named.at(-1).data.messages.at(-1).tool_calls, [], "an AI message carries its tool calls, none");

// Regenerate: run again from the checkpoint before the answer. The run first shows that state
// (the old answer gone), and the new answer has an id of its own.
const t3 = await client.threads.create();
const first = await client.runs.wait(t3.thread_id, "react", { input: { messages: [{ role: "user", content: "hello" }] } });
const answer = first.messages.at(-1);
assert.equal(answer.type, "ai");
const history = await client.threads.getHistory(t3.thread_id, { limit: 10 });
const before = history.find((h) => h.next.length === 1 && h.next[0] === "agent");
chunks = await gather(client.runs.stream(t3.thread_id, "react", { input: null, checkpointId: before.checkpoint_id, streamMode: ["values"] }));
values = valuesOf(chunks);
assert.deepEqual(texts(values[0]), ["hello"], "the regenerated run first shows the state before the answer");
const again = values.at(-1).messages.at(-1);
assert.equal(again.type, "ai");
assert.equal(again.content, answer.content);
assert.notEqual(again.id, answer.id, "a regenerated answer has a fresh id");
const branches = await client.threads.getHistory(t3.thread_id, { limit: 20 });
assert.ok(branches.some((h) => h.values.messages?.at(-1)?.id === answer.id), "the first answer stays in the history");

// command.update without resume on an idle thread: an input checkpoint holding the update,
// streamed as values.
const t4 = await client.threads.create();
await client.runs.wait(t4.thread_id, "echo", { input: { messages: [{ role: "user", content: "foo" }] } });
chunks = await gather(client.runs.stream(t4.thread_id, "echo", {
  command: { update: { messages: [{ role: "user", content: "note", id: "note-1" }] } }, streamMode: ["values"],
}));
assert.deepEqual(chunks.map((c) => c.event).filter((e) => e !== "end"), ["metadata", "values"]);
assert.deepEqual(texts(chunks[1].data), ["foo", "echo: foo", "note"]);
const state = await client.threads.getState(t4.thread_id);
assert.equal(state.metadata.source, "input");
assert.deepEqual(texts(state.values), ["foo", "echo: foo", "note"]);
assert.deepEqual(state.next, []);
assert.equal((await client.threads.get(t4.thread_id)).status, "idle");

console.log("semantics scenario passed");
