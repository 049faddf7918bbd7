// Hostile strings in the console's Traces pages (see console_pages_test.go): a trace sent to the
// tracing API (which anyone holding a key can write to) whose project, span names, tags, metadata, error,
// messages (text, reasoning, tool calls, a javascript: and an SVG image) and feedback comment are
// markup or script must show as text, run nothing and leave the CSP nothing to block.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { clean, hostile, key, login, open, shot, text, until, url, visit } from "./console_harness.mjs";

const evil = hostile;
const svg = "data:image/svg+xml;base64," + Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" onload="window.__pwned='svgdata'"/>`).toString("base64");

// The default tenant (no X-Api-Key), where a server that authenticates its runtime API asks for
// the runtime's credential: the key as a bearer token, as the console's Traces page sends it.
const tracingHeaders = { "Content-Type": "application/json", Authorization: `Bearer ${key}` };

async function post(path, body) {
  const res = await fetch(url + path, { method: "POST", headers: tracingHeaders, body: JSON.stringify(body) });
  assert.ok(res.ok, `${path}: ${res.status} ${await res.text()}`);
  return res.status === 204 ? null : res.json().catch(() => null);
}

// The tracing API's dotted order: <UTC time as 20260101T000000000000Z><run id>, a parent's first.
const stamp = (d) => d.toISOString().replace(/[-:]/g, "").replace(/\.(\d{3})Z$/, ".$1000Z").replace(".", "");
const t0 = new Date(Date.now() - 5000);
const t1 = new Date(t0.getTime() + 1000);
const root = randomUUID();
const llm = randomUUID();
const project = `evil ${evil[0]}`;
await post("/tracing/runs/batch", {
  post: [
    {
      id: root, trace_id: root, dotted_order: stamp(t0) + root, name: `root ${evil[1]}`, run_type: "chain",
      start_time: t0.toISOString(), end_time: new Date(t0.getTime() + 3000).toISOString(), session_name: project,
      inputs: { question: evil[3] }, outputs: { answer: evil[4] }, error: `failed ${evil[0]}`,
      tags: evil, extra: { metadata: { ...Object.fromEntries(evil.map((e, i) => [`k${i}${e}`, e])), thread_id: evil[2] } },
    },
    {
      id: llm, trace_id: root, parent_run_id: root, dotted_order: `${stamp(t0) + root}.${stamp(t1) + llm}`, name: `model ${evil[3]}`,
      run_type: "llm", start_time: t1.toISOString(), end_time: new Date(t1.getTime() + 1000).toISOString(), session_name: project,
      events: [{ name: "new_token", time: new Date(t1.getTime() + 200).toISOString() }],
      extra: { metadata: { ls_provider: evil[0], ls_model_name: "gpt-4o-mini" } },
      inputs: {
        messages: [
          { role: "system", content: [{ type: "text", text: evil.join("\n") }] },
          {
            role: "user",
            content: [
              { type: "text", text: evil[1] },
              { type: "image", url: evil[2] },
              { type: "image", url: svg },
              { type: "image", base64: "PHN2Zz4=", mime_type: "image/svg+xml" },
              { type: "file", url: evil[2], mime_type: evil[1] },
            ],
          },
        ],
      },
      outputs: {
        messages: [
          {
            role: "assistant",
            content: [
              { type: "reasoning", text: evil[4] },
              { type: "tool_call", id: evil[3], name: evil[0], args: { [evil[1]]: evil[2] } },
            ],
            usage_metadata: { input_tokens: 10, output_tokens: 5, total_tokens: 15 },
          },
        ],
      },
    },
  ],
});
await until("the hostile trace readable", async () => {
  const res = await fetch(url + "/tracing/runs/query", { method: "POST", headers: tracingHeaders, body: JSON.stringify({ trace: root }) });
  return res.ok && (await res.json()).runs.length === 2;
});
await post("/tracing/feedback", { run_id: llm, key: `key ${evil[1]}`, score: 0, comment: evil.join(" ") });

const { browser, page, problems } = await open();
try {
  // The projects, the project's runs, the trace and its LLM span (messages, metadata, feedback).
  await visit(page, "/traces");
  await login(page); // the server authenticates its runtime API, so the default tenant's traces too
  await page.locator("table.projects a", { hasText: project }).click();
  await page.locator("table.runs a", { hasText: "root " }).waitFor();
  const runsText = await text(page);
  for (const e of [evil[1], ...evil]) assert.ok(runsText.includes(e), `runs list shows ${e} as text`);
  await clean(page, problems, "hostile runs");
  await page.locator("table.runs a", { hasText: "root " }).click();
  await page.locator(".wf-row").nth(1).waitFor();
  await page.locator(".wf-row").nth(1).click();
  await page.locator(".span-detail .feedback .fb").waitFor();
  await page.locator(".span-detail .trace-msgs.outputs details.reasoning summary").click();
  const shown = await text(page);
  for (const e of evil) assert.ok(shown.includes(e), `trace page shows ${e} as text`);
  assert.ok(shown.includes(`model ${evil[3]}`) && shown.includes(`key ${evil[1]}`));
  // No element or URL came from the payloads: no script, iframe or svg of theirs; the javascript:
  // and SVG images neither loaded nor linked; the only images are none (no raster data here).
  const injected = await page.evaluate(() => ({
    script: document.querySelectorAll("main script, main iframe").length,
    svgOnload: [...document.querySelectorAll("main svg")].filter((s) => s.hasAttribute("onload")).length,
    jsLinks: [...document.querySelectorAll("main a")].filter((a) => /^\s*javascript:/i.test(a.getAttribute("href") ?? "")).length,
    images: [...document.querySelectorAll("main img")].map((i) => i.getAttribute("src")),
  }));
  assert.deepEqual(injected, { script: 0, svgOnload: 0, jsLinks: 0, images: [] });
  // The metadata's thread_id (hostile too) links to the thread page by an escaped hash route only.
  const threadHref = await page.locator(".trace-head a").first().getAttribute("href");
  assert.ok(threadHref.startsWith("#/threads/") && !threadHref.includes("<"), threadHref);
  await shot(page, "hostile-trace");
  // Following the hostile thread link runs nothing either.
  await page.locator(".trace-head a").nth(1).click();
  await page.locator("main h1", { hasText: "Traces of thread" }).waitFor();
  assert.ok((await text(page)).includes(evil[2]));
  await clean(page, problems, "hostile trace");
  console.log("ok");
} finally {
  await browser.close();
}
