// Thread state messages (LangChain message dicts, as a graph's `messages` channel holds them)
// rendered as a conversation: the role, the text (a string or content blocks), tool calls with
// their arguments, and a tool message's call id. Every text is a text node.

import { h, safeURL } from "./dom.js";
import { jsonView } from "./json.js";

/** A LangChain message as the API answers it (or as a client sent it: role instead of type). */
export interface StateMessage {
  type?: string;
  role?: string;
  id?: string | null;
  name?: string | null;
  content?: unknown;
  tool_calls?: { id?: string; name?: string; args?: unknown }[];
  tool_call_id?: string;
  status?: string;
  usage_metadata?: { input_tokens?: number; output_tokens?: number; total_tokens?: number };
}

/** roleOf names a message's sender the way the API's types do: human, ai, tool, system. */
export function roleOf(m: StateMessage): string {
  const r = m.type ?? m.role ?? "unknown";
  switch (r) {
    case "user":
    case "HumanMessageChunk":
      return "human";
    case "assistant":
    case "AIMessageChunk":
      return "ai";
    default:
      return r;
  }
}

/** isMessageList reports whether v looks like a list of messages (the messages channel). */
export function isMessageList(v: unknown): v is StateMessage[] {
  return (
    Array.isArray(v) &&
    v.length > 0 &&
    v.every((m) => m !== null && typeof m === "object" && ("type" in m || "role" in m) && "content" in m)
  );
}

/** contentView renders message content: a string, or a list of text, image and other blocks. */
export function contentView(content: unknown): HTMLElement {
  if (typeof content === "string") return h("div", { class: "text" }, content);
  if (!Array.isArray(content)) return jsonView(content);
  return h(
    "div",
    null,
    content.map((b: unknown) => {
      if (typeof b === "string") return h("div", { class: "text" }, b);
      const block = (b ?? {}) as Record<string, unknown>;
      if (block["type"] === "text" && typeof block["text"] === "string") return h("div", { class: "text" }, block["text"]);
      if (block["type"] === "image_url") {
        const iu = block["image_url"];
        const url = typeof iu === "string" ? iu : typeof iu === "object" && iu ? String((iu as { url?: unknown }).url ?? "") : "";
        const src = safeURL(url);
        if (src === "#") return h("div", { class: "muted" }, "image not shown (not an http(s) or data:image URL): " + url);
        return h("img", { src, alt: "image", class: "msg-image" });
      }
      return jsonView(block, { open: 0, label: String(block["type"] ?? "block") });
    }),
  );
}

/** messageView renders one message. */
export function messageView(m: StateMessage): HTMLElement {
  const role = roleOf(m);
  const head = h(
    "div",
    { class: "role" },
    role,
    m.name ? ` · ${m.name}` : "",
    role === "tool" && m.tool_call_id ? ` · call ${m.tool_call_id}` : "",
    m.status && m.status !== "success" ? ` · ${m.status}` : "",
    m.usage_metadata?.total_tokens !== undefined ? ` · ${m.usage_metadata.total_tokens} tokens` : "",
  );
  const calls = (m.tool_calls ?? []).map((c) =>
    h("div", { class: "call" }, `→ ${c.name ?? "?"}(${JSON.stringify(c.args ?? {})})`, c.id ? h("span", { class: "muted" }, `  ${c.id}`) : null),
  );
  const text = m.content === "" && calls.length > 0 ? null : contentView(m.content);
  return h("div", { class: `msg ${role}`, "data-id": m.id ?? "" }, head, text, calls);
}

/** renderMessages renders a list of messages as a conversation. */
export function renderMessages(msgs: StateMessage[]): HTMLElement {
  return h("div", { class: "msgs" }, msgs.map(messageView));
}
