// A run's stream shown as it comes: tokens of the messages-tuple mode appended to their message,
// the last values, the updates of each node, interrupts and errors.
import { sse } from "./api.js";
import { h, link, mount, pageSignal } from "./dom.js";
import { jsonView } from "./json.js";
import { renderMessages, isMessageList, roleOf } from "./messages.js";
/** The stream modes the console asks for when it starts a run. */
export const liveModes = ["values", "messages-tuple", "updates"];
/**
 * streamRun POSTs body to path (a runs/stream endpoint), or GETs path (a join) when body is
 * undefined, and renders the stream into box until it ends or the page is left.
 */
export async function streamRun(box, path, body, onEvent) {
    const status = h("div", { class: "live-status", role: "status" }, "starting…");
    const tokens = h("div", { class: "live", "aria-live": "polite" });
    const values = h("div", { class: "live-values" });
    const log = h("ol", { class: "live-log mono" });
    mount(box, h("h2", null, "Live run"), status, h("h3", null, "Tokens"), tokens, h("h3", null, "Events"), log, h("h3", null, "Last values"), values);
    const result = { runId: "", error: null };
    const texts = new Map();
    /** tokenLine is the line of a message's tokens, made on its first chunk. */
    const tokenLine = (m) => {
        const id = m.id ?? "";
        let el = texts.get(id);
        if (!el) {
            el = h("span", { class: "text" });
            texts.set(id, el);
            tokens.append(h("div", { class: `msg ${roleOf(m)}` }, h("div", { class: "role" }, roleOf(m)), el));
        }
        return el;
    };
    const show = (ev) => {
        onEvent?.(ev);
        const kind = ev.event.split("|")[0] ?? ev.event;
        switch (kind) {
            case "metadata": {
                const d = ev.data;
                result.runId = d.run_id ?? "";
                status.textContent = "running " + result.runId;
                break;
            }
            case "messages": {
                // messages-tuple: [chunk, metadata], each chunk's text appended to its message.
                const [chunk] = Array.isArray(ev.data) ? ev.data : [ev.data];
                if (chunk && typeof chunk === "object")
                    tokenLine(chunk).append(textOf(chunk.content), callsOf(chunk));
                break;
            }
            case "messages/partial":
            case "messages/complete": {
                // The messages mode: each event carries the whole message so far.
                for (const m of Array.isArray(ev.data) ? ev.data : []) {
                    if (m && typeof m === "object")
                        tokenLine(m).textContent = textOf(m.content) + callsOf(m);
                }
                break;
            }
            case "messages/metadata":
                break;
            case "values": {
                const v = ev.data;
                const msgs = v && typeof v === "object" ? v["messages"] : undefined;
                mount(values, isMessageList(msgs) ? renderMessages(msgs) : null, jsonView(v, { open: 1 }));
                break;
            }
            case "error":
                result.error = ev.data;
                log.append(h("li", { class: "error" }, "error: " + JSON.stringify(ev.data)));
                break;
            default:
                log.append(h("li", null, ev.event + ": ", jsonView(ev.data, { open: 0 })));
        }
    };
    try {
        await sse(path, body, show, pageSignal());
        status.textContent = result.error ? "ended with an error" : "done";
    }
    catch (err) {
        result.error = err instanceof Error ? err.message : err;
        status.textContent = "failed: " + String(result.error);
    }
    return result;
}
/** textOf is the text of message content: a string, or its text blocks joined. */
function textOf(content) {
    if (typeof content === "string")
        return content;
    if (!Array.isArray(content))
        return "";
    return content
        .map((b) => (typeof b === "string" ? b : b && typeof b === "object" && "text" in b ? String(b.text) : ""))
        .join("");
}
/** callsOf renders a message's tool calls after its text. */
function callsOf(m) {
    return (m.tool_calls ?? [])
        .filter((c) => c.name)
        .map((c) => ` → ${c.name ?? ""}(${JSON.stringify(c.args ?? {})})`)
        .join("");
}
/** threadLink is a link to a thread's page. */
export function threadLink(threadId) {
    return link("/threads/" + encodeURIComponent(threadId), threadId);
}
