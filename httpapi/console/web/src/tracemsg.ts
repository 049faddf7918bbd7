// An LLM span's messages in the trace message format (spec/3-trace-format.md: the native format
// the tracing API normalises every accepted shape into, as input_messages and output_messages)
// turned into what the trace page shows: role, text, reasoning, tool calls with their results,
// images (a data: image inline, a URL as a link that is not loaded), other media, usage. Pure:
// no DOM, so `node --test` checks it.

/** One piece of a message as shown. */
export type Part =
  | { kind: "text"; text: string }
  | { kind: "reasoning"; text: string }
  | { kind: "image"; inline: string | null; url: string | null; mime: string; ref: string | null }
  | { kind: "media"; type: string; url: string | null; mime: string; ref: string | null; bytes: number | null }
  | { kind: "tool_call"; id: string; name: string; args: unknown; server: boolean }
  | { kind: "tool_result"; toolCallId: string; status: string; output: unknown }
  | { kind: "other"; block: unknown };

/** Token counts of a message's usage_metadata. */
export interface Usage {
  input: number | null;
  output: number | null;
  total: number | null;
}

/** A message as shown. */
export interface MessageView {
  role: string;
  name: string;
  /** toolCallId and toolName: a tool message's call, and the call's name from an earlier message. */
  toolCallId: string;
  toolName: string;
  parts: Part[];
  usage: Usage | null;
  problem: string;
}

/** Image types shown inline from data: URLs or base64 (the CSP allows data: images; never SVG). */
const inlineImageTypes = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);

const base64Re = /^[A-Za-z0-9+/]+={0,2}$/;

function str(v: unknown): string {
  return typeof v === "string" ? v : "";
}

function num(v: unknown): number | null {
  return typeof v === "number" && Number.isFinite(v) ? v : null;
}

/** inlineImage returns a data: URL to show for an image block, or null when it must not be loaded. */
export function inlineImage(url: string, base64: string, mime: string): string | null {
  const m = /^data:(image\/[a-z0-9.+-]+);base64,([A-Za-z0-9+/=\s]+)$/i.exec(url.trim());
  if (m) {
    const type = (m[1] ?? "").toLowerCase();
    const body = (m[2] ?? "").replace(/\s+/g, "");
    return inlineImageTypes.has(type) && base64Re.test(body) ? `data:${type};base64,${body}` : null;
  }
  const body = base64.replace(/\s+/g, "");
  const type = mime.toLowerCase();
  if (body && inlineImageTypes.has(type) && base64Re.test(body)) return `data:${type};base64,${body}`;
  return null;
}

/** linkURL returns an http(s) URL to show as a link, or null (javascript:, data:, anything else). */
export function linkURL(u: string): string | null {
  const t = u.trim();
  return /^https?:\/\/[^\s]+$/i.test(t) ? t : null;
}

function part(b: unknown): Part {
  if (typeof b === "string") return { kind: "text", text: b };
  if (b === null || typeof b !== "object" || Array.isArray(b)) return { kind: "other", block: b };
  const x = b as Record<string, unknown>;
  const type = str(x["type"]);
  switch (type) {
    case "text":
      return { kind: "text", text: str(x["text"]) };
    case "reasoning":
      return { kind: "reasoning", text: str(x["text"]) || str(x["reasoning"]) };
    case "image": {
      const url = str(x["url"]);
      const mime = str(x["mime_type"]);
      return { kind: "image", inline: inlineImage(url, str(x["base64"]), mime), url: linkURL(url), mime, ref: str(x["id"]) || null };
    }
    case "file":
    case "audio":
    case "video": {
      const b64 = str(x["base64"]);
      return {
        kind: "media",
        type,
        url: linkURL(str(x["url"])),
        mime: str(x["mime_type"]),
        ref: str(x["id"]) || null,
        bytes: b64 ? Math.floor((b64.replace(/[\s=]+/g, "").length * 3) / 4) : null,
      };
    }
    case "tool_call":
    case "server_tool_call":
      return { kind: "tool_call", id: str(x["id"]), name: str(x["name"]), args: x["args"] ?? {}, server: type === "server_tool_call" };
    case "server_tool_result":
      return { kind: "tool_result", toolCallId: str(x["tool_call_id"]), status: str(x["status"]), output: x["output"] };
  }
  return { kind: "other", block: b };
}

function usage(v: unknown): Usage | null {
  if (v === null || typeof v !== "object") return null;
  const u = v as Record<string, unknown>;
  const r = { input: num(u["input_tokens"]), output: num(u["output_tokens"]), total: num(u["total_tokens"]) };
  return r.input === null && r.output === null && r.total === null ? null : r;
}

/**
 * messageViews reads a list of native messages (input_messages or output_messages). A tool
 * message's call name is looked up among the tool calls of the messages before it, so a result
 * shows which call it answers. Anything not a list is no messages.
 */
export function messageViews(msgs: unknown): MessageView[] {
  if (!Array.isArray(msgs)) return [];
  const calls = new Map<string, string>();
  const out: MessageView[] = [];
  for (const m of msgs) {
    if (m === null || typeof m !== "object") continue;
    const x = m as Record<string, unknown>;
    const content = x["content"];
    const parts = typeof content === "string" ? [part(content)] : Array.isArray(content) ? content.map(part) : [];
    for (const p of parts) if (p.kind === "tool_call" && p.id) calls.set(p.id, p.name);
    const toolCallId = str(x["tool_call_id"]);
    out.push({
      role: str(x["role"]) || "unknown",
      name: str(x["name"]),
      toolCallId,
      toolName: toolCallId ? (calls.get(toolCallId) ?? "") : "",
      parts,
      usage: usage(x["usage_metadata"]),
      problem: str(x["problem"]),
    });
  }
  return out;
}
