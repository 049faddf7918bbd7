// Unit tests of dist/tracemsg.js.
import test from "node:test";
import assert from "node:assert/strict";
import { messageViews, inlineImage, linkURL } from "../dist/tracemsg.js";

const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

test("roles, text, reasoning, tool calls and their results, usage", () => {
  const v = messageViews([
    { role: "system", content: [{ type: "text", text: "be brief" }] },
    { role: "user", content: [{ type: "text", text: "weather?" }, { type: "image", url: "https://example.com/a.png" }] },
    { role: "assistant", content: [{ type: "reasoning", text: "look it up" }, { type: "tool_call", id: "c1", name: "get_weather", args: { city: "Paris" } }],
      usage_metadata: { input_tokens: 10, output_tokens: 5, total_tokens: 15 } },
    { role: "tool", tool_call_id: "c1", content: [{ type: "text", text: "sunny" }] },
    { role: "assistant", content: "It is sunny." },
  ]);
  assert.deepEqual(v.map((m) => m.role), ["system", "user", "assistant", "tool", "assistant"]);
  assert.deepEqual(v[1].parts[1], { kind: "image", inline: null, url: "https://example.com/a.png", mime: "", ref: null });
  assert.deepEqual(v[2].parts[0], { kind: "reasoning", text: "look it up" });
  assert.deepEqual(v[2].parts[1], { kind: "tool_call", id: "c1", name: "get_weather", args: { city: "Paris" }, server: false });
  assert.deepEqual(v[2].usage, { input: 10, output: 5, total: 15 });
  assert.equal(v[3].toolCallId, "c1");
  assert.equal(v[3].toolName, "get_weather");
  assert.deepEqual(v[4].parts, [{ kind: "text", text: "It is sunny." }]);
});

test("server tools, media, unknown blocks, problems", () => {
  const v = messageViews([
    { role: "assistant", problem: "unknown block", content: [
      { type: "server_tool_call", id: "s1", name: "web_search", args: { q: "x" } },
      { type: "server_tool_result", tool_call_id: "s1", status: "success", output: { hits: 1 } },
      { type: "file", base64: "AAAA", mime_type: "application/pdf" },
      { type: "mystery", x: 1 },
    ] },
  ]);
  const p = v[0].parts;
  assert.equal(p[0].server, true);
  assert.deepEqual(p[1], { kind: "tool_result", toolCallId: "s1", status: "success", output: { hits: 1 } });
  assert.deepEqual(p[2], { kind: "media", type: "file", url: null, mime: "application/pdf", ref: null, bytes: 3 });
  assert.equal(p[3].kind, "other");
  assert.equal(v[0].problem, "unknown block");
});

test("images: inline only as raster data, URLs only http(s)", () => {
  assert.equal(inlineImage("", png, "image/png"), "data:image/png;base64," + png);
  assert.equal(inlineImage("data:image/png;base64," + png, "", ""), "data:image/png;base64," + png);
  assert.equal(inlineImage("data:image/svg+xml;base64,PHN2Zz4=", "", ""), null);
  assert.equal(inlineImage("", "PHN2Zz4=", "image/svg+xml"), null);
  assert.equal(inlineImage("", "not base64 <script>", "image/png"), null);
  assert.equal(inlineImage('data:image/png;base64,AAA" onerror="x', "", ""), null);
  assert.equal(linkURL("javascript:alert(1)"), null);
  assert.equal(linkURL("data:text/html,<script>"), null);
  assert.equal(linkURL(" https://example.com/x.png "), "https://example.com/x.png");
});

test("not a list is no messages", () => {
  assert.deepEqual(messageViews(undefined), []);
  assert.deepEqual(messageViews({ messages: [] }), []);
  assert.deepEqual(messageViews([null, 3]), []);
});
