// The user's auth handler (langgraph.json's `auth.path`) in jetgraph's TypeScript host: an `Auth`
// of `@langchain/langgraph-sdk/auth`, asked over the host protocol (PROTOCOL.md, "Auth handler").
// `authenticate` builds a web-standard Request for the Auth's authenticate callback; `authorize`
// calls its `on` handler of the resource and action, found as the JS reference server finds it.
// The host imports this module only when the config names an auth handler.

type Obj = Record<string, unknown>;

type Handler = (event: Obj) => unknown;
type HandlerCache = { authenticate?: (request: Request) => unknown; callbacks?: Record<string, Handler> };

/** A refusal the handler raised: the SDK's HTTPException (a status and headers) or one like it. */
function refusal(e: unknown): { status: number; detail: string } | undefined {
  if (typeof e !== "object" || e === null || !("status" in e) || !("headers" in e)) return undefined;
  const status = Number((e as { status: unknown }).status);
  if (!Number.isInteger(status)) return undefined;
  const message = (e as { message?: unknown }).message;
  return { status, detail: typeof message === "string" ? message : "" };
}

/** The loaded Auth. */
export class AuthHandler {
  private readonly handlers: HandlerCache;

  constructor(auth: unknown) {
    if (typeof auth !== "object" || auth === null || !("~handlerCache" in auth)) {
      throw new TypeError(`expected an Auth of @langchain/langgraph-sdk/auth, got ${auth === null ? "null" : typeof auth}`);
    }
    this.handlers = (auth as { "~handlerCache": HandlerCache })["~handlerCache"];
    if (typeof this.handlers.authenticate !== "function") throw new Error("the Auth has no authenticate callback");
  }

  /** What `hello` says of it: loaded, its `on` handlers and the (resource, action) pairs they answer. */
  report(): Obj {
    const keys = Object.keys(this.handlers.callbacks ?? {});
    const on = keys.map((k) => {
      const [resource, action] = k.split(":", 2);
      return [resource, action ?? "*"];
    });
    return { ok: true, on_handlers: keys.length, on };
  }

  /** The answer to an `authenticate` frame: {user} or the 401/403 the callback raised. */
  async authenticate(frame: Obj): Promise<Obj> {
    const headers = new Headers();
    for (const [k, v] of (frame.headers as [string, string][]) ?? []) headers.append(k, v);
    const query = frame.query ? `?${frame.query as string}` : "";
    const url = `${(frame.scheme as string) || "http"}://${headers.get("host") ?? "localhost"}${frame.path as string}${query}`;
    let out: unknown;
    try {
      out = await this.handlers.authenticate!(new Request(url, { method: (frame.method as string) || "GET", headers }));
    } catch (e) {
      const r = refusal(e);
      if (r !== undefined && (r.status === 401 || r.status === 403)) return r;
      throw e; // as in the Python host: any other failure is the handler's, a 500
    }
    return { user: normalize(out) };
  }

  /** The answer to an `authorize` frame: {value, filter?} or the status the handler refused with. */
  async authorize(frame: Obj): Promise<Obj> {
    const resource = String(frame.resource);
    const action = String(frame.action);
    const value = (frame.value ?? {}) as Obj;
    const callbacks = this.handlers.callbacks ?? {};
    const key = [`${resource}:${action}`, resource, `*:${action}`, "*"].find((k) => callbacks[k] !== undefined);
    if (key === undefined) return { value };
    const user = (frame.user ?? {}) as Obj;
    let result: unknown;
    try {
      result = await callbacks[key]({ event: `${resource}:${action}`, resource, action, value,
        permissions: Array.isArray(user.permissions) ? user.permissions : [], user });
    } catch (e) {
      const r = refusal(e);
      if (r !== undefined) return r;
      throw e;
    }
    if (result === undefined || result === null || result === true) return { value };
    if (result === false) return { status: 403, detail: "Forbidden" };
    if (typeof result !== "object" || Array.isArray(result)) {
      return { status: 500, detail: `Auth handler returned invalid result. Expected filter object, null, undefined or boolean. Got "${typeof result}" instead.` };
    }
    return { value, filter: result };
  }
}

/** The callback's user as the JS reference normalizes it: a string is the identity; an object
 * needs a string identity and gets is_authenticated (true) and display_name (the identity). */
export function normalize(out: unknown): Obj {
  if (typeof out === "string" && out !== "") {
    return { identity: out, display_name: out, is_authenticated: true, permissions: [] };
  }
  if (typeof out === "object" && out !== null && typeof (out as Obj).identity === "string" && (out as Obj).identity !== "") {
    const u = out as Obj;
    const permissions = Array.isArray(u.permissions) ? u.permissions.map(String) : [];
    return JSON.parse(JSON.stringify({ ...u, permissions, is_authenticated: u.is_authenticated ?? true,
      display_name: u.display_name ?? u.identity })) as Obj;
  }
  throw new Error("Invalid auth response received. Make sure to either return a `string` or an object with `identity` property.");
}
