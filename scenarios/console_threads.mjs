// The console's Threads and Graphs pages in headless Chromium (see console_test.go).
import assert from "node:assert/strict";
import { client, clean, login, open, shot, text, until, visit } from "./console_harness.mjs";

const { browser, page, problems } = await open();
try {
  // A react thread: the fake model calls the calculator, the tool answers 14, the model says so.
  const react = await client.threads.create({ metadata: { purpose: "console test" } });
  await client.runs.wait(react.thread_id, "react", { input: { messages: [{ role: "user", content: "calculator: 2+3*4" }] } });

  // The search asks for the key first (the server requires one), then lists the thread.
  await visit(page, "/threads?graph_id=react");
  await login(page);
  await page.locator(`a[href="#/threads/${react.thread_id}"]`).waitFor();
  await shot(page, "threads-search");

  // The thread: one run, its five steps (-1 to 3), the tool's write and result.
  await page.locator(`a[href="#/threads/${react.thread_id}"]`).click();
  await page.locator("button.step").nth(4).waitFor();
  const steps = await page.locator("button.step").allInnerTexts();
  assert.equal(steps.length, 5, "steps: " + steps.join(" | "));
  assert.match(steps[0], /step -1 · input/);
  assert.match(steps[2], /step 1 · loop · agent/);
  assert.match(steps[3], /step 2 · loop · tools/);
  await page.locator('button.step[data-step="2"]').click();
  const detail = page.locator("#step-detail");
  await detail.locator("h2", { hasText: "step 2 · loop · tools" }).waitFor();
  const toolMsg = detail.locator(".write .msg.tool");
  assert.equal((await toolMsg.locator(".text").innerText()).trim(), "14", "the tool's result in the step's writes");
  assert.match(await detail.innerText(), /Diff from the step before[\s\S]*messages: \+1/);
  assert.match(await page.locator(".msg.ai .call").first().innerText(), /calculator\(\{"expression":"2\+3\*4"\}\)/);
  await shot(page, "thread-react");

  // Fork at step 0 with an edited message and run from there: the new branch computes 6*7.
  await page.locator('button.step[data-step="0"]').click();
  await detail.locator("h2", { hasText: "step 0 · loop" }).waitFor();
  await page.locator("#fork-values").fill(JSON.stringify({ messages: [{ role: "user", content: "calculator: 6*7" }] }));
  await page.locator("#fork-as-node").fill("__start__");
  await page.locator("#fork-run").click();
  await page.locator("#live .live-status", { hasText: "done" }).waitFor({ timeout: 30000 });
  assert.match(await page.locator("#live").innerText(), /calculator: 42/, "tokens of the forked run");
  const state = await client.threads.getState(react.thread_id);
  const last = state.values.messages.at(-1);
  assert.equal(last.content, "calculator: 42", "the fork's run answered on the thread");
  // The timeline now shows the fork's run, ending in the new answer.
  await until("the fork's run in the timeline", async () => (await page.locator("section.run").count()) >= 3);
  assert.match(await text(page), /calculator: 42/);
  await shot(page, "thread-fork");
  await clean(page, problems, "react thread");

  // weather: the first run stops before weather_node inside the subgraph.
  const weather = await client.threads.create();
  await client.runs.wait(weather.thread_id, "weather", { input: { messages: [{ role: "user", content: "weather?" }] } });
  await visit(page, "/threads/" + weather.thread_id);
  await page.locator("button.step", { hasText: "paused before weather_graph" }).waitFor();
  assert.match(await detail.innerText(), /Paused before weather_graph/);
  // Open the subgraph under its task, pick its last step, set the city and continue.
  await page.locator("details.nested > summary", { hasText: "subgraph weather_graph" }).click();
  const sub = page.locator("details.nested button.step");
  await sub.nth(2).waitFor();
  assert.match(await sub.nth(2).innerText(), /step 1 · loop · model_node/);
  await sub.nth(2).click();
  await detail.locator("h2", { hasText: "model_node" }).waitFor();
  assert.match(await detail.innerText(), /city: "San Francisco"/);
  await shot(page, "thread-weather-interrupt");
  await page.locator("#fork-values").fill('{"city": "LA"}');
  await page.locator("#fork-run").click();
  await page.locator("#live .live-status", { hasText: "done" }).waitFor({ timeout: 30000 });
  await until("the weather answer", async () => /It's sunny in LA!/.test(await text(page)));
  const ws = await client.threads.get(weather.thread_id);
  assert.equal(ws.status, "idle");
  assert.equal(ws.values.messages.at(-1).content, "It's sunny in LA!");
  await shot(page, "thread-weather-answered");

  // agent with interrupt: true raises interrupt("i want to interrupt"); answer it with a value.
  const asked = await client.threads.create();
  await client.runs.wait(asked.thread_id, "agent", { input: { messages: [{ role: "user", content: "hi" }], interrupt: true } });
  assert.equal((await client.threads.get(asked.thread_id)).status, "interrupted");
  await visit(page, "/threads/" + asked.thread_id);
  await page.locator("#resume-value").waitFor();
  assert.match(await detail.innerText(), /agent asks:[\s\S]*i want to interrupt/);
  await page.locator("#resume-value").fill('"go on"');
  await page.locator("#resume-run").click();
  await page.locator("#live .live-status", { hasText: "done" }).waitFor({ timeout: 30000 });
  const after = await client.threads.get(asked.thread_id);
  assert.notEqual(after.status, "interrupted", "the interrupt was answered");
  const runs = await client.runs.list(asked.thread_id);
  assert.equal(runs.length, 2);
  assert.ok(runs.some((r) => r.kwargs?.command?.resume === "go on"), "the console's run resumed with the value: " + JSON.stringify(runs.map((r) => r.kwargs?.command)));
  await clean(page, problems, "interrupts");

  // A failed run: its step carries the task's error, the run its status.
  const failed = await client.threads.create();
  await client.runs.wait(failed.thread_id, "error", { input: { messages: [] }, raiseError: false });
  await visit(page, "/threads/" + failed.thread_id);
  const failedStep = page.locator("button.step", { hasText: "error in error_node" });
  await failedStep.waitFor();
  assert.match(await failedStep.innerText(), /CustomError[\s\S]*Boo!/);
  assert.equal(await page.locator("section.run .badge.error").count(), 1, "the run's status badge");
  await failedStep.click();
  assert.match(await page.locator("#step-detail .tasks").innerText(), /error_node[\s\S]*error: .*Boo!/);
  await shot(page, "thread-error");
  await clean(page, problems, "error");

  // A run started elsewhere is followed live: the page joins its stream and shows its tokens.
  const busy = await client.threads.create();
  const started = await client.runs.create(busy.thread_id, "agent", {
    input: { messages: [{ role: "user", content: "take your time" }], sleep: { steps: 8, ms: 250 } },
    streamMode: ["messages", "values", "custom"], // the messages mode: whole messages so far (the console's own runs use messages-tuple)
  });
  await visit(page, "/threads/" + busy.thread_id);
  await page.locator("#live .live-status", { hasText: "running " + started.run_id }).waitFor({ timeout: 10000 });
  await shot(page, "thread-live");
  await page.locator("#live .live-status", { hasText: "done" }).waitFor({ timeout: 30000 });
  assert.match(await page.locator("#live .live").innerText(), /begin/, "the joined run's tokens");
  await until("the joined run's steps", async () => (await page.locator("button.step").count()) >= 4);
  assert.equal((await client.runs.get(busy.thread_id, started.run_id)).status, "success");
  await clean(page, problems, "live");

  // Graphs: the list, the react graph drawn, a run from the form.
  await visit(page, "/graphs");
  await page.locator("td.mono", { hasText: "react" }).first().waitFor();
  await shot(page, "graphs");
  const [assistant] = await client.assistants.search({ graphId: "react", limit: 1 });
  await visit(page, "/graphs/" + assistant.assistant_id);
  await page.locator("svg.graph").waitFor();
  const nodes = await page.locator("svg.graph g.node").evaluateAll((gs) => gs.map((g) => g.getAttribute("data-node")).sort());
  assert.deepEqual(nodes, ["__end__", "__start__", "agent", "tools"]);
  assert.equal(await page.locator("svg.graph path.edge.conditional").count(), 2, "agent's two conditional edges dashed");
  assert.equal(await page.locator("svg.graph path.edge").count(), 4);
  await page.locator("#run-input").fill(JSON.stringify({ messages: [{ role: "user", content: "calculator: 10/4" }] }));
  await page.locator("#run-start").click();
  await page.locator("#run-live .live-status", { hasText: "done" }).waitFor({ timeout: 30000 });
  assert.match(await page.locator("#run-live").innerText(), /calculator: 2\.5/);
  const newThread = (await page.locator("#run-form a").first().innerText()).trim();
  assert.equal((await client.threads.getState(newThread)).values.messages.at(-1).content, "calculator: 2.5");
  await shot(page, "graph-react");

  // The weather graph: its subgraph boxed with xray.
  const [wa] = await client.assistants.search({ graphId: "weather", limit: 1 });
  await visit(page, "/graphs/" + wa.assistant_id);
  await page.locator('svg.graph g.cluster[data-subgraph="weather_graph"]').waitFor();
  await shot(page, "graph-weather");

  // Keyboard: Tab from the top reaches the skip link, then the nav; a step is chosen with Enter.
  await visit(page, "/threads/" + react.thread_id);
  await page.reload(); // a fresh document: focus starts at the top
  await page.locator("button.step").first().waitFor();
  await page.keyboard.press("Tab");
  assert.equal(await page.evaluate(() => document.activeElement?.textContent), "Skip to content");
  await page.keyboard.press("Tab");
  await page.keyboard.press("Tab");
  assert.equal(await page.evaluate(() => document.activeElement?.textContent), "Threads");
  const outline = await page.evaluate(() => getComputedStyle(document.activeElement).outlineStyle);
  assert.notEqual(outline, "none", "the focused link shows its focus");
  await page.locator('button.step[data-step="1"]').first().focus();
  await page.keyboard.press("Enter");
  await page.locator("#step-detail h2", { hasText: "step 1 · loop · agent" }).waitFor();

  // Dark theme by the toggle, keyboard reachable.
  await page.locator("#theme-toggle").focus();
  await page.keyboard.press("Enter");
  assert.equal(await page.evaluate(() => document.documentElement.getAttribute("data-theme")), "dark");
  await shot(page, "graph-weather-dark");
  await clean(page, problems, "graphs");
} finally {
  await browser.close();
}
console.log("ok");
