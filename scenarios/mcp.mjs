// MCP at /mcp through the official TypeScript SDK's client over its streamable-HTTP transport:
// every assistant is a tool (a new one listed without a restart), a call runs it and answers its
// output as structured content, a failing graph is a tool error, a run stopped at an interrupt a
// tool error saying so; an unknown method and a malformed body are JSON-RPC errors.
//
//   node mcp.mjs     (the server URL comes from JETGRAPH_URL)
import assert from "node:assert/strict";
import { Client as LangGraph } from "@langchain/langgraph-sdk";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { EmptyResultSchema, ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";

const url = process.env.JETGRAPH_URL;
const langgraph = new LangGraph({ apiUrl: url, apiKey: null, callerOptions: { maxRetries: 0 } });
const client = new Client({ name: "jetgraph-scenario", version: "0.0.0" });
await client.connect(new StreamableHTTPClientTransport(new URL(url + "/mcp")));
assert.equal(client.getServerVersion().name, "jetgraph");

const toolsByName = async () => Object.fromEntries((await client.listTools()).tools.map((t) => [t.name, t]));
let tools = await toolsByName();
assert.ok(tools.echo, `echo is a tool: ${Object.keys(tools)}`);
const schemas = await langgraph.assistants.getSchemas("echo");
assert.deepEqual(tools.echo.inputSchema, schemas.input_schema, "the tool's input schema is the graph's");

// An assistant created now is a tool at the next list.
await langgraph.assistants.create({ graphId: "echo", name: "Support bot (EU)", description: "Answers in kind." });
tools = await toolsByName();
assert.equal(tools["Support_bot__EU_"]?.description, "Answers in kind.");

const res = await client.callTool({ name: "Support_bot__EU_", arguments: { messages: [{ role: "user", content: "bonjour" }] } });
assert.ok(!res.isError, JSON.stringify(res));
assert.equal(res.structuredContent.messages[0].content, "bonjour");
assert.deepEqual(JSON.parse(res.content[0].text), res.structuredContent);

const failed = await client.callTool({ name: "error", arguments: {} });
assert.equal(failed.isError, true);
assert.match(failed.content[0].text, /Boo!/);

// A run that stops at an interrupt has no answer: the result is a tool error that says so and
// what the graph asks, the output after.
const stopped = await client.callTool({ name: "agent", arguments: { messages: [{ role: "user", content: "hi" }], interrupt: true } });
assert.equal(stopped.isError, true, JSON.stringify(stopped));
assert.match(stopped.content[0].text, /interrupted/);
assert.match(stopped.content[0].text, /i want to interrupt/);

// An unknown method is a JSON-RPC error the SDK reads: method not found.
await assert.rejects(client.request({ method: "tools/frobnicate", params: {} }, EmptyResultSchema), (err) => {
  assert.ok(err instanceof McpError, String(err));
  assert.equal(err.code, ErrorCode.MethodNotFound);
  return true;
});
await client.close();

// A malformed body is answered with a JSON-RPC error object too (a parse error, id null).
const raw = await fetch(url + "/mcp", {
  method: "POST",
  headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
  body: '{"jsonrpc": "2.0", "id": 1, "method": ',
});
assert.equal(raw.status, 400);
assert.match(raw.headers.get("content-type"), /^application\/json/);
const parseError = await raw.json();
assert.equal(parseError.jsonrpc, "2.0");
assert.equal(parseError.id, null);
assert.equal(parseError.error.code, ErrorCode.ParseError);
console.log("mcp scenario passed");
