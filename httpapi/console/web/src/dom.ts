// DOM building for the console. Every text goes in through textContent or a text node, never as
// markup: values come from threads, states and traces that anyone holding a key can write. The
// Content-Security-Policy (require-trusted-types-for 'script') makes markup sinks throw anyway.

/** A child of h(): an element, a text (set as a text node), or nothing. */
export type Child = Node | string | number | boolean | null | undefined | Child[];

/** Attributes of h(): strings set with setAttribute, on* functions added as listeners. */
export type Attrs = Record<string, string | number | boolean | null | undefined | EventListener>;

/** Attribute names that take a URL: only same-document, http(s) and data:image URLs are set. */
const urlAttrs = new Set(["href", "src", "action", "formaction", "xlink:href"]);

/** safeURL returns u when it is a relative, http(s) or data:image URL, and "#" otherwise. */
export function safeURL(u: string): string {
  const t = u.trim();
  if (/^(#|\/(?!\/)|\.\.?\/)/.test(t)) return t;
  try {
    const p = new URL(t, location.href);
    if (p.protocol === "http:" || p.protocol === "https:") return p.href;
    if (p.protocol === "data:" && /^data:image\/(png|jpeg|gif|webp);/i.test(t)) return t;
  } catch {
    // not a URL at all
  }
  return "#";
}

function setAttrs(el: Element, attrs: Attrs | null | undefined): void {
  if (!attrs) return;
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (typeof v === "function") {
      el.addEventListener(k.replace(/^on/, ""), v);
      continue;
    }
    const name = k.toLowerCase();
    if (name.startsWith("on") || name === "style" || name === "srcdoc") {
      throw new Error(`h(): attribute ${k} is not allowed`);
    }
    const s = v === true ? "" : String(v);
    el.setAttribute(k, urlAttrs.has(name) ? safeURL(s) : s);
  }
}

/** add appends children (texts as text nodes, nulls left out) to el. */
export function add(el: Node, ...children: Child[]): void {
  append(el, children);
}

function append(el: Node, children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false || c === true) continue;
    if (Array.isArray(c)) append(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
}

/** h builds an HTML element: h("a", {href: "#/threads", onclick: f}, "Threads"). */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs?: Attrs | null,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  setAttrs(el, attrs);
  append(el, children);
  return el;
}

const svgNS = "http://www.w3.org/2000/svg";

/** s builds an SVG element (createElementNS); its texts are text nodes too. */
export function s<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attrs?: Attrs | null,
  ...children: Child[]
): SVGElementTagNameMap[K] {
  const el = document.createElementNS(svgNS, tag);
  setAttrs(el, attrs);
  append(el, children);
  return el;
}

/** clear removes every child of el. */
export function clear(el: Node): void {
  while (el.firstChild) el.removeChild(el.firstChild);
}

/** mount replaces el's children with children. */
export function mount(el: Node, ...children: Child[]): void {
  clear(el);
  append(el, children);
}

let scope = new AbortController();

/**
 * startPage aborts what the previous page left running (streams, timers) and returns the signal
 * of the page about to render. The router calls it; pages read pageSignal().
 */
export function startPage(): AbortSignal {
  scope.abort();
  scope = new AbortController();
  return scope.signal;
}

/** pageSignal is aborted when the user leaves the current page: pass it to sse() and timers. */
export function pageSignal(): AbortSignal {
  return scope.signal;
}

/** every calls f every ms milliseconds until the page is left. */
export function every(ms: number, f: () => void): void {
  const id = setInterval(f, ms);
  pageSignal().addEventListener("abort", () => clearInterval(id), { once: true });
}

/** errorBox renders an error for the user. */
export function errorBox(err: unknown): HTMLElement {
  const msg = err instanceof Error ? err.message : String(err);
  return h("div", { class: "error", role: "alert" }, msg);
}

/** fmtTime renders an ISO time in the user's locale, or the text itself when it is not one. */
export function fmtTime(iso: unknown): string {
  if (typeof iso !== "string" || iso === "") return "";
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}

/** link is an anchor to a console route (hash). */
export function link(route: string, ...children: Child[]): HTMLAnchorElement {
  return h("a", { href: "#" + route }, ...children);
}

/** go navigates to a console route (path and optional query, empty values left out). */
export function go(path: string, query?: Record<string, string>): void {
  const qs = query ? new URLSearchParams(Object.entries(query).filter(([, v]) => v !== "")).toString() : "";
  location.hash = "#" + path + (qs ? "?" + qs : "");
}
