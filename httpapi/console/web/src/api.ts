// Calls to jetgraph's API from the console: same origin, with the key the user entered (kept in
// sessionStorage, so it goes when the tab closes), sent as X-Api-Key. The runtime, the tracing API
// and the control plane all take that header. A 401 asks for a key.

import { h } from "./dom.js";

const keyItem = "jetgraph.console.key";

/** runtimePrefix is where the runtime API is (langgraph.json's http.mount_prefix; the server says). */
const runtimePrefix = document.querySelector('meta[name="jetgraph-runtime-prefix"]')?.getAttribute("content") ?? "";

/** rootServices stay at the root whatever the mount_prefix: tracing and the control plane. */
const rootServices = /^\/(tracing|v1|v2|deployments)(\/|$)/;

/** resolve is the URL of an API path: a runtime path goes under the runtime's prefix. */
export function resolve(path: string): string {
  return rootServices.test(path) ? path : runtimePrefix + path;
}

/** An answer other than 2xx: its status and the server's detail. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly detail: unknown,
    message: string,
  ) {
    super(message);
  }
}

/** apiKey is the key the user entered, or "". */
export function apiKey(): string {
  return sessionStorage.getItem(keyItem) ?? "";
}

/** setApiKey stores (or with "" forgets) the key and tells the console to render again. */
export function setApiKey(key: string): void {
  if (key) sessionStorage.setItem(keyItem, key);
  else sessionStorage.removeItem(keyItem);
  window.dispatchEvent(new Event("console:key"));
}

function headers(body: boolean, accept: string): Headers {
  const hs = new Headers({ Accept: accept });
  if (body) hs.set("Content-Type", "application/json");
  const key = apiKey();
  if (key) hs.set("X-Api-Key", key);
  return hs;
}

/** detailText renders a {"detail": ...} answer: a string, or the validation errors' locations. */
function detailText(detail: unknown): string {
  if (typeof detail === "string") return detail;
  if (Array.isArray(detail)) {
    return detail
      .map((d) => {
        const e = d as { loc?: unknown[]; msg?: string };
        return `${(e.loc ?? []).join(".")}: ${e.msg ?? ""}`;
      })
      .join("; ");
  }
  return JSON.stringify(detail);
}

async function failure(res: Response, method: string, path: string): Promise<ApiError> {
  let detail: unknown = res.statusText;
  try {
    const body = (await res.json()) as { detail?: unknown; message?: unknown };
    detail = body.detail ?? body.message ?? body;
  } catch {
    // not JSON: keep the status text
  }
  if (res.status === 401) showKeyPrompt("The server asks for an API key.");
  return new ApiError(res.status, detail, `${method} ${path}: ${res.status} ${detailText(detail)}`);
}

/** The answer of apiResponse: the decoded body and the headers (pagination totals). */
export interface ApiAnswer<T> {
  body: T;
  headers: Headers;
}

/** apiResponse is api() with the answer's headers. */
export async function apiResponse<T>(method: string, path: string, body?: unknown): Promise<ApiAnswer<T>> {
  const init: RequestInit = { method, headers: headers(body !== undefined, "application/json") };
  if (body !== undefined) init.body = JSON.stringify(body);
  const res = await fetch(resolve(path), init);
  if (!res.ok) throw await failure(res, method, path);
  const text = await res.text();
  return { body: (text ? JSON.parse(text) : null) as T, headers: res.headers };
}

/** api calls the same-origin API and decodes its JSON answer; a non-2xx answer throws ApiError. */
export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  return (await apiResponse<T>(method, path, body)).body;
}

/** One server-sent event: its name, its data (decoded JSON, or the text when not JSON), its id. */
export interface SseEvent {
  event: string;
  data: unknown;
  id: string;
}

/**
 * sse reads a server-sent event stream (GET, or POST with body) with fetch, since EventSource
 * cannot send a key or a body, and calls onEvent for every event until the stream ends or signal
 * aborts. It resolves when the stream ends.
 */
export async function sse(
  path: string,
  body: unknown,
  onEvent: (ev: SseEvent) => void,
  signal?: AbortSignal,
): Promise<void> {
  const method = body === undefined ? "GET" : "POST";
  const init: RequestInit = { method, headers: headers(body !== undefined, "text/event-stream") };
  if (body !== undefined) init.body = JSON.stringify(body);
  if (signal) init.signal = signal;
  let res: Response;
  try {
    res = await fetch(resolve(path), init);
  } catch (err) {
    if (signal?.aborted) return;
    throw err;
  }
  if (!res.ok) throw await failure(res, method, path);
  if (!res.body) return;
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  let ev: SseEvent = { event: "message", data: "", id: "" };
  let data: string[] = [];
  const dispatch = (): void => {
    if (data.length > 0) {
      const text = data.join("\n");
      try {
        ev.data = JSON.parse(text);
      } catch {
        ev.data = text;
      }
      onEvent(ev);
    }
    ev = { event: "message", data: "", id: ev.id };
    data = [];
  };
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += value;
      let nl: number;
      while ((nl = buf.search(/\r\n|\r|\n/)) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(buf[nl] === "\r" && buf[nl + 1] === "\n" ? nl + 2 : nl + 1);
        if (line === "") {
          dispatch();
          continue;
        }
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        let val = colon < 0 ? "" : line.slice(colon + 1);
        if (val.startsWith(" ")) val = val.slice(1);
        if (field === "event") ev.event = val;
        else if (field === "data") data.push(val);
        else if (field === "id") ev.id = val;
      }
    }
    dispatch();
  } catch (err) {
    if (signal?.aborted) return;
    throw err;
  }
}

let prompt: HTMLDialogElement | null = null;

/** showKeyPrompt asks the user for an API key (a modal dialog), with why. */
export function showKeyPrompt(why = ""): void {
  if (prompt?.open) return;
  prompt?.remove();
  const input = h("input", {
    type: "password",
    name: "key",
    autocomplete: "off",
    "aria-label": "API key",
    placeholder: "API key",
    id: "key-input",
  });
  const dialog = h(
    "dialog",
    { class: "key-prompt", "aria-labelledby": "key-title" },
    h("h2", { id: "key-title" }, "API key"),
    why ? h("p", null, why) : null,
    h(
      "p",
      { class: "muted" },
      "A runtime or control-plane key (jetgraph keys create, or JETGRAPH_ADMIN_KEY). It stays in this tab's session storage and is sent as X-Api-Key.",
    ),
  );
  const save = (): void => {
    const key = input.value.trim();
    dialog.close();
    setApiKey(key);
  };
  input.addEventListener("keydown", (e) => {
    if (e.key === "Enter") {
      e.preventDefault();
      save();
    }
  });
  dialog.append(
    input,
    h(
      "div",
      { class: "row" },
      h("button", { type: "button", class: "primary", id: "key-save", onclick: save }, "Use key"),
      h("button", { type: "button", onclick: () => dialog.close() }, "Cancel"),
      apiKey() ? h("button", { type: "button", onclick: () => (dialog.close(), setApiKey("")) }, "Forget key") : null,
    ),
  );
  document.body.append(dialog);
  prompt = dialog;
  dialog.showModal();
  input.focus();
}
