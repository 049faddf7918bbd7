// The deployment's own routes (langgraph.json's `http.app`) in jetgraph's TypeScript host: the
// user's Hono app (anything with a web-standard `fetch(request)`) driven over the host protocol
// (see PROTOCOL.md, "Custom routes"). jetgraph sends an `http` frame and the request body in
// `http.body` frames; the response's head and body chunks go back as `event` frames and `done`
// ends it. The host imports this module only when the config names an app.

type Obj = Record<string, unknown>;
type Send = (frame: Obj) => void;

/** A route as jetgraph matches it: a regular expression on the path, the methods (null: any). */
export type Route = { pattern: string; methods: string[] | null };

type HonoRoute = { method: string; path: string; handler: (...args: unknown[]) => unknown };
type FetchApp = { fetch: (req: Request) => Response | Promise<Response>; routes?: HonoRoute[] };

const escapeRe = (s: string): string => s.replace(/[.+?^${}()|[\]\\*]/g, "\\$&");

/** The regular expression of a Hono path: `:name`, `:name?`, `:name{re}`, `*`. */
export function honoPattern(path: string): string {
  if (path === "/*" || path === "*") return "^/.*$";
  let re = "^";
  const segs = path.split("/").slice(1);
  segs.forEach((seg, i) => {
    const param = /^:([^{?]+)(?:\{(.+)\})?(\?)?$/.exec(seg);
    if (seg === "*") re += i === segs.length - 1 ? "(?:/.*)?" : "/[^/]*";
    else if (param) {
      const inner = param[2] ? `(?:${param[2]})` : "[^/]+";
      re += param[3] ? `(?:/${inner})?` : `/${inner}`;
    } else re += "/" + escapeRe(seg).replace(/\\\*/g, ".*");
  });
  return re + "$";
}

/** The app's routes; handlers that take `next` are middleware, which match no request alone. */
export function routesOf(app: FetchApp): Route[] {
  const out: Route[] = [];
  for (const r of app.routes ?? []) {
    if (r.handler.length > 1) continue;
    const m = r.method.toUpperCase();
    out.push({ pattern: honoPattern(r.path), methods: m === "ALL" ? null : m === "GET" ? ["GET", "HEAD"] : [m] });
  }
  return out;
}

/** The user's app and the requests in flight. */
export class App {
  private readonly bodies = new Map<string, ReadableStreamDefaultController<Uint8Array>>();
  private readonly aborts = new Map<string, AbortController>();

  constructor(
    readonly app: FetchApp,
    private readonly send: Send,
  ) {
    if (typeof app?.fetch !== "function") throw new TypeError("the app has no fetch(request): export a Hono app");
  }

  /** A chunk of a request's body (an `http.body` frame). */
  feed(frame: Obj): void {
    const c = this.bodies.get(frame.id as string);
    if (c === undefined) return;
    const data = Buffer.from((frame.data as string) ?? "", "base64");
    if (data.length > 0) c.enqueue(new Uint8Array(data));
    if (!frame.more) {
      c.close();
      this.bodies.delete(frame.id as string);
    }
  }

  /** Ends a request whose client went away: the app sees its request's signal abort. */
  cancel(id: string): boolean {
    const a = this.aborts.get(id);
    a?.abort();
    return a !== undefined;
  }

  async serve(frame: Obj): Promise<void> {
    const id = frame.id as string;
    const abort = new AbortController();
    this.aborts.set(id, abort);
    let started = false;
    try {
      const method = frame.method as string;
      const headers = new Headers();
      for (const [k, v] of (frame.headers as [string, string][]) ?? []) headers.append(k, v);
      const query = frame.query ? `?${frame.query as string}` : "";
      const url = `${(frame.scheme as string) || "http"}://${headers.get("host") ?? "localhost"}${frame.path as string}${query}`;
      const first = Buffer.from((frame.body as string) ?? "", "base64");
      let body: ReadableStream<Uint8Array> | undefined;
      if (method !== "GET" && method !== "HEAD") {
        body = new ReadableStream<Uint8Array>({
          start: (c) => {
            if (first.length > 0) c.enqueue(new Uint8Array(first));
            if (frame.more) this.bodies.set(id, c);
            else c.close();
          },
        });
      }
      const init = { method, headers, body, signal: abort.signal, duplex: "half" } as RequestInit;
      const res = await this.app.fetch(new Request(url, init));
      started = true;
      this.send({ t: "event", id, mode: "http.response.start", data: { status: res.status, headers: [...res.headers] } });
      if (res.body !== null) {
        const reader = res.body.getReader();
        abort.signal.addEventListener("abort", () => void reader.cancel().catch(() => undefined));
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          if (value.length > 0) this.send({ t: "event", id, mode: "http.response.body", data: Buffer.from(value).toString("base64") });
        }
      }
      this.send({ t: "done", id, result: null });
    } catch (e) {
      if (abort.signal.aborted) this.send({ t: "done", id, result: null });
      else {
        const err = e instanceof Error ? e : new Error(String(e));
        this.send({ t: "done", id, error: { class: err.name, message: err.message, traceback: err.stack ?? "", started } });
      }
    } finally {
      this.aborts.delete(id);
      this.bodies.delete(id);
    }
  }
}
