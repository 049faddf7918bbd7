// The console's entry: the nav bar, the theme, and a hash router (#/threads/<id>) whose table maps
// a route to a page module's render(root, params).
import { apiKey, showKeyPrompt } from "./api.js";
import { clear, errorBox, h, startPage } from "./dom.js";
import * as deployments from "./pages/deployments.js";
import * as graphs from "./pages/graphs.js";
import * as overview from "./pages/overview.js";
import * as threads from "./pages/threads.js";
import * as traces from "./pages/traces.js";
/** routes are tried in order; the first whose segments match renders. */
const routes = [
    { pattern: "/threads", page: threads },
    { pattern: "/threads/:thread_id", page: threads },
    { pattern: "/graphs", page: graphs },
    { pattern: "/graphs/:assistant_id", page: graphs },
    { pattern: "/traces", page: traces },
    { pattern: "/traces/run/:run_id", page: traces },
    { pattern: "/traces/thread/:thread_id", page: traces },
    { pattern: "/traces/:project_id", page: traces },
    { pattern: "/traces/:project_id/:trace_id", page: traces },
    { pattern: "/deployments", page: deployments },
    { pattern: "/deployments/:deployment_id", page: deployments },
    { pattern: "/deployments/:deployment_id/revisions/:revision_id", page: deployments },
    { pattern: "/overview", page: overview },
];
/** The nav bar's entries: label and the route prefix they stand for. */
const nav = [
    ["Threads", "/threads"],
    ["Graphs", "/graphs"],
    ["Traces", "/traces"],
    ["Deployments", "/deployments"],
    ["Overview", "/overview"],
];
/** match returns the params of path under pattern, or null. */
function match(pattern, path) {
    const ps = pattern.split("/").filter(Boolean);
    const xs = path.split("/").filter(Boolean);
    if (ps.length !== xs.length)
        return null;
    const params = {};
    for (let i = 0; i < ps.length; i++) {
        const p = ps[i] ?? "";
        const x = xs[i] ?? "";
        if (p.startsWith(":")) {
            try {
                params[p.slice(1)] = decodeURIComponent(x);
            }
            catch {
                return null;
            }
        }
        else if (p !== x)
            return null;
    }
    return params;
}
/** parseHash splits "#/threads/abc?status=idle" into the path and its query. */
export function parseHash(hash) {
    const raw = hash.replace(/^#/, "") || "/threads";
    const q = raw.indexOf("?");
    return q < 0 ? { path: raw, query: new URLSearchParams() } : { path: raw.slice(0, q), query: new URLSearchParams(raw.slice(q + 1)) };
}
const main = h("main", { id: "main", tabindex: "-1" });
const navLinks = nav.map(([label, route]) => h("a", { href: "#" + route, "data-route": route }, label));
function theme() {
    const saved = localStorage.getItem("jetgraph.console.theme");
    if (saved === "light" || saved === "dark")
        return saved;
    return matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
}
function applyTheme(t) {
    document.documentElement.setAttribute("data-theme", t);
    themeButton.textContent = t === "dark" ? "Light theme" : "Dark theme";
}
const themeButton = h("button", {
    type: "button",
    id: "theme-toggle",
    onclick: () => {
        const next = theme() === "dark" ? "light" : "dark";
        localStorage.setItem("jetgraph.console.theme", next);
        applyTheme(next);
    },
});
const keyButton = h("button", { type: "button", id: "key-button", onclick: () => showKeyPrompt() });
function showKeyState() {
    keyButton.textContent = apiKey() ? "Key set" : "API key";
}
async function render() {
    const { path, query } = parseHash(location.hash);
    for (const a of navLinks) {
        const r = a.getAttribute("data-route") ?? "";
        if (path === r || path.startsWith(r + "/"))
            a.setAttribute("aria-current", "page");
        else
            a.removeAttribute("aria-current");
    }
    startPage();
    clear(main);
    for (const r of routes) {
        const params = match(r.pattern, path);
        if (!params)
            continue;
        for (const [k, v] of query)
            if (!(k in params))
                params[k] = v;
        try {
            await r.page.render(main, params);
        }
        catch (err) {
            main.append(errorBox(err));
        }
        return;
    }
    main.append(h("h1", null, "Not found"), h("p", null, "No page at " + path + "."));
}
function start() {
    const skip = h("a", { href: "#main", class: "skip", onclick: (e) => (e.preventDefault(), main.focus()) }, "Skip to content");
    const header = h("header", { class: "top" }, h("a", { href: "#/threads", class: "brand" }, "jetgraph"), h("nav", { "aria-label": "Console" }, navLinks), h("div", { class: "spacer" }), keyButton, themeButton);
    document.body.append(skip, header, main);
    applyTheme(theme());
    showKeyState();
    window.addEventListener("hashchange", () => void render());
    window.addEventListener("console:key", () => {
        showKeyState();
        void render();
    });
    void render();
}
start();
