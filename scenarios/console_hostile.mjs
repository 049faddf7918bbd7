// Hostile strings in the console (see console_test.go): thread metadata, state values, message
// content and assistant names that are markup or script must show as text, run nothing, and
// leave the Content-Security-Policy nothing to block.
import assert from "node:assert/strict";
import { client, clean, hostile, login, open, shot, visit } from "./console_harness.mjs";

const evil = hostile;

// A 1x1 PNG: an inline image the console does show (the policy allows data: images).
const pixel = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";

// A thread whose metadata keys and values, and whose state (messages of text and image blocks,
// and plain channels), hold them.
const thread = await client.threads.create({ metadata: Object.fromEntries(evil.map((e, i) => [`k${i}${e}`, e])) });
await client.runs.wait(thread.thread_id, "agent", {
  input: {
    messages: [
      {
        role: "user",
        content: [
          { type: "text", text: evil.join("\n") },
          { type: "image_url", image_url: { url: evil[2] } },
          { type: "image_url", image_url: { url: pixel } },
        ],
      },
    ],
    keyOne: evil[1],
    keyTwo: { [evil[3]]: evil[0] },
  },
  config: { configurable: { user_id: evil[4] } },
});
// An assistant named and described by them.
const assistant = await client.assistants.create({ graphId: "echo", name: evil[3], description: evil[1], metadata: { [evil[0]]: evil[2] } });

const { browser, page, problems } = await open();

/** expandAll opens every collapsed JSON node, so that every value is in the page. */
async function expandAll() {
  for (let round = 0; round < 6; round++) {
    const closed = page.locator("main details:not([open]) > summary");
    const n = await closed.count();
    if (n === 0) return;
    for (let i = n - 1; i >= 0; i--) await closed.nth(i).click();
  }
}

/** check asserts nothing ran and every string shows as text (or as its JSON in a JSON view). */
async function check(where, strings) {
  await expandAll();
  const dangerous = await page.evaluate(
    () => document.querySelectorAll('main script, main iframe, main [onerror], main [onload], a[href^="javascript:"], img[src^="javascript:"]').length,
  );
  assert.equal(dangerous, 0, `${where}: markup from the data became elements`);
  const body = await page.locator("main").innerText();
  for (const s of strings) {
    assert.ok(body.includes(s) || body.includes(JSON.stringify(s).slice(1, -1)), `${where}: ${JSON.stringify(s)} not shown as text`);
  }
  await clean(page, problems, where);
  await shot(page, "hostile-" + where);
}

try {
  await visit(page, "/threads");
  await login(page);
  await page.locator(`a[href="#/threads/${thread.thread_id}"]`).waitFor();
  await check("threads", []);

  await visit(page, "/threads/" + thread.thread_id);
  await page.locator("button.step").first().waitFor();
  // The first step: the input as written, blocks and all.
  await page.locator('button.step[data-step="-1"]').click();
  await page.locator("#step-detail h2", { hasText: "step -1" }).waitFor();
  await check("thread-input", evil);
  const images = await page.locator("#step-detail img").evaluateAll((imgs) => imgs.map((i) => [i.getAttribute("src"), i.naturalWidth]));
  assert.deepEqual(images, [[pixel, 1]], "the data: image shown, the javascript: one not");
  assert.match(await page.locator("#step-detail").innerText(), /image not shown \(not an http\(s\) or data:image URL\): javascript:/);
  // The last step: the channels and the metadata.
  await page.locator("button.step").last().click();
  await check("thread-state", evil);

  await visit(page, "/graphs");
  await page.locator(`a[href="#/graphs/${assistant.assistant_id}"]`).waitFor();
  await check("graphs", [evil[3], evil[1]]);

  await visit(page, "/graphs/" + assistant.assistant_id);
  await page.locator("svg.graph").waitFor();
  await check("assistant", [evil[3], evil[1], evil[0], evil[2]]);
  assert.equal(await page.title(), "jetgraph console");
} finally {
  await browser.close();
}
console.log("ok");
