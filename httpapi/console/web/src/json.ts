// A collapsible JSON viewer: objects and arrays are <details> (keyboard operable), every key and
// value a text node.

import { h } from "./dom.js";

/** Options of jsonView. */
export interface JsonViewOptions {
  /** Levels open at first (default 1: the top level). */
  open?: number;
  /** Label of the top level (a channel's name). */
  label?: string;
}

function scalar(v: unknown): HTMLElement {
  if (v === null) return h("span", { class: "j-null" }, "null");
  switch (typeof v) {
    case "string":
      return h("span", { class: "j-str" }, JSON.stringify(v));
    case "number":
    case "bigint":
      return h("span", { class: "j-num" }, String(v));
    case "boolean":
      return h("span", { class: "j-bool" }, String(v));
    case "undefined":
      return h("span", { class: "j-null" }, "undefined");
    default:
      return h("span", null, String(v));
  }
}

function node(label: string | null, v: unknown, depth: number, open: number): HTMLElement {
  const key = label === null ? null : h("span", { class: "j-key" }, label + ": ");
  if (v === null || typeof v !== "object") {
    return h("div", { class: "j-row" }, key, scalar(v));
  }
  const entries: [string, unknown][] = Array.isArray(v)
    ? v.map((x, i) => [String(i), x])
    : Object.entries(v as Record<string, unknown>);
  const [o, c] = Array.isArray(v) ? ["[", "]"] : ["{", "}"];
  if (entries.length === 0) return h("div", { class: "j-row" }, key, h("span", { class: "j-punct" }, o + c));
  const summary = h(
    "summary",
    null,
    key,
    h("span", { class: "j-punct" }, o),
    h("span", { class: "j-count" }, ` ${entries.length} ${Array.isArray(v) ? "items" : "keys"} `),
    h("span", { class: "j-punct j-close" }, c),
  );
  const d = h("details", { class: "j-node" }, summary);
  d.open = depth < open;
  // Children are built when first opened: a large state renders at once.
  let built = false;
  const build = (): void => {
    if (built) return;
    built = true;
    d.append(h("div", { class: "j-children" }, entries.map(([k, x]) => node(k, x, depth + 1, open))));
  };
  if (d.open) build();
  d.addEventListener("toggle", build);
  return d;
}

/** jsonView renders any JSON value as a collapsible tree of text. */
export function jsonView(value: unknown, opts: JsonViewOptions = {}): HTMLElement {
  return h("div", { class: "json" }, node(opts.label ?? null, value, 0, opts.open ?? 1));
}
