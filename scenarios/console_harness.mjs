// The console's browser test harness: headless Debian Chromium driven by playwright-core (which
// never downloads a browser: the test passes CHROMIUM), the official SDK to make data, and checks
// that no injected script ran. Environment: JETGRAPH_URL, JETGRAPH_KEY (the server's admin key),
// CHROMIUM, SCREENSHOTS (the folder the Go test named).
import assert from "node:assert/strict";
import path from "node:path";
import { chromium } from "playwright-core";
import { Client } from "@langchain/langgraph-sdk";

export const url = process.env.JETGRAPH_URL;
export const key = process.env.JETGRAPH_KEY;
const shotsDir = process.env.SCREENSHOTS;

/** hostile are the strings of the hostile-strings tests: markup and script that must show as text. */
export const hostile = [
  `<script>window.__pwned="script"</script>`,
  `<img src=x onerror="window.__pwned='img'">`,
  `javascript:window.__pwned='js'`,
  `"><svg onload="window.__pwned='svg'">`,
  `</textarea><iframe srcdoc="<script>parent.__pwned='iframe'</script>"></iframe>`,
];

/** client is the official SDK with the server's key. */
export const client = new Client({ apiUrl: url, apiKey: key });

/**
 * open launches Chromium and a page whose CSP violations, uncaught errors and console errors are
 * recorded, with window.__pwned left unset unless injected content runs.
 */
export async function open({ colorScheme = "light" } = {}) {
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM, args: ["--no-sandbox"] });
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 }, colorScheme });
  const problems = [];
  await page.addInitScript(() => {
    window.__csp = [];
    document.addEventListener("securitypolicyviolation", (e) => {
      window.__csp.push(`${e.violatedDirective} blocked ${e.blockedURI} (${e.sample})`);
    });
  });
  page.on("pageerror", (e) => problems.push("page error: " + e.message));
  page.on("console", (m) => {
    if (m.type() === "error" && !/status of 401/.test(m.text())) problems.push("console error: " + m.text());
  });
  return { browser, page, problems };
}

/** visit opens a console route (#/threads...) and waits for the page to render. */
export async function visit(page, route) {
  await page.goto(`${url}/console/#${route}`);
  await page.waitForFunction(() => document.querySelector("main")?.childElementCount > 0);
}

/** login answers the console's key prompt (a 401 opened it) with the server's key. */
export async function login(page) {
  await page.locator("#key-input").waitFor({ state: "visible" });
  // Keyboard only: type the key and press Enter.
  await page.locator("#key-input").fill(key);
  await page.keyboard.press("Enter");
  await page.locator("#key-button", { hasText: "Key set" }).waitFor();
}

/** shot saves a full-page screenshot under SCREENSHOTS. */
export async function shot(page, name) {
  await page.screenshot({ path: path.join(shotsDir, name + ".png"), fullPage: true });
}

/** clean asserts that no injected script ran, nothing was blocked by the CSP and no error was thrown. */
export async function clean(page, problems, where) {
  const pwned = await page.evaluate(() => window.__pwned);
  assert.equal(pwned, undefined, `${where}: injected script ran (window.__pwned = ${pwned})`);
  const csp = await page.evaluate(() => window.__csp);
  assert.deepEqual(csp, [], `${where}: Content-Security-Policy violations: ${csp.join("; ")}`);
  assert.deepEqual(problems, [], `${where}: ${problems.join("; ")}`);
}

/** text is the visible text of the page's main element. */
export async function text(page) {
  return page.locator("main").innerText();
}

/** until polls f (async, returning truthy) until it holds or ms pass. */
export async function until(what, f, ms = 20000) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() > end) throw new Error("timed out waiting for " + what);
    await new Promise((r) => setTimeout(r, 100));
  }
}
