// One step (checkpoint) of a thread in detail: what the step wrote, its tasks with their
// interrupts and errors, the diff from the step before, and the state; with the actions a step
// offers: fork it (optionally editing values) and run again, or answer its pending interrupt.
import { api } from "./api.js";
import { errorBox, fmtTime, h } from "./dom.js";
import { jsonView } from "./json.js";
import { liveModes } from "./live.js";
import { isMessageList, renderMessages } from "./messages.js";
/** stepLabel is the one-line summary of a step: its number, source and the nodes that wrote. */
export function stepLabel(s) {
    const md = s.metadata ?? {};
    const writers = Object.keys(md.writes ?? {});
    return `step ${md.step ?? "?"} · ${md.source ?? "?"}${writers.length ? " · " + writers.join(", ") : ""}`;
}
/** pendingInterrupts are the interrupts raised by the step's tasks (interrupt()). */
export function pendingInterrupts(s) {
    return s.tasks.filter((t) => (t.interrupts ?? []).length > 0);
}
/** failedTasks are the step's tasks that ended in an error. */
export function failedTasks(s) {
    return s.tasks.filter((t) => t.error !== null && t.error !== undefined && t.error !== "");
}
function valuesOf(s) {
    const v = s?.values;
    return v && typeof v === "object" && !Array.isArray(v) ? v : {};
}
/** channelView renders a channel: messages as a conversation, anything else as JSON. */
function channelView(name, v) {
    if (isMessageList(v))
        return h("div", { class: "channel" }, h("h4", null, name), renderMessages(v));
    return h("div", { class: "channel" }, jsonView(v, { label: name, open: 1 }));
}
/** diffView shows what changed from prev to cur, channel by channel. */
export function diffView(prev, cur) {
    if (!prev)
        return h("p", { class: "muted" }, "The first step: no step before it.");
    const a = valuesOf(prev);
    const b = valuesOf(cur);
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    const changed = [];
    const same = [];
    for (const k of keys) {
        const before = a[k];
        const after = b[k];
        if (JSON.stringify(before) === JSON.stringify(after)) {
            same.push(k);
            continue;
        }
        if (isMessageList(after) && (before === undefined || Array.isArray(before))) {
            const old = (before ?? []);
            const oldIds = new Set(old.map((m) => m.id ?? JSON.stringify(m)));
            const added = after.filter((m) => !oldIds.has(m.id ?? JSON.stringify(m)));
            const newIds = new Set(after.map((m) => m.id ?? JSON.stringify(m)));
            const removed = old.filter((m) => !newIds.has(m.id ?? JSON.stringify(m)));
            changed.push(h("div", { class: "channel" }, h("h4", null, `${k}: +${added.length}` + (removed.length ? ` −${removed.length}` : "")), added.length ? h("div", { class: "diff-add" }, renderMessages(added)) : null, removed.length ? h("div", { class: "diff-del" }, h("p", null, "removed:"), renderMessages(removed)) : null));
            continue;
        }
        changed.push(h("div", { class: "channel" }, h("h4", null, k), h("div", { class: "diff-del" }, before === undefined ? "(not set)" : jsonView(before, { label: "before", open: 1 })), h("div", { class: "diff-add" }, after === undefined ? "(removed)" : jsonView(after, { label: "after", open: 1 }))));
    }
    return h("div", { class: "diff" }, changed.length ? changed : h("p", { class: "muted" }, "No channel changed."), same.length ? h("p", { class: "muted" }, "Unchanged: " + same.join(", ")) : null);
}
function tasksView(s) {
    if (s.tasks.length === 0)
        return null;
    return h("ul", { class: "tasks" }, s.tasks.map((t) => h("li", null, h("strong", null, t.name), t.checkpoint?.checkpoint_ns ? h("span", { class: "muted" }, " (subgraph " + t.checkpoint.checkpoint_ns + ")") : null, (t.interrupts ?? []).map((i) => h("div", { class: "interrupt" }, "interrupt: ", jsonView(i.value, { open: 2 }))), failedTasks({ ...s, tasks: [t] }).length ? h("div", { class: "error" }, "error: " + JSON.stringify(t.error)) : null)));
}
function writesView(s) {
    const writes = s.metadata?.writes;
    if (!writes || Object.keys(writes).length === 0)
        return h("p", { class: "muted" }, "Nothing written.");
    return h("div", null, Object.entries(writes).map(([node, w]) => {
        const obj = w && typeof w === "object" && !Array.isArray(w) ? w : null;
        const msgs = obj?.["messages"];
        return h("div", { class: "write" }, h("h4", null, node), isMessageList(msgs) ? renderMessages(msgs) : null, jsonView(obj && isMessageList(msgs) ? Object.fromEntries(Object.entries(obj).filter(([k]) => k !== "messages")) : w, { open: 1 }));
    }));
}
/** parseJSONField reads a textarea as JSON; "" is undefined. It throws a message naming the field. */
function parseJSONField(label, text) {
    if (text.trim() === "")
        return undefined;
    try {
        return JSON.parse(text);
    }
    catch (err) {
        throw new Error(`${label}: not JSON (${err instanceof Error ? err.message : String(err)})`);
    }
}
/** forkForm edits values at the step (POST /threads/{id}/state) and runs from there. */
function forkForm(s, ctx) {
    const ns = s.checkpoint.checkpoint_ns ?? "";
    const values = h("textarea", { id: "fork-values", "aria-label": "Values to change (JSON object)", placeholder: '{"key": "new value"}' });
    const asNode = h("input", { id: "fork-as-node", "aria-label": "As node", placeholder: "as node (optional)" });
    const out = h("div", { class: "form-out" });
    const button = h("button", { type: "button", class: "primary", id: "fork-run" }, ns ? "Update and continue" : "Fork and run");
    button.addEventListener("click", () => {
        out.replaceChildren();
        void (async () => {
            try {
                const v = parseJSONField("values", values.value);
                if (v !== undefined && (v === null || typeof v !== "object" || Array.isArray(v)))
                    throw new Error("values: a JSON object");
                let from = s.checkpoint.checkpoint_id ?? "";
                if (v !== undefined || asNode.value.trim() !== "") {
                    const body = { values: v ?? {} };
                    if (ns)
                        body["checkpoint"] = { checkpoint_ns: ns, checkpoint_id: from };
                    else
                        body["checkpoint_id"] = from;
                    if (asNode.value.trim())
                        body["as_node"] = asNode.value.trim();
                    const res = await api("POST", `/threads/${encodeURIComponent(ctx.threadId)}/state`, body);
                    from = res.checkpoint.checkpoint_id;
                }
                // A subgraph's state is continued from the thread's current checkpoint, which now holds it.
                const run = { assistant_id: ctx.assistantId, input: null, stream_mode: liveModes };
                if (!ns)
                    run["checkpoint_id"] = from;
                ctx.run(run);
            }
            catch (err) {
                out.append(errorBox(err));
            }
        })();
    });
    return h("section", { class: "panel", "aria-label": "Fork" }, h("h3", null, ns ? "Edit this subgraph step and continue" : "Fork from this step"), h("p", { class: "muted" }, ns
        ? "Writes the values to the subgraph's checkpoint, then continues the thread (input null)."
        : "Runs the graph again from this step; values given here are written first (a new checkpoint beside the old ones)."), values, h("div", { class: "row" }, asNode, button), out);
}
/** interruptForm answers a pending interrupt: resume with a value, or continue past a breakpoint. */
function interruptForm(s, ctx) {
    if (!ctx.latest || s.next.length === 0)
        return null;
    const raised = pendingInterrupts(s);
    const out = h("div", { class: "form-out" });
    if (raised.length === 0) {
        return h("section", { class: "panel", "aria-label": "Pending" }, h("h3", null, "Paused before " + s.next.join(", ")), h("p", { class: "muted" }, "The thread stopped at a breakpoint (interrupt before or after a node). Continue runs it on (input null)."), h("button", { type: "button", class: "primary", id: "continue-run", onclick: () => ctx.run({ assistant_id: ctx.assistantId, input: null, stream_mode: liveModes }) }, "Continue"), out);
    }
    const value = h("textarea", { id: "resume-value", "aria-label": "Resume value (JSON)", placeholder: '"yes" or {"answer": 42}' });
    const button = h("button", { type: "button", class: "primary", id: "resume-run" }, "Answer");
    button.addEventListener("click", () => {
        out.replaceChildren();
        try {
            const v = parseJSONField("resume value", value.value);
            ctx.run({ assistant_id: ctx.assistantId, command: { resume: v ?? null }, stream_mode: liveModes });
        }
        catch (err) {
            out.append(errorBox(err));
        }
    });
    return h("section", { class: "panel", "aria-label": "Interrupt" }, h("h3", null, "Answer the interrupt"), raised.flatMap((t) => (t.interrupts ?? []).map((i) => h("div", null, h("strong", null, t.name + " asks: "), jsonView(i.value, { open: 2 })))), value, h("div", { class: "row" }, button), out);
}
/** stepView renders a step in detail; prev is the step before it (for the diff). */
export function stepView(s, prev, ctx) {
    const md = s.metadata ?? {};
    const values = valuesOf(s);
    return h("article", { class: "step-detail", "aria-label": "Step " + String(md.step ?? "") }, h("h2", null, stepLabel(s)), h("p", { class: "muted mono" }, fmtTime(s.created_at), " · checkpoint " + (s.checkpoint.checkpoint_id ?? ""), s.checkpoint.checkpoint_ns ? " · ns " + s.checkpoint.checkpoint_ns : "", s.next.length ? " · next: " + s.next.join(", ") : " · next: (none)"), interruptForm(s, ctx), h("h3", null, "Writes"), writesView(s), tasksView(s) ? h("h3", null, "Tasks") : null, tasksView(s), h("h3", null, "Diff from the step before"), diffView(prev, s), h("h3", null, "State"), Object.keys(values).length ? Object.entries(values).map(([k, v]) => channelView(k, v)) : h("p", { class: "muted" }, "Empty."), forkForm(s, ctx));
}
