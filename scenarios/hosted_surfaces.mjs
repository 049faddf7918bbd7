// The assistant surfaces beside the runs API, for graphs a Python host runs (the hosted Python
// scenario's langgraph.json): each driven by its official client, as mcp.mjs, a2a.mjs and
// crons.mjs drive them for Go graphs.
//
//   node hosted_surfaces.mjs mcp|a2a|crons|webhooks     (the server URL comes from JETGRAPH_URL)
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { ClientFactory } from "@a2a-js/sdk/client";
import { Client as LangGraph } from "@langchain/langgraph-sdk";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const url = process.env.JETGRAPH_URL;
const langgraph = new LangGraph({ apiUrl: url, apiKey: null, callerOptions: { maxRetries: 0 } });
const lastContent = (values) => values.messages.at(-1).content;
const until = async (what, f) => {
  for (let i = 0; i < 600; i++) {
    if (await f()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
};

// MCP: the hosted graphs are tools with their library's input schema; a call runs the graph in
// its host, a node's exception is a tool error, an interrupt a tool error saying what is asked.
async function mcp() {
  const client = new Client({ name: "jetgraph-hosted-scenario", version: "0.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url + "/mcp")));
  const tools = Object.fromEntries((await client.listTools()).tools.map((t) => [t.name, t]));
  for (const name of ["chat", "greeter", "visits", "failing"]) assert.ok(tools[name], `${name} is a tool: ${Object.keys(tools)}`);
  const schemas = await langgraph.assistants.getSchemas("chat");
  assert.deepEqual(tools.chat.inputSchema, schemas.input_schema, "the tool's input schema is the Python graph's");
  assert.ok(tools.chat.inputSchema.properties.messages, JSON.stringify(tools.chat.inputSchema));

  const res = await client.callTool({ name: "chat", arguments: { messages: [{ role: "user", content: "hi" }] } });
  assert.ok(!res.isError, JSON.stringify(res));
  assert.equal(lastContent(res.structuredContent), "hello there friend");

  const failed = await client.callTool({ name: "failing", arguments: { messages: [{ role: "user", content: "x" }] } });
  assert.equal(failed.isError, true, JSON.stringify(failed));
  assert.match(failed.content[0].text, /the node broke/);

  const stopped = await client.callTool({ name: "visits", arguments: { messages: [{ role: "user", content: "ada" }] } });
  assert.equal(stopped.isError, true, JSON.stringify(stopped));
  assert.match(stopped.content[0].text, /interrupted/);
  assert.match(stopped.content[0].text, /continue\?/);
  await client.close();
}

// A2A: a hosted graph is an agent; message/send and message/stream run it, its interrupt is
// input-required and the next message on the task resumes it.
async function a2a() {
  const factory = new ClientFactory();
  const text = (parts) => (parts ?? []).filter((p) => p.kind === "text").map((p) => p.text).join("");
  const userMessage = (parts, extra = {}) => ({ message: { kind: "message", messageId: randomUUID(), role: "user", parts, ...extra } });
  const chat = await factory.createFromUrl(`${url}/a2a/chat/`);
  const done = await chat.sendMessage(userMessage([{ kind: "text", text: "hi" }]));
  assert.equal(done.status.state, "completed", JSON.stringify(done.status));
  assert.equal(text(done.artifacts[0].parts), "hello there friend");

  const events = [];
  for await (const ev of chat.sendMessageStream(userMessage([{ kind: "text", text: "again" }], { contextId: done.contextId }))) events.push(ev);
  assert.equal(events[0].kind, "task");
  assert.equal(events.at(-1).status.state, "completed", JSON.stringify(events.at(-1)));
  const artifact = events.find((e) => e.kind === "artifact-update");
  assert.equal(text(artifact.artifact.parts), "hello there friend");

  const visits = await factory.createFromUrl(`${url}/a2a/visits/`);
  const asked = await visits.sendMessage(userMessage([{ kind: "text", text: "ada" }]));
  assert.equal(asked.status.state, "input-required", JSON.stringify(asked.status));
  // The interrupt's value, an object, is a data part.
  assert.deepEqual(asked.status.message.parts.find((p) => p.kind === "data")?.data, { value: { question: "continue?" } });
  const resumed = await visits.sendMessage(userMessage([{ kind: "text", text: "yes" }], { taskId: asked.id, contextId: asked.contextId }));
  assert.equal(resumed.id, asked.id);
  assert.equal(resumed.status.state, "completed", JSON.stringify(resumed.status));
  assert.equal(text(resumed.artifacts[0].parts), "ada said yes");
}

// Crons: a thread cron on the factory graph runs it on its schedule with the cron's config.
async function crons() {
  const thread = await langgraph.threads.create();
  const cron = await langgraph.crons.createForThread(thread.thread_id, "greeter", {
    schedule: "* * * * * *",
    input: { messages: [{ role: "user", content: "cron" }] },
    config: { configurable: { greeting: "Good day" } },
  });
  await until("two runs of the hosted graph's cron", async () => {
    const runs = await langgraph.runs.list(thread.thread_id);
    return runs.filter((r) => r.status === "success").length >= 2;
  });
  await langgraph.crons.delete(cron.cron_id);
  const state = await langgraph.threads.getState(thread.thread_id);
  assert.equal(lastContent(state.values), "Good day, cron");
}

// Webhooks: a hosted graph's run calls its webhook when it ends, with the run and its values.
async function webhooks() {
  const received = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      received.push(JSON.parse(body));
      res.end("ok");
    });
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const hook = `http://127.0.0.1:${server.address().port}/hook`;
  const thread = await langgraph.threads.create();
  const run = await langgraph.runs.create(thread.thread_id, "chat", { input: { messages: [{ role: "user", content: "hi" }] }, webhook: hook });
  await until("the webhook", async () => received.length > 0);
  server.close();
  const [payload] = received;
  assert.equal(payload.run_id, run.run_id);
  assert.equal(payload.thread_id, thread.thread_id);
  assert.equal(payload.status, "success");
  assert.equal(lastContent(payload.values), "hello there friend");
}

const surfaces = { mcp, a2a, crons, webhooks };
const which = process.argv[2];
assert.ok(surfaces[which], `name a surface: ${Object.keys(surfaces)}`);
await surfaces[which]();
console.log(`hosted ${which} scenario passed`);
