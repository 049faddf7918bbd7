// The official JS SDK through jetgraph's Go example graphs and their LangGraph ports
// (scenarios/hosted/ports, graph ids py_<id> and ts_<id>), served side by side: the same runs on
// each must answer the same, ids and times normalised. Run by TestHostedPorts; JETGRAPH_URL
// names the server. hosted_ports.py (the Python SDK) covers more cases; this one streams through
// the JS client's own SSE parsing, resumes with its Command and updates a subgraph's state.
import assert from "node:assert/strict";
import { Client } from "@langchain/langgraph-sdk";

const client = new Client({ apiUrl: process.env.JETGRAPH_URL, apiKey: null, callerOptions: { maxRetries: 0 } });
const ada = { configurable: { user_id: "ada" } };
const human = (text) => ({ messages: [{ role: "user", content: text }] });

// Opaque ids (UUIDs, LangChain's run-based message ids, interrupt ids) become <id:N> by first
// appearance; a message keeps only what graphs decide (the rest is the model's or the language's).
const OPAQUE = /(?:lc_run--|run-)?[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?:-\d+|-out-\d+|-tool-[\w-]+)?|\b[0-9a-f]{32}\b/g;
const MESSAGE_FIELDS = ["type", "content", "id", "tool_call_id"];

function normaliser() {
  const seen = new Map();
  const walk = (v) => {
    if (Array.isArray(v)) return v.map(walk);
    if (typeof v === "string") return v.replace(OPAQUE, (m) => seen.get(m) ?? seen.set(m, `<id:${seen.size}>`).get(m));
    if (v === null || typeof v !== "object") return v;
    if (typeof v.type === "string" && "content" in v) {
      const m = Object.fromEntries(MESSAGE_FIELDS.filter((k) => v[k] != null).map((k) => [k, v[k]]));
      if (m.type === "AIMessageChunk") m.type = "ai"; // LangGraph.js calls a streamed chunk "ai"
      if (typeof m.id === "string") m.id = m.id.replace(/^fake-/, ""); // the Go fake model's ids
      v = m;
    }
    return Object.fromEntries(Object.keys(v).sort().map((k) => [k, walk(v[k])]));
  };
  return walk;
}

// A run's events but its metadata and end, a messages tuple's metadata cut to the node and step,
// an update's messages without ids (Python gives a node's message its id only in the state).
async function events(stream) {
  const out = [];
  for await (const { event, data } of stream) {
    if (event === "metadata" || event === "end") continue;
    if (event === "messages") out.push([event, [data[0], { node: data[1].langgraph_node, step: data[1].langgraph_step }]]);
    else if (event.startsWith("updates"))
      out.push([event, Object.fromEntries(Object.entries(data).map(([node, u]) => [node, u?.messages ? { ...u, messages: u.messages.map(({ id, ...m }) => m) } : u]))]);
    else out.push([event, data]);
  }
  return out;
}

async function cases(p) {
  const out = {};

  let t = (await client.threads.create()).thread_id;
  out.agent = await events(client.runs.stream(t, p + "agent", {
    input: { ...human("foo"), sleep: { steps: 2, ms: 10 } }, config: ada, streamMode: ["messages-tuple", "updates", "custom"],
  }));

  t = (await client.threads.create()).thread_id;
  const waited = await client.runs.wait(t, p + "agent", { input: { ...human("foo"), interrupt: true }, config: ada });
  const resumed = await events(client.runs.stream(t, p + "agent", { command: { resume: "go on" }, config: ada, streamMode: "values" }));
  out.interrupt = { waited, resumed, status: (await client.threads.get(t)).status };

  t = (await client.threads.create()).thread_id;
  await client.runs.wait(t, p + "weather", { input: human("weather in sf?") });
  const state = await client.threads.getState(t, undefined, { subgraphs: true });
  const sub = state.tasks[0].state;
  await client.threads.updateState(t, { values: { city: "LA" }, checkpoint: sub.checkpoint });
  out.weather = {
    next: state.next, subNext: sub.next, subValues: sub.values,
    resumed: await events(client.runs.stream(t, p + "weather", { input: null, streamMode: ["updates"], streamSubgraphs: true })),
  };

  t = (await client.threads.create()).thread_id;
  out.error = await events(client.runs.stream(t, p + "error", { input: human("hi"), streamMode: "updates" }));
  return normaliser()(out);
}

// One prefix at a time: the agent cases share a store item.
const goAnswers = await cases("");
const texts = (evs) => evs.filter(([e]) => e === "messages").map(([, [m]]) => m.content).join("");
assert.equal(texts(goAnswers.agent), "begintool_call__beginend", JSON.stringify(goAnswers.agent));
assert.deepEqual(goAnswers.agent.filter(([e]) => e === "custom").map(([, d]) => d.step), [0, 1]);
assert.deepEqual(goAnswers.interrupt.waited.__interrupt__.map((i) => i.value), ["i want to interrupt"]);
assert.equal(goAnswers.weather.resumed.at(-1)[1].weather_graph.messages.at(-1).content, "It's sunny in LA!");
assert.deepEqual(goAnswers.error.at(-1), ["error", { error: "CustomError", message: "Boo!" }]);
for (const p of ["py_", "ts_"]) {
  const got = await cases(p);
  for (const name of Object.keys(goAnswers)) {
    assert.deepEqual(got[name], goAnswers[name], `${p}${name} answers differently from the Go graph`);
  }
}
console.log("ok");
