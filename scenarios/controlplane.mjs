// Control-plane scenario, SDK part: the official LangGraph JS SDK, pointed at a deployment's
// custom_url with the tenant's key as apiKey, runs a graph there, waited for and streamed (SSE
// through the proxy). With "run" it creates a thread and runs the graph on it, printing the
// thread id; with "check <thread_id>" it reads that thread back (it must have survived the new
// revision) and runs the graph again. With JG_AUTH_SCHEME=bearer the key goes as
// "Authorization: Bearer <key>" (the control plane's Bearer scheme) instead of x-api-key.
//
//   node controlplane.mjs <custom_url> <api_key> <graph_id> run|check [thread_id]
import assert from "node:assert/strict";
import { Client } from "@langchain/langgraph-sdk";

const [url, key, graph, mode, threadId] = process.argv.slice(2);
const client =
  process.env.JG_AUTH_SCHEME === "bearer"
    ? new Client({ apiUrl: url, apiKey: null, defaultHeaders: { Authorization: `Bearer ${key}` } })
    : new Client({ apiUrl: url, apiKey: key });

let thread;
if (mode === "check") {
  thread = await client.threads.get(threadId);
  assert.equal(thread.thread_id, threadId);
} else {
  thread = await client.threads.create();
}
const result = await client.runs.wait(thread.thread_id, graph, { input: { messages: [{ role: "user", content: "hi" }], name: "Ada" } });
assert.ok(result && typeof result === "object", `run result ${JSON.stringify(result)}`);
const kinds = [];
for await (const chunk of client.runs.stream(thread.thread_id, graph, {
  input: { messages: [{ role: "user", content: "hi" }], name: "Ada" },
  streamMode: "values",
})) {
  kinds.push(chunk.event);
}
assert.equal(kinds[0], "metadata", `streamed events ${kinds}`);
assert.ok(kinds.includes("values"), `streamed events ${kinds}`);
console.log(`thread ${thread.thread_id}`);
console.log("controlplane sdk scenario passed");
