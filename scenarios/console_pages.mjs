// The console's Traces, Deployments and Overview pages in headless Chromium (see
// console_pages_test.go). Environment beside the harness's: CONSOLE_REPO (a Go-module git
// repository whose build is slow), CONSOLE_BIN (the jetgraph binary its build hands over).
import assert from "node:assert/strict";
import { client, clean, key, login, open, shot, text, until, url, visit } from "./console_harness.mjs";

/**
 * call is the API with the server's key; the tracing API's calls carry it as a bearer token, not
 * X-Api-Key, as the console's Traces page sends them by default: jetgraph traces its own runs into
 * the default tenant, which a control-plane key (the admin key) in X-Api-Key does not act for, and
 * which a server that authenticates its runtime API opens to its credentials only.
 */
async function call(method, path, body) {
  const res = await fetch(url + path, {
    method,
    headers: path.startsWith("/tracing/") ? { Authorization: `Bearer ${key}`, "Content-Type": "application/json" } : { "X-Api-Key": key, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const raw = await res.text();
  let json = null;
  try {
    json = JSON.parse(raw);
  } catch {
    json = raw;
  }
  return { status: res.status, json };
}

const { browser, page, problems } = await open();
page.on("dialog", (d) => void d.accept());
try {
  // --- Traces: a react run (the fake model calls the calculator) traces an LLM span with tokens.
  const thread = await client.threads.create();
  const run = await client.runs.create(thread.thread_id, "react", { input: { messages: [{ role: "user", content: "calculator: 2+3*4" }] } });
  await client.runs.join(thread.thread_id, run.run_id);
  let traced = null;
  await until("the run's trace with its LLM span", async () => {
    traced = await call("POST", "/tracing/runs/query", { trace: run.run_id, limit: 100 });
    return traced.status === 200 && traced.json.runs.some((x) => x.run_type === "llm" && x.total_tokens > 0) && traced.json.runs.every((x) => x.end_time);
  }).catch(async (err) => {
    const all = await call("POST", "/tracing/runs/query", { limit: 5, is_root: true });
    throw new Error(`${err.message}: ${JSON.stringify(traced)}; roots: ${JSON.stringify(all).slice(0, 2000)}; run ${JSON.stringify(run)}`);
  });

  // One click from the thread to its run's trace.
  await visit(page, `/threads/${thread.thread_id}`);
  await login(page);
  await page.locator(`a[href="#/traces/run/${run.run_id}"]`).click();
  await page.locator(".wf-row").first().waitFor();
  const rows = await page.locator(".wf-row").count();
  assert.ok(rows >= 3, `${rows} spans in the waterfall`);
  assert.match(await page.locator(".trace-totals .tokens").innerText(), /^\d+ tokens \(\d+ in, \d+ out\)$/, "tokens rolled up to the trace");
  const llm = page.locator(".wf-row", { has: page.locator(".badge.type.llm") }).first();
  assert.match(await llm.locator(".tok").innerText(), /^[1-9]\d* tok$/, "the LLM span's tokens");
  // The root's row carries the tokens of the spans below it.
  assert.match(await page.locator(".wf-row").first().locator(".tok").innerText(), /^[1-9]\d* tok$/);
  // Nested by dotted order: the LLM span is deeper than the root.
  assert.ok(Number(await llm.getAttribute("aria-level")) > 1);
  // Back to the thread from the trace.
  assert.equal(await page.locator(`.trace-head a[href="#/threads/${thread.thread_id}"]`).count(), 1, "a link back to the thread");

  // The LLM span: its messages in the trace format, its tokens, and feedback added.
  await llm.click();
  const detail = page.locator(".span-detail");
  await detail.locator(".trace-msgs.inputs").waitFor();
  assert.match(await detail.locator(".trace-msgs.inputs").innerText(), /calculator: 2\+3\*4/);
  assert.match(await detail.locator(".trace-msgs.outputs").innerText(), /calculator/);
  assert.match(await detail.locator('dd[data-fact="Tokens"]').innerText(), /^\d+ tokens/);
  // Keyboard: the arrow keys move between spans.
  await page.keyboard.press("ArrowUp");
  await until("the span above selected", async () => (await page.locator('.wf-row[aria-selected="true"]').getAttribute("data-span")) !== (await llm.getAttribute("data-span")));
  await llm.click();
  await detail.locator('input[name="key"]').fill("correctness");
  await detail.locator('input[name="score"]').fill("1");
  await detail.locator('input[name="comment"]').fill("right answer");
  await detail.locator('button[type="submit"]').click();
  await detail.locator(".feedback .fb", { hasText: "correctness" }).waitFor();
  assert.match(await detail.locator(".feedback .fb").first().innerText(), /correctness = 1 "right answer"/);
  await shot(page, "trace-react");

  // The project's runs, filtered: LLM spans only.
  await page.locator('p a[href^="#/traces/"]').nth(0).click();
  await page.locator("form.filters").waitFor();
  await page.locator('select[name="run_type"]').selectOption("llm");
  await page.locator('input[name="all"]').check();
  await page.locator("form.filters button[type=submit]").click();
  await until("the filtered runs", async () => (await page.locator(".filter-text").count()) > 0 && (await page.locator("table.runs tbody tr").count()) > 0);
  const types = await page.locator("table.runs tbody tr td:nth-child(2)").allInnerTexts();
  assert.ok(types.length > 0 && types.every((x) => x === "llm"), "only llm runs: " + types.join(","));
  assert.match(await page.locator(".filter-text").innerText(), /eq\(run_type, "llm"\)/);
  await shot(page, "traces-runs-filtered");
  // An error filter finds none of these successful runs.
  await page.locator('select[name="status"]').selectOption("error");
  await page.locator("form.filters button[type=submit]").click();
  await page.locator("table.runs td", { hasText: "No run matches." }).waitFor();

  await visit(page, "/traces");
  await page.locator("table.projects a", { hasText: "default" }).waitFor();
  await shot(page, "traces-projects");
  await clean(page, problems, "traces");

  // --- Deployments: a build that prints a line a second, followed live.
  const bin = process.env.CONSOLE_BIN.replaceAll("'", "'\\''");
  const created = await call("POST", "/v2/deployments", {
    name: "console-slow",
    source: "git_host",
    source_config: {
      repo_url: process.env.CONSOLE_REPO,
      build_command: `for i in 1 2 3 4 5 6 7 8; do echo "building step $i"; sleep 1; done; cp '${bin}' "$JETGRAPH_BUILD_OUTPUT"`,
    },
    source_revision_config: { repo_ref: "main", graph_config_path: "graph.json" },
    secrets: [],
  });
  assert.equal(created.status, 201, JSON.stringify(created.json));
  const dep = created.json;
  await visit(page, `/deployments/${dep.id}`);
  const status = () => page.locator(".revision h2 .badge").getAttribute("data-status");
  const log = () => page.locator(".build-log").innerText();
  // The log shows the build's first lines while it is still building.
  await until(
    "the build's output while it builds",
    async () => /building step 2/.test(await log()) && !/building step 8/.test(await log()) && (await status()) === "BUILDING",
    60000,
  );
  await shot(page, "deployment-building");
  await until("the revision deployed", async () => (await status()) === "DEPLOYED", 120000);
  assert.match(await log(), /building step 1[\s\S]*building step 8/, "the whole build log, in order");
  assert.match(await page.locator(".revision table.history").innerText(), /QUEUED[\s\S]*BUILDING[\s\S]*DEPLOYED/);
  await until("the custom_url and the active revision", async () =>
    (await page.locator('dd[data-fact="custom_url"]').innerText()).includes(`/deployments/${dep.id}`) &&
    (await page.locator('dd[data-fact="Active revision"]').innerText()).includes(dep.latest_revision_id),
  );
  await page.locator("#redeploy").waitFor();
  await shot(page, "deployment-deployed");
  await visit(page, "/deployments");
  await page.locator(`a[href="#/deployments/${dep.id}"]`, { hasText: "console-slow" }).waitFor();
  await shot(page, "deployments");
  // Delete (the confirmation accepted): the list again, the deployment going.
  await page.locator(`a[href="#/deployments/${dep.id}"]`).click();
  await page.locator("#delete-deployment").click();
  await until("the deployment deleted", async () => {
    const r = await call("GET", `/v2/deployments/${dep.id}`);
    return r.status === 404 || r.json?.status === "AWAITING_DELETE";
  });
  // The page goes back to the list once its DELETE is answered, which may be after the poll
  // above saw the deletion: wait for it, or it would replace the next page visited.
  await page.waitForFunction(() => location.hash === "#/deployments");
  await page.locator("main h1", { hasText: "Deployments" }).waitFor();
  await clean(page, problems, "deployments");

  // --- Overview: runs while the page reads /metrics.
  await visit(page, "/overview");
  await page.locator('[data-chart="queue"]').waitFor();
  for (let i = 0; i < 6; i++) {
    await client.runs.wait(null, "react", { input: { messages: [{ role: "user", content: "calculator: 1+1" }] } });
    await new Promise((r) => setTimeout(r, 500));
  }
  await until("runs per second charted", async () => /^max /.test(await page.locator('[data-chart="runs-per-second"] .chart-max').innerText()), 20000);
  for (const id of ["queue", "active", "runs-per-second", "run-p50", "http-p95"]) {
    const d = await page.locator(`[data-chart="${id}"] path.chart-line`).getAttribute("d");
    assert.match(d ?? "", /^M[\d.]+,[\d.]+/, `chart ${id} has a line`);
  }
  assert.match(await page.locator('[data-chart-value="active"]').innerText(), /^\d+ runs$/);
  assert.match(await text(page), /Updated/);
  await shot(page, "overview");
  await clean(page, problems, "overview");
  console.log("ok");
} finally {
  await browser.close();
}
