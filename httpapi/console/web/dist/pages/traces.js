// The Traces page: tracing projects (#/traces); a project's runs, filtered as the tracing API
// filters (#/traces/<project_id>?name=...&status=error...); a trace as a waterfall with a span's
// detail, messages and feedback (#/traces/<project_id>/<trace_id>?span=<id>); and the lookups
// other pages link to: a run's trace (#/traces/run/<run_id>: a jetgraph run's trace id is its run
// id) and a thread's traces (#/traces/thread/<thread_id>). Every value of a trace is text.
import { ApiError, api, apiKey, showKeyPrompt } from "../api.js";
import { add, clear, errorBox, fmtTime, go, h, link, mount, pageSignal, s } from "../dom.js";
import { jsonView } from "../json.js";
import { messageViews } from "../tracemsg.js";
import { buildFilter, sinceChoices, sinceTime } from "../tracefilter.js";
import { fmtCost, fmtDuration, layout } from "../waterfall.js";
const runTypes = ["", "llm", "chain", "tool", "retriever", "prompt", "parser", "embedding"];
const statuses = [
    ["", "Any status"],
    ["success", "Success"],
    ["error", "Errors"],
    ["pending", "Running"],
];
const scopeItem = "jetgraph.console.traces.scope";
function scope() {
    return sessionStorage.getItem(scopeItem) === "key" ? "key" : "default";
}
/**
 * tapi is api() for the tracing API in the chosen scope. The default tenant's calls carry no
 * X-Api-Key (which would choose the key's tenant); the key goes as a bearer token instead, which
 * a server whose runtime API authenticates asks of whoever reads the default tenant.
 */
async function tapi(method, path, body) {
    if (scope() === "key")
        return body === undefined ? api(method, path) : api(method, path, body);
    const hs = body === undefined ? { Accept: "application/json" } : { Accept: "application/json", "Content-Type": "application/json" };
    const key = apiKey();
    if (key)
        hs["Authorization"] = `Bearer ${key}`;
    const init = { method, headers: hs };
    if (body !== undefined)
        init.body = JSON.stringify(body);
    const res = await fetch(path, init);
    const text = await res.text();
    let v = null;
    try {
        v = text ? JSON.parse(text) : null;
    }
    catch {
        v = text;
    }
    if (!res.ok) {
        if (res.status === 401)
            showKeyPrompt("The server asks for an API key.");
        const detail = v?.detail ?? v;
        throw new ApiError(res.status, detail, `${method} ${path}: ${res.status} ${typeof detail === "string" ? detail : JSON.stringify(detail)}`);
    }
    return v;
}
/** scopePicker switches between the default tenant's traces and the key's tenant's. */
function scopePicker() {
    const sel = h("select", { id: "trace-scope", "aria-label": "Whose traces" }, h("option", { value: "default" }, "jetgraph's own runs and keyless clients (default tenant)"), h("option", { value: "key" }, "the API key's tenant (deployments, control-plane keys)"));
    sel.value = scope();
    sel.addEventListener("change", () => {
        sessionStorage.setItem(scopeItem, sel.value);
        go("/traces");
    });
    return h("label", { class: "scope" }, "Traces of", sel);
}
/** render dispatches on the route's params. */
export async function render(root, params) {
    if (params["run_id"])
        return runLookup(root, params["run_id"]);
    if (params["thread_id"])
        return threadTraces(root, params["thread_id"]);
    if (params["trace_id"] && params["project_id"])
        return traceView(root, params["project_id"], params["trace_id"], params["span"] ?? "");
    if (params["project_id"])
        return projectRuns(root, params["project_id"], params);
    return projects(root);
}
function badge(status, failed = false) {
    const st = failed ? "error" : (status ?? "");
    return h("span", { class: `badge ${st === "pending" ? "running" : st}` }, st === "pending" ? "running" : st || "?");
}
function tokensText(total, prompt, completion) {
    if (!total)
        return "";
    return `${total} tokens (${prompt} in, ${completion} out)`;
}
/** threadOf is the conversation a run belongs to, as the tracing API reads it from its metadata. */
function threadOf(r) {
    if (r.thread_id)
        return r.thread_id;
    const md = (r.extra?.["metadata"] ?? {});
    for (const k of ["session_id", "conversation_id", "thread_id"]) {
        const v = md[k];
        if (typeof v === "string" && v)
            return v;
    }
    return "";
}
async function projects(root) {
    const list = await tapi("GET", "/tracing/sessions?include_stats=true&limit=100");
    const rows = list.map((p) => h("tr", null, h("td", null, link(`/traces/${encodeURIComponent(p.id)}`, p.name)), h("td", null, String(p.run_count ?? 0)), h("td", null, p.error_rate ? `${Math.round(p.error_rate * 100)}%` : "0%"), h("td", null, p.total_tokens ? String(p.total_tokens) : ""), h("td", null, fmtCost(p.total_cost ?? null)), h("td", null, p.latency_p50 != null ? fmtDuration(p.latency_p50 * 1000) : ""), h("td", null, fmtTime(p.last_run_start_time ?? ""))));
    mount(root, h("h1", null, "Traces"), scopePicker(), h("p", { class: "muted" }, "Tracing projects: jetgraph's own runs, what the langsmith clients send, each deployment's."), list.length === 0
        ? h("p", { class: "muted" }, "No project yet.")
        : h("table", { class: "projects" }, h("thead", null, h("tr", null, ["Project", "Runs", "Errors", "Tokens", "Cost", "Latency p50", "Last run"].map((x) => h("th", null, x)))), h("tbody", null, rows)));
}
/** The filter form's fields, in the hash's query by these names. */
const filterFields = ["name", "run_type", "status", "tags", "metadata", "text", "since", "until", "raw", "all"];
async function projectRuns(root, projectId, params) {
    const project = await tapi("GET", `/tracing/sessions/${encodeURIComponent(projectId)}`);
    const p = (k) => params[k] ?? "";
    const input = (name, label, placeholder = "") => h("label", null, label, h("input", { name, value: p(name), placeholder, "aria-label": label }));
    const select = (name, label, options) => {
        const sel = h("select", { name, "aria-label": label }, options.map(([v, l]) => h("option", { value: v }, l)));
        sel.value = p(name) || (options[0]?.[0] ?? "");
        return h("label", null, label, sel);
    };
    const since = p("since") || String(sinceChoices[1]?.[1] ?? 0);
    const form = h("form", { class: "row filters", "aria-label": "Filter runs" }, input("name", "Name"), select("run_type", "Type", runTypes.map((t) => [t, t || "Any type"])), select("status", "Status", statuses), input("tags", "Tags", "a, b"), input("metadata", "Metadata", "key=value, ..."), input("text", "Search"), select("since", "Started", sinceChoices.map(([l, v]) => [String(v), l])), input("until", "Before", "2026-01-01T00:00:00Z"), input("raw", "Filter", 'gt(total_tokens, 100)'), h("label", null, "Spans", (() => {
        const c = h("input", { type: "checkbox", name: "all", "aria-label": "Every span, not only roots" });
        c.checked = p("all") === "1";
        return c;
    })()), h("button", { type: "submit", class: "primary" }, "Filter"));
    form.querySelector('select[name="since"]').value = since;
    form.addEventListener("submit", (e) => {
        e.preventDefault();
        const fd = new FormData(form);
        const q = {};
        for (const k of filterFields)
            q[k] = k === "all" ? (fd.get(k) ? "1" : "") : String(fd.get(k) ?? "");
        go(`/traces/${encodeURIComponent(projectId)}`, q);
    });
    const filter = buildFilter({
        name: p("name"),
        runType: p("run_type"),
        status: p("status"),
        tags: p("tags"),
        metadata: p("metadata"),
        text: p("text"),
        until: p("until"),
        raw: p("raw"),
    });
    const table = h("tbody");
    const more = h("div", { class: "row" });
    const body = { session: [projectId], limit: 50 };
    if (p("all") !== "1")
        body["is_root"] = true;
    if (filter)
        body["filter"] = filter;
    const start = sinceTime(Number(since), Date.now());
    if (start)
        body["start_time"] = start;
    mount(root, h("p", null, link("/traces", "Traces"), " / "), h("h1", null, project.name), form, filter ? h("p", { class: "muted mono filter-text" }, "filter: ", filter) : null, h("table", { class: "runs" }, h("thead", null, h("tr", null, ["Run", "Type", "Status", "Started", "Latency", "Tokens", "Cost", "Tags"].map((x) => h("th", null, x)))), table), more);
    const load = async (cursor) => {
        const page = await tapi("POST", "/tracing/runs/query", cursor ? { ...body, cursor } : body);
        for (const r of page.runs) {
            const failed = !!r.error;
            const lat = r.end_time ? Date.parse(r.end_time) - Date.parse(r.start_time) : null;
            table.append(h("tr", { class: failed ? "failed" : "" }, h("td", null, link(`/traces/${encodeURIComponent(r.session_id)}/${encodeURIComponent(r.trace_id ?? r.id)}?span=${encodeURIComponent(r.id)}`, r.name)), h("td", null, r.run_type), h("td", null, badge(r.status, failed)), h("td", null, fmtTime(r.start_time)), h("td", null, lat === null ? "" : fmtDuration(lat)), h("td", null, r.total_tokens ? String(r.total_tokens) : ""), h("td", null, fmtCost(r.total_cost ?? null)), h("td", null, (r.tags ?? []).map((t) => h("span", { class: "badge tag" }, t)))));
        }
        if (table.childElementCount === 0)
            table.append(h("tr", null, h("td", { colspan: "8", class: "muted" }, "No run matches.")));
        clear(more);
        const next = page.cursors?.next;
        if (next)
            more.append(h("button", { type: "button", onclick: () => void load(next).catch((e) => more.append(errorBox(e))) }, "More runs"));
    };
    await load("");
}
/** runLookup opens the trace of a run (a thread's run links here: the run id is its trace's). */
async function runLookup(root, runId) {
    mount(root, h("h1", null, "Trace"), h("p", { class: "muted" }, "Looking up run ", runId, "..."));
    let run;
    try {
        run = await tapi("GET", `/tracing/runs/${encodeURIComponent(runId)}`);
    }
    catch (err) {
        mount(root, h("h1", null, "Trace"), errorBox(err), h("p", { class: "muted" }, "A run shows here once its root span has reached the tracing API (a second or so), unless the server runs with --no-self-trace. ", scope() === "key" ? "jetgraph traces its own runs into the default tenant: choose it under Traces of, on " : "Traces of a deployment's runs are in its tenant: choose the key's tenant under Traces of, on ", link("/traces", "the projects page"), "."));
        return;
    }
    go(`/traces/${encodeURIComponent(run.session_id)}/${encodeURIComponent(run.trace_id ?? run.id)}`, { span: run.id });
}
/** threadTraces lists the traces (turns) whose metadata names the thread, in every project. */
async function threadTraces(root, threadId) {
    const page = await tapi("POST", "/tracing/runs/query", {
        filter: `eq(thread_id, ${JSON.stringify(threadId)})`,
        is_root: true,
        order: "asc",
        limit: 100,
    });
    mount(root, h("p", null, link("/traces", "Traces"), " / thread"), h("h1", null, "Traces of thread ", h("span", { class: "mono" }, threadId)), h("p", null, link(`/threads/${encodeURIComponent(threadId)}`, "Open the thread")), page.runs.length === 0
        ? h("p", { class: "muted" }, "No trace names this thread in its metadata (thread_id, session_id or conversation_id).")
        : h("ol", { class: "turns" }, page.runs.map((r) => h("li", null, link(`/traces/${encodeURIComponent(r.session_id)}/${encodeURIComponent(r.trace_id ?? r.id)}`, r.name), " ", badge(r.status, !!r.error), " ", h("span", { class: "muted" }, fmtTime(r.start_time))))));
}
/** traceRuns reads every span of a trace, oldest first, page by page. */
async function traceRuns(traceId) {
    const out = [];
    let cursor = "";
    for (let i = 0; i < 50; i++) {
        const body = { trace: traceId, order: "asc", limit: 100 };
        if (cursor)
            body["cursor"] = cursor;
        const page = await tapi("POST", "/tracing/runs/query", body);
        out.push(...page.runs);
        cursor = page.cursors?.next ?? "";
        if (!cursor)
            break;
    }
    return out;
}
async function traceView(root, projectId, traceId, spanId) {
    const signal = pageSignal();
    const [project, first] = await Promise.all([
        tapi("GET", `/tracing/sessions/${encodeURIComponent(projectId)}`).catch(() => null),
        traceRuns(traceId),
    ]);
    const head = h("div", { class: "trace-head" });
    const fall = h("div", { class: "waterfall", role: "tree", "aria-label": "Spans of the trace" });
    const detail = h("section", { class: "panel span-detail", "aria-label": "Span", tabindex: "-1" });
    mount(root, h("p", null, link("/traces", "Traces"), " / ", project ? link(`/traces/${encodeURIComponent(projectId)}`, project.name) : projectId, " / trace"), head, h("div", { class: "cols trace-cols" }, fall, detail));
    let runs = first;
    let selected = spanId;
    const draw = () => {
        const w = layout(runs);
        const rootRun = (w.rows[0]?.span ?? null);
        clear(head);
        if (!rootRun) {
            head.append(h("h1", null, "Trace ", h("span", { class: "mono" }, traceId)), h("p", { class: "muted" }, "No span of this trace has arrived yet."));
            return;
        }
        const thread = threadOf(rootRun);
        const t = w.totals;
        add(head, h("h1", null, rootRun.name, " ", badge(rootRun.status, t.errors > 0 && !!rootRun.error)), h("p", { class: "trace-totals" }, h("span", null, fmtDuration(w.totalMs)), " · ", h("span", null, `${w.rows.length} spans`), " · ", h("span", { class: "tokens" }, t.totalTokens ? tokensText(t.totalTokens, t.promptTokens, t.completionTokens) : "no tokens"), t.cost !== null ? [" · ", h("span", { class: "cost" }, fmtCost(t.cost))] : null, t.llmCalls ? ` · ${t.llmCalls} model calls` : "", t.errors ? [" · ", h("span", { class: "error-text" }, `${t.errors} failed`)] : null), thread
            ? h("p", null, "Thread ", link(`/threads/${encodeURIComponent(thread)}`, h("span", { class: "mono" }, thread)), " · ", link(`/traces/thread/${encodeURIComponent(thread)}`, "its traces"))
            : null);
        clear(fall);
        fall.append(h("div", { class: "wf-scale", "aria-hidden": "true" }, h("span", null, "0"), h("span", null, fmtDuration(w.totalMs / 2)), h("span", null, fmtDuration(w.totalMs))));
        for (const r of w.rows)
            fall.append(rowView(r, r.span.id === selected, () => select(r.span.id)));
        const sel = runs.find((r) => r.id === selected) ?? rootRun;
        if (!detail.dataset["span"] || detail.dataset["span"] !== sel.id || detail.dataset["end"] !== String(sel.end_time ?? "")) {
            void spanDetail(detail, sel, w.rows.find((r) => r.span.id === sel.id));
        }
    };
    const select = (id) => {
        selected = id;
        history.replaceState(null, "", `#/traces/${encodeURIComponent(projectId)}/${encodeURIComponent(traceId)}?span=${encodeURIComponent(id)}`);
        draw();
        fall.querySelector(`[data-span="${CSS.escape(id)}"]`)?.focus();
    };
    // Keyboard: arrows move between spans.
    fall.addEventListener("keydown", (e) => {
        if (e.key !== "ArrowDown" && e.key !== "ArrowUp")
            return;
        const rows = [...fall.querySelectorAll("[data-span]")];
        const i = rows.findIndex((x) => x.dataset["span"] === selected);
        const next = rows[Math.min(Math.max(i + (e.key === "ArrowDown" ? 1 : -1), 0), rows.length - 1)];
        if (next?.dataset["span"]) {
            e.preventDefault();
            select(next.dataset["span"]);
        }
    });
    draw();
    // A trace still running gets its spans as they end: read it again until every span has ended.
    const running = () => runs.length === 0 || runs.some((r) => !r.end_time && !r.error);
    const timer = setInterval(() => {
        if (!running())
            return;
        traceRuns(traceId)
            .then((rs) => {
            if (signal.aborted)
                return;
            runs = rs;
            draw();
        })
            .catch(() => undefined);
    }, 2000);
    signal.addEventListener("abort", () => clearInterval(timer), { once: true });
}
/** rowView is one span of the waterfall: its name indented by depth, and its bar to scale. */
function rowView(r, selected, onSelect) {
    const sp = r.span;
    const bar = s("svg", { class: "wf-bar", viewBox: "0 0 1000 16", preserveAspectRatio: "none", "aria-hidden": "true" }, s("rect", {
        class: `bar ${sp.run_type} ${r.failed ? "failed" : ""} ${r.running ? "running" : ""}`,
        x: (r.offset * 1000).toFixed(2),
        y: "2",
        width: (r.width * 1000).toFixed(2),
        height: "12",
        rx: "2",
    }), r.ttft !== null ? s("line", { class: "ttft", x1: (r.ttft * 1000).toFixed(2), x2: (r.ttft * 1000).toFixed(2), y1: "0", y2: "16" }) : null);
    const tokens = r.total.totalTokens ? `${r.total.totalTokens} tok` : "";
    const label = [
        sp.name,
        sp.run_type,
        fmtDuration(r.durationMs),
        r.failed ? "failed" : r.running ? "running" : "",
        r.ttftMs !== null ? `first token after ${fmtDuration(r.ttftMs)}` : "",
        tokens,
    ]
        .filter(Boolean)
        .join(", ");
    return h("button", {
        type: "button",
        class: `wf-row ${r.failed ? "failed" : ""}`,
        role: "treeitem",
        "aria-level": String(r.depth + 1),
        "aria-selected": selected ? "true" : "false",
        "aria-label": label,
        "data-span": sp.id,
        "data-depth": String(Math.min(r.depth, 12)),
        onclick: onSelect,
    }, h("span", { class: "wf-name" }, h("span", { class: "wf-indent", "data-depth": String(Math.min(r.depth, 12)) }), r.failed ? h("span", { class: "error-text", title: "failed" }, "✕ ") : null, h("span", { class: "name" }, sp.name), " ", h("span", { class: `badge type ${sp.run_type}` }, sp.run_type)), h("span", { class: "wf-meta" }, h("span", { class: "dur" }, r.running ? "running" : fmtDuration(r.durationMs)), r.ttftMs !== null ? h("span", { class: "ttft-text", title: "time to first token" }, `TTFT ${fmtDuration(r.ttftMs)}`) : null, tokens ? h("span", { class: "tok" }, tokens) : null, r.total.cost !== null && r.total.cost > 0 ? h("span", { class: "cost" }, fmtCost(r.total.cost)) : null), bar);
}
/** spanDetail shows a span: its figures, messages, inputs and outputs, error, and feedback. */
async function spanDetail(box, run, row) {
    box.dataset["span"] = run.id;
    box.dataset["end"] = String(run.end_time ?? "");
    const md = (run.extra?.["metadata"] ?? null);
    const facts = [
        ["Type", run.run_type],
        ["Status", run.error ? "error" : run.status],
        ["Started", fmtTime(run.start_time)],
        ["Duration", row ? (row.running ? "running" : fmtDuration(row.durationMs)) : ""],
        ["Time to first token", row?.ttftMs != null ? fmtDuration(row.ttftMs) : ""],
        ["Model", [run.provider, run.model_name].filter(Boolean).join(" / ")],
        ["Tokens", row ? tokensText(row.own.totalTokens, row.own.promptTokens, row.own.completionTokens) : ""],
        ["Cost", row ? fmtCost(row.own.cost) : ""],
        ["Tokens with the spans below", row && row.total.totalTokens !== row.own.totalTokens ? tokensText(row.total.totalTokens, row.total.promptTokens, row.total.completionTokens) : ""],
        ["Cost with the spans below", row && row.total.cost !== row.own.cost ? fmtCost(row.total.cost) : ""],
        ["Run id", run.id],
    ];
    const ins = messageViews(run.input_messages);
    const outs = messageViews(run.output_messages);
    mount(box, h("h2", null, run.name), h("dl", { class: "facts" }, facts.filter(([, v]) => v !== "" && v !== null && v !== undefined).map(([k, v]) => [h("dt", null, k), h("dd", { "data-fact": k }, String(v))])), (run.tags ?? []).length ? h("p", null, "Tags: ", (run.tags ?? []).map((t) => h("span", { class: "badge tag" }, t))) : null, run.error ? h("div", null, h("h3", null, "Error"), h("pre", { class: "error span-error" }, run.error)) : null, ins.length ? h("div", { class: "trace-msgs inputs" }, h("h3", null, "Input messages"), ins.map(traceMessage)) : null, outs.length ? h("div", { class: "trace-msgs outputs" }, h("h3", null, "Output messages"), outs.map(traceMessage)) : null, (run.message_problems ?? []).length
        ? h("div", { class: "warn-text" }, h("h3", null, "Not in the message format"), h("ul", null, (run.message_problems ?? []).map((p) => h("li", null, p))))
        : null, h("h3", null, "Inputs"), jsonView(run.inputs ?? null, { open: ins.length ? 0 : 1 }), h("h3", null, "Outputs"), jsonView(run.outputs ?? null, { open: outs.length ? 0 : 1 }), md && Object.keys(md).length ? [h("h3", null, "Metadata"), jsonView(md, { open: 1 })] : null, feedbackBox(run));
}
/** traceMessage renders a message of the trace format. */
function traceMessage(m) {
    const cls = m.role === "user" ? "human" : m.role === "assistant" ? "ai" : m.role;
    return h("div", { class: `msg ${cls}` }, h("div", { class: "role" }, m.role, m.name ? ` · ${m.name}` : "", m.toolCallId ? ` · result of ${m.toolName || "call"} ${m.toolCallId}` : "", m.usage ? ` · ${[m.usage.input !== null ? `${m.usage.input} in` : "", m.usage.output !== null ? `${m.usage.output} out` : "", m.usage.total !== null ? `${m.usage.total} total` : ""].filter(Boolean).join(", ")}` : ""), m.parts.map(partView), m.problem ? h("div", { class: "warn-text" }, m.problem) : null);
}
function partView(p) {
    switch (p.kind) {
        case "text":
            return h("div", { class: "text" }, p.text);
        case "reasoning":
            return h("details", { class: "reasoning" }, h("summary", null, "Reasoning"), h("div", { class: "text" }, p.text));
        case "image":
            if (p.inline)
                return h("img", { src: p.inline, alt: "image from the trace", class: "msg-image" });
            // A remote image is not loaded (the console loads nothing from elsewhere): its address is a link.
            return h("div", { class: "media" }, "image: ", p.url ? h("a", { href: p.url, rel: "noopener noreferrer", target: "_blank" }, p.url) : p.ref ? `id ${p.ref}` : "(no address)", p.mime ? ` (${p.mime})` : "");
        case "media":
            return h("div", { class: "media" }, `${p.type}: `, p.url ? h("a", { href: p.url, rel: "noopener noreferrer", target: "_blank" }, p.url) : p.ref ? `id ${p.ref}` : p.bytes !== null ? `${p.bytes} bytes inline` : "", p.mime ? ` (${p.mime})` : "");
        case "tool_call":
            return h("div", { class: "call" }, `${p.server ? "server tool" : "→"} ${p.name || "?"}(`, h("span", null, JSON.stringify(p.args)), ")", p.id ? h("span", { class: "muted" }, `  ${p.id}`) : null);
        case "tool_result":
            return h("div", { class: "call" }, `← ${p.toolCallId} ${p.status}: `, jsonView(p.output, { open: 1 }));
        case "other":
            return jsonView(p.block, { open: 0, label: "block" });
    }
}
/** feedbackBox lists a run's feedback and adds some. */
function feedbackBox(run) {
    const list = h("ul", { class: "feedback" });
    const box = h("section", { class: "feedback-box", "aria-label": "Feedback" }, h("h3", null, "Feedback"), list);
    const load = async () => {
        const fb = await tapi("GET", `/tracing/feedback?run=${encodeURIComponent(run.id)}&limit=100`);
        clear(list);
        if (fb.length === 0)
            list.append(h("li", { class: "muted" }, "None yet."));
        for (const f of fb) {
            list.append(h("li", { class: "fb" }, h("strong", null, f.key), f.score !== null && f.score !== undefined ? ` = ${String(f.score)}` : "", f.value !== null && f.value !== undefined ? ` (${typeof f.value === "string" ? f.value : JSON.stringify(f.value)})` : "", f.comment ? h("span", { class: "comment" }, ` "${f.comment}"`) : null, " ", h("span", { class: "muted" }, fmtTime(f.created_at ?? ""))));
        }
    };
    const key = h("input", { name: "key", required: true, placeholder: "correctness", "aria-label": "Feedback key" });
    const score = h("input", { name: "score", placeholder: "1", "aria-label": "Score", inputmode: "decimal" });
    const comment = h("input", { name: "comment", placeholder: "comment", "aria-label": "Comment" });
    const status = h("div", { role: "status" });
    const form = h("form", { class: "row", "aria-label": "Add feedback" }, h("label", null, "Key", key), h("label", null, "Score", score), h("label", null, "Comment", comment), h("button", { type: "submit" }, "Add feedback"));
    form.addEventListener("submit", (e) => {
        e.preventDefault();
        const body = { run_id: run.id, key: key.value.trim() };
        const sc = score.value.trim();
        if (sc !== "") {
            const n = Number(sc);
            if (Number.isNaN(n)) {
                mount(status, errorBox(new Error("The score is a number.")));
                return;
            }
            body["score"] = n;
        }
        if (comment.value.trim())
            body["comment"] = comment.value.trim();
        tapi("POST", "/tracing/feedback", body)
            .then(() => {
            clear(status);
            key.value = score.value = comment.value = "";
            return load();
        })
            .catch((err) => mount(status, errorBox(err)));
    });
    box.append(form, status);
    void load().catch((err) => list.append(h("li", null, errorBox(err))));
    return box;
}
