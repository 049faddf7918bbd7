// The Graphs page: every assistant, and one assistant's graph drawn (xray: subgraphs boxed,
// conditional edges dashed), its schemas, and a form that starts a run and shows its stream.
import { api } from "../api.js";
import { add, errorBox, fmtTime, h, link, mount } from "../dom.js";
import { drawGraph } from "../graphlayout.js";
import { jsonView } from "../json.js";
import { liveModes, streamRun, threadLink } from "../live.js";
/** render lists the assistants, or shows one when the route names it. */
export async function render(root, params) {
    const id = params["assistant_id"];
    if (id)
        await renderAssistant(root, id);
    else
        await renderList(root);
}
async function renderList(root) {
    const list = await api("POST", "/assistants/search", { limit: 1000, sort_by: "graph_id", sort_order: "asc" });
    mount(root, h("h1", null, "Graphs"), h("p", { class: "muted" }, `${list.length} assistant(s). Each graph has its system assistant; others carry their own config.`), h("table", null, h("thead", null, h("tr", null, ["Assistant", "Graph", "Version", "Updated", "Description"].map((c) => h("th", { scope: "col" }, c)))), h("tbody", null, list.map((a) => h("tr", null, h("td", null, link("/graphs/" + encodeURIComponent(a.assistant_id), a.name || a.assistant_id), h("div", { class: "muted mono" }, a.assistant_id)), h("td", { class: "mono" }, a.graph_id), h("td", null, String(a.version ?? "")), h("td", null, fmtTime(a.updated_at)), h("td", null, a.description ?? ""))))));
}
/** defaultInput guesses a first input from the input schema: a user message when it has messages. */
function defaultInput(schemas) {
    const input = schemas["input_schema"];
    if (input?.properties && "messages" in input.properties)
        return JSON.stringify({ messages: [{ role: "user", content: "hi" }] }, null, 2);
    return "{}";
}
async function renderAssistant(root, id) {
    const enc = encodeURIComponent(id);
    const [a, graph, schemas] = await Promise.all([
        api("GET", `/assistants/${enc}`),
        api("GET", `/assistants/${enc}/graph?xray=true`).catch((err) => err),
        api("GET", `/assistants/${enc}/schemas`).catch((err) => err),
    ]);
    const graphBox = h("section", { class: "panel", id: "graph", "aria-label": "Graph" }, h("h2", null, "Graph"));
    if (graph instanceof Error)
        graphBox.append(errorBox(graph));
    else
        add(graphBox, drawGraph(graph), h("p", { class: "muted" }, "Solid: edges; dashed: conditional edges; boxed: subgraphs (xray); ‖ marks an interrupt before or after the node."));
    const schemaBox = h("section", { class: "panel", id: "schemas", "aria-label": "Schemas" }, h("h2", null, "Schemas"));
    if (schemas instanceof Error)
        schemaBox.append(errorBox(schemas));
    else {
        const sc = schemas;
        for (const k of ["input_schema", "output_schema", "state_schema", "config_schema", "context_schema"]) {
            if (sc[k] !== undefined && sc[k] !== null)
                schemaBox.append(jsonView(sc[k], { label: k.replace("_schema", ""), open: 0 }));
        }
    }
    const sc = schemas instanceof Error ? {} : schemas;
    const input = h("textarea", { id: "run-input", "aria-label": "Input (JSON)", rows: 6 });
    input.value = defaultInput(sc);
    const config = h("textarea", { id: "run-config", "aria-label": "Config (JSON)", rows: 3 });
    config.value = "{}";
    const threadId = h("input", { id: "run-thread", "aria-label": "Thread id", placeholder: "thread id (empty: a new thread)", size: 40 });
    const out = h("div", { class: "form-out" });
    const live = h("div", { id: "run-live" });
    const start = (e) => {
        e.preventDefault();
        mount(out);
        void (async () => {
            let body;
            try {
                body = { assistant_id: a.assistant_id, input: JSON.parse(input.value), config: JSON.parse(config.value || "{}"), stream_mode: liveModes };
            }
            catch (err) {
                out.append(errorBox("Input or config is not JSON: " + (err instanceof Error ? err.message : String(err))));
                return;
            }
            try {
                let tid = threadId.value.trim();
                if (!tid)
                    tid = (await api("POST", "/threads", {})).thread_id;
                out.append(h("p", null, "Thread ", threadLink(tid)));
                await streamRun(live, `/threads/${encodeURIComponent(tid)}/runs/stream`, body);
            }
            catch (err) {
                out.append(errorBox(err));
            }
        })();
    };
    const form = h("form", { class: "panel", id: "run-form", "aria-label": "Run", onsubmit: start }, h("h2", null, "Run"), h("label", { class: "block" }, "Input (JSON)", input), h("label", { class: "block" }, "Config (JSON)", config), h("div", { class: "row" }, threadId, h("button", { type: "submit", class: "primary", id: "run-start" }, "Start run")), out, live);
    mount(root, h("p", null, link("/graphs", "← Graphs")), h("h1", null, a.name || a.assistant_id, " ", h("span", { class: "muted mono" }, "graph " + a.graph_id)), a.description ? h("p", null, a.description) : null, h("p", { class: "muted mono" }, a.assistant_id + ` · version ${a.version ?? ""} · updated ${fmtTime(a.updated_at)}`), jsonView({ config: a.config ?? {}, context: a.context ?? {}, metadata: a.metadata ?? {} }, { label: "assistant", open: 0 }), h("div", { class: "cols graph-cols" }, h("div", null, graphBox, schemaBox), form));
}
