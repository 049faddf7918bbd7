// jetgraph's TypeScript graph host (protocol version 1, see engine/hosting/PROTOCOL.md).
//
// jetgraph compiles this file with esbuild, writes it under the project's node_modules/.cache
// and starts it with Node 20+; it loads the user's graphs (bundled by jetgraph from TypeScript)
// with the project's own @langchain/langgraph and runs them, with a checkpointer and a store that
// call back into jetgraph over stdin/stdout (newline-delimited JSON). It keeps no state.

import { AsyncLocalStorage } from "node:async_hooks";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import { createRequire } from "node:module";
import {
  AIMessage,
  AIMessageChunk,
  BaseMessage,
  ChatMessage,
  FunctionMessage,
  HumanMessage,
  RemoveMessage,
  SystemMessage,
  ToolMessage,
} from "@langchain/core/messages";
import { BaseCheckpointSaver, BaseStore, Command, Send, messagesStateReducer } from "@langchain/langgraph";
import type { Checkpoint, CheckpointMetadata, Operation, OperationResults } from "@langchain/langgraph";
import { RunTracer, flushSpans, traceParentOf } from "./tracer.js";

const PROTOCOL = 1;
const INTERRUPT = "__interrupt__";
const TASKS = "__pregel_tasks";
const ENVELOPE = "__jg__";
// Config keys that name a checkpoint, not a run: the library's savers leave them out of metadata.
const EXCLUDED_METADATA = new Set(["checkpoint_id", "checkpoint_ns", "checkpoint_map"]);

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Obj = Record<string, unknown>;
type Frame = Obj & { t: string; id?: string };
type Ref = { thread_id: string; checkpoint_ns: string; checkpoint_id: string };
type Config = { configurable?: Obj; [k: string]: unknown };

// Whatever the user's code logs goes to stderr, jetgraph's log: stdout is the protocol's.
const out = process.stdout;
console.log = console.error;
console.info = console.error;

// The custom routes' driver (http.ts), imported at run time when the config names an app.
type HTTPApp = { app: unknown; serve(frame: Obj): Promise<void>; feed(frame: Obj): void; cancel(id: string): boolean };
type HTTPDriver = { App: new (app: never, send: (f: Obj) => void) => HTTPApp; routesOf(app: unknown): unknown[] };
// The auth handler's driver (auth.ts), imported at run time when the config names an auth.path.
type AuthHandler = { report(): Obj; authenticate(frame: Obj): Promise<Obj>; authorize(frame: Obj): Promise<Obj> };
type AuthDriver = { AuthHandler: new (auth: unknown) => AuthHandler };

/** Answers an auth frame: the handler's answer, or its failure (a 500 jetgraph logs). */
async function answerAuth(id: string, answer: () => Promise<Obj>): Promise<void> {
  try {
    send({ t: "done", id, result: await answer() });
  } catch (e) {
    const err = e instanceof Error ? e : new Error(String(e));
    console.error(`jetgraph host: the auth handler failed: ${err.name}: ${err.message}`);
    send({ t: "done", id, error: { class: err.name, message: err.message, traceback: (err.stack ?? "").slice(-4000) } });
  }
}

function send(frame: Obj): void {
  out.write(JSON.stringify(frame) + "\n");
}

const MESSAGES: Record<string, new (fields: Obj) => BaseMessage> = {
  human: HumanMessage as never,
  ai: AIMessage as never,
  system: SystemMessage as never,
  tool: ToolMessage as never,
  function: FunctionMessage as never,
  chat: ChatMessage as never,
  remove: RemoveMessage as never,
  AIMessageChunk: AIMessageChunk as never,
};

function isMessage(v: unknown): v is BaseMessage {
  return v instanceof BaseMessage;
}

// A message as the API shows it: its fields and its type.
function messageDict(m: BaseMessage): Obj {
  const stored = m.toDict() as unknown as { type: string; data: Obj };
  const name = m.constructor.name;
  return { ...toApi(stored.data) as Obj, type: name.endsWith("Chunk") ? name : stored.type };
}

// The value codec for stored values: JSON that revives to the same objects (decode).
function encode(v: unknown): Json {
  if (v === null || v === undefined) return null;
  if (typeof v === "boolean" || typeof v === "number" || typeof v === "string") return v;
  if (Array.isArray(v)) return v.map(encode);
  if (isMessage(v)) return messageDict(v) as Json;
  if (v instanceof Date) return { [ENVELOPE]: "datetime", value: v.toISOString() };
  if (v instanceof Set) return { [ENVELOPE]: "set", value: [...v].map(encode) };
  if (v instanceof Map) return { [ENVELOPE]: "map", items: [...v].map(([k, x]) => [encode(k), encode(x)]) };
  if (v instanceof Uint8Array) return { [ENVELOPE]: "bytes", value: Buffer.from(v).toString("base64") };
  if (v instanceof Send) return { [ENVELOPE]: "send", node: v.node, arg: encode(v.args) };
  if (v instanceof Error) return { [ENVELOPE]: "error", class: v.name, message: v.message };
  if (typeof v === "object") {
    const o: Record<string, Json> = {};
    for (const [k, x] of Object.entries(v as Obj)) if (x !== undefined) o[k] = encode(x);
    return o;
  }
  return String(v);
}

function decode(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(decode);
  if (v === null || typeof v !== "object") return v;
  const o = v as Obj;
  const kind = o[ENVELOPE];
  if (kind === undefined) {
    const Cls = typeof o.type === "string" && "content" in o ? MESSAGES[o.type] : undefined;
    if (Cls !== undefined) {
      const { type: _type, ...fields } = o;
      return new Cls(fields);
    }
    const r: Obj = {};
    for (const [k, x] of Object.entries(o)) r[k] = decode(x);
    return r;
  }
  switch (kind) {
    case "datetime":
      return new Date(o.value as string);
    case "set":
      return new Set((o.value as unknown[]).map(decode));
    case "map":
      return new Map((o.items as [unknown, unknown][]).map(([k, x]) => [decode(k), decode(x)]));
    case "bytes":
      return new Uint8Array(Buffer.from(o.value as string, "base64"));
    case "send":
      return new Send(o.node as string, decode(o.arg));
    case "error": {
      const e = new Error(o.message as string);
      e.name = o.class as string;
      return e;
    }
    case "tuple":
      return (o.value as unknown[]).map(decode);
  }
  throw new Error(`unknown stored value kind ${String(kind)}`);
}

// A value in the shape the API serves.
function toApi(v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (Array.isArray(v)) return v.map(toApi);
  if (isMessage(v)) return messageDict(v);
  if (v instanceof Date) return v.toISOString();
  if (v instanceof Set) return [...v].map(toApi);
  if (v instanceof Map) return Object.fromEntries([...v].map(([k, x]) => [String(k), toApi(x)]));
  if (v instanceof Send) return { node: v.node, arg: toApi(v.args) };
  if (v instanceof Error) return { error: v.name, message: v.message };
  if (typeof v === "object") {
    const r: Obj = {};
    for (const [k, x] of Object.entries(v as Obj)) if (x !== undefined) r[k] = toApi(x);
    return r;
  }
  return v;
}

// Calls to jetgraph, answered by id; the request they serve is the async context's.
const requests = new AsyncLocalStorage<string>();
const calls = new Map<string, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
let nextCall = 0;

// The calls of each request still waiting for their answer, and how many it made.
const pending = new Map<string, { open: Set<Promise<unknown>>; made: number }>();

function call(method: string, params: Obj): Promise<unknown> {
  const req = requests.getStore();
  if (req === undefined) return Promise.reject(new Error(`jetgraph: ${method} outside a request`));
  const id = `c${++nextCall}`;
  const answer = new Promise((resolve, reject) => {
    calls.set(id, { resolve, reject });
    send({ t: "call", id, req, method, params });
  });
  const p = pending.get(req) ?? { open: new Set(), made: 0 };
  pending.set(req, p);
  p.made++;
  p.open.add(answer);
  void answer.catch(() => undefined).finally(() => p.open.delete(answer));
  return answer;
}

// After a cancel, the library ends the run's stream at once while its nodes' abort handlers and
// its batched store finish in the background: their calls are waited for until the run has made
// none for CANCEL_QUIET_MS (at most CANCEL_SETTLE_MS, well inside jetgraph's cancel grace).
const CANCEL_QUIET_MS = 200;
const CANCEL_SETTLE_MS = 2000;

// settle waits until the request's calls are answered: jetgraph has then stored every checkpoint,
// write and store item the library handed over, also those of a cancelled run, before the
// request's done frame tells it the request ended (its later calls would find no request).
async function settle(req: string, cancelled: boolean): Promise<void> {
  const deadline = Date.now() + CANCEL_SETTLE_MS;
  for (;;) {
    // A turn of the event loop lets the library issue what it had started (a checkpoint's
    // writes follow its put).
    await new Promise((r) => setImmediate(r));
    const p = pending.get(req);
    if (p !== undefined && p.open.size > 0) {
      await Promise.allSettled([...p.open]);
      continue;
    }
    if (!cancelled || Date.now() >= deadline) break;
    const made = p?.made ?? 0;
    await new Promise((r) => setTimeout(r, CANCEL_QUIET_MS));
    if ((pending.get(req)?.made ?? 0) === made) break;
  }
  pending.delete(req);
}

function refOf(config: Config, checkpointId?: string): Ref {
  const c = config.configurable ?? {};
  return {
    thread_id: String(c.thread_id ?? ""),
    checkpoint_ns: String(c.checkpoint_ns ?? ""),
    checkpoint_id: checkpointId ?? String(c.checkpoint_id ?? ""),
  };
}

const configOf = (r: Ref): Config => ({ configurable: { ...r } });

type WireTuple = { ref: Ref; checkpoint: Obj; metadata: Obj; parent: Ref | null; pending_writes: { task_id: string; channel: string; value: unknown }[] | null };

// How long a checkpoint's writes wait for its put at most.
const PUT_WAIT_MS = 60_000;

// The checkpointer of every graph: jetgraph's, through the calls of the request in context.
class JetgraphSaver extends BaseCheckpointSaver<number> {
  // A checkpoint's writes wait for its put if it is under way (runs use the library's "sync"
  // durability, so a step's checkpoint is stored before its tasks write; other requests may not).
  // Only puts under way are here: a checkpoint is forgotten once its put is answered, so the
  // map stays as small as the puts in flight however many runs the host serves.
  private putting = new Map<string, { done: Promise<void>; resolve: () => void }>();

  private tuple(t: WireTuple): never {
    const cp = t.checkpoint;
    // A checkpoint read back is stored: writes waiting for its put may go.
    this.putting.get(cp.id as string)?.resolve();
    const values: Obj = {};
    for (const [k, x] of Object.entries((cp.channel_values as Obj) ?? {})) values[k] = decode(x);
    const writes = (t.pending_writes ?? []).map((w) => {
      let value = decode(w.value);
      if (w.channel === INTERRUPT && Array.isArray(w.value)) value = (w.value as Obj[]).map((i) => ({ value: decode(i.value), id: i.id }));
      return [w.task_id, w.channel, value];
    });
    return {
      config: configOf(t.ref),
      checkpoint: { ...cp, channel_values: values, channel_versions: cp.channel_versions ?? {}, versions_seen: cp.versions_seen ?? {} },
      metadata: decode(t.metadata ?? {}),
      parentConfig: t.parent ? configOf(t.parent) : undefined,
      pendingWrites: writes,
    } as never;
  }

  async getTuple(config: Config): Promise<never> {
    const t = (await call("checkpoint.get", { ref: refOf(config) })) as WireTuple | null;
    return (t ? this.tuple(t) : undefined) as never;
  }

  async *list(config: Config, options?: { limit?: number; before?: Config; filter?: Obj }): AsyncGenerator<never> {
    const ts = (await call("checkpoint.list", {
      ref: refOf(config, ""),
      limit: options?.limit ?? 0,
      before: options?.before ? refOf(options.before).checkpoint_id : "",
      filter: toApi(options?.filter ?? {}),
    })) as WireTuple[] | null;
    for (const t of ts ?? []) yield this.tuple(t);
  }

  async put(config: Config, cp: Checkpoint, metadata: CheckpointMetadata): Promise<never> {
    const checkpoint = cp as unknown as Obj;
    const parentId = String(config.configurable?.checkpoint_id ?? "");
    const ref = refOf(config, checkpoint.id as string);
    const md: Obj = { ...metadata };
    for (const src of [config.metadata as Obj | undefined, config.configurable]) {
      for (const [k, v] of Object.entries(src ?? {})) {
        if (!(k in md) && !k.startsWith("__") && !EXCLUDED_METADATA.has(k) && ["string", "number", "boolean"].includes(typeof v)) md[k] = v;
      }
    }
    const values: Record<string, Json> = {};
    for (const [k, x] of Object.entries((checkpoint.channel_values as Obj) ?? {})) {
      // An empty Send topic is no value (the Python library leaves it out): a stored value of
      // it would tell jetgraph's projections that the thread has tasks left.
      if (k === TASKS && Array.isArray(x) && x.length === 0) continue;
      values[k] = encode(x);
    }
    const id = checkpoint.id as string;
    let resolve = (): void => {};
    const done = new Promise<void>((r) => (resolve = r));
    this.putting.set(id, { done, resolve });
    try {
      await call("checkpoint.put", {
        ref,
        checkpoint: { v: checkpoint.v, id: checkpoint.id, ts: checkpoint.ts, channel_values: values,
          channel_versions: checkpoint.channel_versions, versions_seen: checkpoint.versions_seen },
        metadata: encode(md),
        parent: parentId ? { ...ref, checkpoint_id: parentId } : null,
      });
    } finally {
      // Writes waiting for it go now (after a failed put jetgraph answers them with the reason).
      resolve();
      if (this.putting.get(id)?.done === done) this.putting.delete(id);
    }
    return configOf(ref) as never;
  }

  async putWrites(config: Config, writes: [string, unknown][], taskId: string): Promise<void> {
    const ref = refOf(config);
    // Writes of a checkpoint being put wait for it; writes of one never put (a Command's update
    // on a thread without checkpoints goes to the library's empty checkpoint) go at once.
    const putting = this.putting.get(ref.checkpoint_id);
    if (putting !== undefined) {
      // The timer goes with the wait: a pending one would hold the run (its async context) for a minute.
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([putting.done, new Promise((r) => (timer = setTimeout(r, PUT_WAIT_MS).unref()))]);
      clearTimeout(timer);
    }
    const enc = writes.map(([channel, value]) => ({
      task_id: taskId,
      channel,
      value: channel === INTERRUPT && Array.isArray(value)
        ? (value as Obj[]).map((i) => ({ value: encode(i.value), id: i.id }))
        : encode(value),
    }));
    await call("checkpoint.put_writes", { ref, writes: enc });
  }

  async deleteThread(): Promise<void> {
    throw new Error("jetgraph deletes threads itself");
  }
}

type StoreItem = { namespace: string[]; key: string; value: Obj; created_at: string; updated_at: string; score?: number };

const item = (d: StoreItem): Obj => ({
  namespace: d.namespace, key: d.key, value: d.value, createdAt: new Date(d.created_at), updatedAt: new Date(d.updated_at),
  ...(d.score !== undefined ? { score: d.score } : {}),
});

// The store of every graph: jetgraph's.
class JetgraphStore extends BaseStore {
  async batch<Op extends Operation[]>(ops: Op): Promise<OperationResults<Op>> {
    const results: unknown[] = [];
    for (const op of ops) results.push(await this.op(op as unknown as Obj));
    return results as OperationResults<Op>;
  }

  private async op(op: Obj): Promise<unknown> {
    if ("namespacePrefix" in op) {
      const items = (await call("store.search", { namespace_prefix: op.namespacePrefix, filter: op.filter ?? null,
        limit: op.limit ?? 10, offset: op.offset ?? 0, query: op.query ?? null })) as StoreItem[] | null;
      return (items ?? []).map(item);
    }
    if ("matchConditions" in op || "maxDepth" in op) {
      let prefix: unknown = null;
      let suffix: unknown = null;
      for (const c of (op.matchConditions as { matchType: string; path: string[] }[] | undefined) ?? []) {
        if (c.matchType === "prefix") prefix = c.path;
        else suffix = c.path;
      }
      return call("store.list_namespaces", { prefix, suffix, max_depth: op.maxDepth ?? null, limit: op.limit ?? 100, offset: op.offset ?? 0 });
    }
    if ("value" in op) {
      if (op.value === null) return call("store.delete", { namespace: op.namespace, key: op.key }).then(() => undefined);
      return call("store.put", { namespace: op.namespace, key: op.key, value: toApi(op.value), index: op.index ?? null, ttl: null })
        .then(() => undefined);
    }
    const d = (await call("store.get", { namespace: op.namespace, key: op.key })) as StoreItem | null;
    return d ? item(d) : null;
  }
}

// A graph of the config: compiled once, or a factory called per request.
type Runnable = {
  checkpointer?: unknown;
  store?: unknown;
  stream: (input: unknown, options: Obj) => Promise<AsyncIterable<[string[], string, unknown]>>;
  getState: (config: Config, options?: Obj) => Promise<Snapshot>;
  getStateHistory: (config: Config, options?: Obj) => AsyncIterable<Snapshot>;
  updateState: (config: Config, values: unknown, asNode?: string) => Promise<Config>;
  bulkUpdateState: (config: Config, supersteps: { updates: { values?: unknown; asNode?: string }[] }[]) => Promise<Config>;
};
type Update = { values?: unknown; as_node?: string };
type Snapshot = {
  values: unknown; next: string[]; config?: Config; metadata?: Obj; createdAt?: string; parentConfig?: Config;
  tasks: { id: string; name: string; path?: unknown; error?: unknown; interrupts?: unknown; state?: unknown; result?: unknown }[];
};

const saver = new JetgraphSaver();
const store = new JetgraphStore();

function isGraph(v: unknown): v is Runnable {
  return typeof v === "object" && v !== null && typeof (v as Runnable).stream === "function" && typeof (v as Runnable).getState === "function";
}

function asGraph(v: unknown): Runnable {
  let g = v;
  if (typeof g === "object" && g !== null && !isGraph(g) && typeof (g as { compile?: unknown }).compile === "function") {
    g = (g as { compile: () => unknown }).compile();
  }
  if (!isGraph(g)) throw new TypeError("not a graph (a compiled graph, a StateGraph or a function that returns one)");
  g.checkpointer = saver;
  g.store = store;
  return g;
}

class Loaded {
  graph?: Runnable;
  factory?: (config: Config) => unknown;

  constructor(target: unknown) {
    if (typeof target === "function") this.factory = target as (config: Config) => unknown;
    else this.graph = asGraph(target);
  }

  async build(config: Config): Promise<Runnable> {
    if (this.graph !== undefined) return this.graph;
    return asGraph(await this.factory!(config));
  }
}

function snapshot(s: Snapshot): Obj | null {
  const ref = (c?: Config): Ref | null => (c ? refOf(c) : null);
  if (!s.config || !s.createdAt) return null;
  return {
    values: toApi(s.values ?? {}),
    next: s.next ?? [],
    tasks: (s.tasks ?? []).map((t) => {
      const st = t.state as (Snapshot & Config) | undefined;
      const sub = st && "values" in st ? snapshot(st) : null;
      return {
        id: t.id, name: t.name, path: toApi(t.path ?? []), error: toApi(t.error), interrupts: toApi(t.interrupts ?? []),
        checkpoint: st ? ref("values" in st ? st.config : st) : null, state: sub, result: toApi(t.result),
      };
    }),
    metadata: toApi(s.metadata ?? {}),
    created_at: s.createdAt,
    checkpoint: ref(s.config),
    parent_checkpoint: ref(s.parentConfig),
    interrupts: toApi((s.tasks ?? []).flatMap((t) => (t.interrupts as unknown[]) ?? [])),
  };
}

const running = new Map<string, AbortController>();

async function serve(graphs: Map<string, Loaded>, frame: Frame): Promise<void> {
  const id = frame.id!;
  const abort = new AbortController();
  running.set(id, abort);
  let done: Obj;
  try {
    const loaded = graphs.get(frame.graph as string);
    if (loaded === undefined) throw new Error(`no graph ${String(frame.graph)} in this host`);
    const config = (frame.config ?? {}) as Config;
    const result = await requests.run(id, async () => {
      const g = await loaded.build(config);
      const cp = { ...config, configurable: { ...(config.configurable ?? {}), ...((frame.checkpoint as Ref) ?? {}) } };
      switch (frame.t) {
        case "run":
          return run(id, g, frame, config, abort.signal);
        case "state":
          return snapshot(await g.getState(cp, { subgraphs: Boolean(frame.subgraphs) }));
        case "history": {
          const outl: Obj[] = [];
          const before = frame.before ? configOf({ ...(frame.checkpoint as Ref), checkpoint_id: frame.before as string }) : undefined;
          for await (const s of g.getStateHistory(cp, { limit: frame.limit || undefined, before, filter: frame.filter ?? undefined })) {
            const sn = snapshot(s);
            if (sn) outl.push(sn);
          }
          return outl;
        }
        case "graph":
          return drawing(g, config, frame.xray as number);
        case "schemas":
          return apiSchemas(await schemasOf(g));
        case "subgraphs":
          return subgraphSchemas(g, (frame.namespace as string) || undefined, Boolean(frame.recurse));
        case "update_state": {
          if (!cp.configurable.checkpoint_id) delete (cp.configurable as Obj).checkpoint_id;
          // Several updates: one checkpoint per superstep, its updates applied together (the
          // library's bulk update; jetgraph sends no command here, which LangGraph.js cannot apply).
          const steps = frame.supersteps as Update[][] | undefined;
          const c = steps
            ? await g.bulkUpdateState(cp, steps.map((step) => ({ updates: step.map((u) => ({ values: u.values, asNode: u.as_node || undefined })) })))
            : await g.updateState(cp, frame.values, (frame.as_node as string) || undefined);
          return { checkpoint: refOf(c) };
        }
      }
      throw Object.assign(new Error(`unknown request ${frame.t}`), { name: "UnknownRequest" });
    });
    done = { t: "done", id, result };
  } catch (e) {
    if (abort.signal.aborted) {
      done = { t: "done", id, result: { cancelled: true, interrupted: false, values: null, interrupts: [] } };
    } else {
      const err = e instanceof Error ? e : new Error(String(e));
      console.error(`request ${id} (${frame.t} of ${String(frame.graph)}) failed: ${err.stack ?? err.message}`);
      done = { t: "done", id, error: { class: err.name, message: err.message, traceback: (err.stack ?? "").slice(-4000) } };
    }
  } finally {
    running.delete(id);
  }
  await settle(id, abort.signal.aborted);
  send(done);
}

// The graph's drawing as the library's JSON, without the nodes' class paths (data.id), as the
// reference servers answer; xray -1 expands every level.
async function drawing(g: Runnable, config: Config, xray: number): Promise<unknown> {
  const drawable = g as unknown as { getGraphAsync: (c: Obj) => Promise<{ toJSON: () => { nodes?: { data?: unknown }[] } }> };
  const out = (await drawable.getGraphAsync({ ...config, xray: xray < 0 ? true : xray })).toJSON();
  for (const node of out.nodes ?? []) {
    if (node.data !== null && typeof node.data === "object") delete (node.data as Obj).id;
  }
  return out;
}

// JSON Schemas of a graph, in the JS reference server's names: `null` where none can be drawn.
type GraphSchema = { state: unknown; input: unknown; output: unknown; config: unknown };
type Channels = Record<string, { operator?: unknown; initialValueFactory?: () => unknown }>;
type SchemaLike = { getJsonSchema: () => unknown; getInputJsonSchema: () => unknown };
type Builder = {
  _schemaDefinition?: Channels; _inputDefinition?: Channels; _outputDefinition?: Channels;
  _schemaRuntimeDefinition?: unknown; _inputRuntimeDefinition?: unknown; _outputRuntimeDefinition?: unknown;
  _configRuntimeSchema?: unknown;
};

const isSchemaLike = (v: unknown): v is SchemaLike =>
  typeof v === "object" && v !== null && typeof (v as SchemaLike).getJsonSchema === "function" &&
  typeof (v as SchemaLike).getInputJsonSchema === "function";

const anyDrawn = (s: GraphSchema): boolean => Object.values(s).some((x) => x !== undefined && x !== null);

// The graph's schemas drawn the way the JS reference server draws them at runtime, with the
// project's own libraries: a StateSchema draws itself; Zod state through the library's Zod
// registry (which keeps withLangGraph's JSON Schema extras), else through LangChain's Zod to JSON
// Schema conversion. Annotation state has no runtime types (the reference server parses the
// TypeScript source for them): it is drawn from its channels (below).
async function schemasOf(g: Runnable): Promise<GraphSchema> {
  const b = (g as unknown as { builder?: Builder }).builder;
  if (b === undefined) return { state: null, input: null, output: null, config: null };
  if ([b._schemaRuntimeDefinition, b._inputRuntimeDefinition, b._outputRuntimeDefinition].some(isSchemaLike)) {
    const st = b._schemaRuntimeDefinition;
    const inp = b._inputRuntimeDefinition;
    const s: GraphSchema = {
      state: isSchemaLike(st) ? st.getJsonSchema() : null,
      input: isSchemaLike(inp) ? inp.getInputJsonSchema() : typeof inp === "symbol" && isSchemaLike(st) ? st.getInputJsonSchema() : null,
      output: isSchemaLike(b._outputRuntimeDefinition) ? b._outputRuntimeDefinition.getJsonSchema() : null,
      config: null,
    };
    if (anyDrawn(s)) return s;
  }
  const registry = await import("@langchain/langgraph/zod/schema").catch(() => undefined);
  if (registry !== undefined) {
    const s: GraphSchema = {
      state: registry.getUpdateTypeSchema(g), input: registry.getInputTypeSchema(g),
      output: registry.getOutputTypeSchema(g), config: registry.getConfigTypeSchema(g),
    };
    if (anyDrawn(s)) return s;
  }
  const zod = await zodSchemas(b);
  return zod ?? annotationSchemas(b);
}

// Zod state that the library's registry does not know, converted by LangChain (no extras).
async function zodSchemas(b: Builder): Promise<GraphSchema | undefined> {
  const [conv, types] = await Promise.all([
    import("@langchain/core/utils/json_schema").catch(() => undefined),
    import("@langchain/core/utils/types").catch(() => undefined),
  ]);
  if (conv === undefined || types === undefined) return undefined;
  const draw = (v: unknown): unknown => {
    if (!types.isZodSchemaV4(v) && !types.isZodSchemaV3(v)) return null;
    try {
      return conv.toJsonSchema(v as never);
    } catch {
      return null;
    }
  };
  const state = draw(b._schemaRuntimeDefinition) as Obj | null;
  const s: GraphSchema = {
    state,
    input: draw(b._inputRuntimeDefinition) ?? (state ? { ...state, required: undefined } : null),
    output: draw(b._outputRuntimeDefinition),
    config: draw(b._configRuntimeSchema),
  };
  return anyDrawn(s) ? s : undefined;
}

// Annotation state as what its channels tell at runtime: every channel by name; a channel with
// the library's messages reducer as a list of messages (marked as jetgraph's Go graphs mark
// theirs); another with a default by its default's JSON type; the rest as any value ({}). The
// config and context of an Annotation graph are not known at runtime: null.
function annotationSchemas(b: Builder): GraphSchema {
  const draw = (channels?: Channels): Obj | null => {
    if (channels === undefined) return null;
    const properties: Obj = {};
    for (const [name, ch] of Object.entries(channels)) properties[name] = channelSchema(ch);
    return { type: "object", properties };
  };
  return { state: draw(b._schemaDefinition), input: draw(b._inputDefinition), output: draw(b._outputDefinition), config: null };
}

function channelSchema(ch: Channels[string]): Obj {
  if (ch.operator === messagesStateReducer) return { type: "array", items: { type: "object" }, langgraph_type: "messages" };
  let v: unknown;
  try {
    v = ch.initialValueFactory?.();
  } catch {
    return {};
  }
  if (Array.isArray(v)) return { type: "array" };
  if (v === null || v === undefined) return {};
  if (typeof v === "number" || typeof v === "string" || typeof v === "boolean") return { type: typeof v };
  return typeof v === "object" ? { type: "object" } : {};
}

// A graph's schemas in the API's names; JS graphs have one schema for config and context.
function apiSchemas(s: GraphSchema): Obj {
  return {
    input_schema: s.input ?? null, output_schema: s.output ?? null, state_schema: s.state ?? null,
    config_schema: s.config ?? null, context_schema: s.config ?? null,
  };
}

// The schemas of the graph's subgraphs by namespace, in the library's order, under both the API's
// names and the JS reference server's (state, input, output, config), as jetgraph answers for
// Go graphs.
async function subgraphSchemas(g: Runnable, namespace: string | undefined, recurse: boolean): Promise<Obj> {
  const subs = (g as unknown as { getSubgraphsAsync: (ns?: string, recurse?: boolean) => AsyncIterable<[string, Runnable]> })
    .getSubgraphsAsync(namespace, recurse);
  const out: Obj = {};
  for await (const [ns, sub] of subs) {
    const s = await schemasOf(sub);
    out[ns] = { ...apiSchemas(s), state: s.state ?? null, input: s.input ?? null, output: s.output ?? null, config: s.config ?? null };
  }
  return out;
}

// Interrupt nodes as the library takes them: "*" (every node) is a string, not a list.
function nodes(names: string[] | null): "*" | string[] | undefined {
  if (!names || names.length === 0) return undefined;
  return names.includes("*") ? "*" : names;
}

async function run(id: string, g: Runnable, frame: Frame, config: Config, signal: AbortSignal): Promise<Obj> {
  const threadId = (frame.thread_id as string) || id;
  // The protocol's config keys are the API's; the JS library spells the recursion limit its way.
  const { recursion_limit: limit, ...rest } = config as Config & { recursion_limit?: number };
  const cfg: Config = { ...rest, configurable: { ...(config.configurable ?? {}), thread_id: threadId } };
  if (limit !== undefined) cfg.recursionLimit = limit;
  if (frame.checkpoint_id) cfg.configurable!.checkpoint_id = frame.checkpoint_id;
  const cmd = frame.command as Obj | null;
  const input = cmd ? new Command({ resume: cmd.resume, update: cmd.update as never, goto: (cmd.goto ?? undefined) as never }) : frame.input;
  const wanted = new Set((frame.stream_modes as string[]) ?? []);
  const modes = [...new Set([...wanted, "values", "updates"])];
  let values: unknown = undefined;
  let interruptedAtRoot = false;
  const interrupts: unknown[] = [];
  const interruptBefore = nodes(frame.interrupt_before as string[] | null);
  const interruptAfter = nodes(frame.interrupt_after as string[] | null);
  const iterate = async (): Promise<void> => {
    const stream = await g.stream(input, {
      ...cfg, ...tracing(frame), streamMode: modes, subgraphs: true, signal, context: frame.context ?? undefined, durability: "sync",
      interruptBefore, interruptAfter,
    });
    for await (const [ns, mode, chunk] of stream) {
      if (chunk !== null && typeof chunk === "object" && INTERRUPT in (chunk as Obj)) {
        if (ns.length === 0 && mode === "updates") {
          interruptedAtRoot = true;
          interrupts.push(...((toApi((chunk as Obj)[INTERRUPT]) as unknown[]) ?? []));
        }
        continue;
      }
      if (mode === "values" && ns.length === 0) values = chunk;
      if (wanted.has(mode)) send({ t: "event", id, mode, ns, data: toApi(chunk) });
    }
  };
  await iterate();
  // The library streams each interrupt of a run at the root (a static one as an empty list): a
  // run without one, nor interrupt nodes, ended with nothing next. Reading its state would make
  // jetgraph append the run's checkpoints apart instead of with the run's end.
  if (!interruptedAtRoot && values !== undefined && interruptBefore === undefined && interruptAfter === undefined) {
    return { values: toApi(values), interrupts: [], interrupted: false, cancelled: false };
  }
  const snap = await g.getState(cfg);
  return {
    values: toApi(values ?? snap.values),
    interrupts: interrupts.length ? interrupts : toApi((snap.tasks ?? []).flatMap((t) => (t.interrupts as unknown[]) ?? [])),
    interrupted: (snap.next ?? []).length > 0,
    cancelled: false,
  };
}

// The run's tracer, when the run frame names the parent of its spans (jetgraph's root span of
// the run): the run's callbacks, which the library hands to every runnable it calls. Without
// (the user's own LangSmith settings, or tracing off), nothing: LangChain traces as its
// environment says.
function tracing(frame: Frame): { callbacks?: RunTracer[] } {
  const parent = traceParentOf(frame.trace as Record<string, string> | null | undefined);
  return parent === undefined ? {} : { callbacks: [new RunTracer(parent, toApi)] };
}

// How long the traces still queued at exit may take to be sent: jetgraph gives a host little
// time to exit, and a jetgraph that is gone receives nothing.
const FLUSH_WAIT_MS = 2000;

// Sends the traces still queued before the host exits, for FLUSH_WAIT_MS at most.
async function flushTraces(): Promise<void> {
  const flush = async (): Promise<void> => {
    try {
      const { awaitAllCallbacks } = await import("@langchain/core/callbacks/promises");
      await awaitAllCallbacks();
      await flushSpans();
    } catch (e) {
      console.error(`jetgraph host: traces not flushed: ${String(e)}`);
    }
  };
  await Promise.race([flush(), new Promise((resolve) => setTimeout(resolve, FLUSH_WAIT_MS).unref())]);
}

async function load(root: string, spec: string): Promise<Loaded> {
  const i = spec.lastIndexOf(":");
  const where = spec.slice(0, i);
  const attr = spec.slice(i + 1);
  const mod = (await import(pathToFileURL(where).href)) as Obj;
  if (!(attr in mod)) throw new Error(`${where} has no export ${JSON.stringify(attr)}`);
  void root;
  return new Loaded(await mod[attr]);
}

/** Imports a driver and the user's export spec names (file:attribute), hands both to use and
 * returns what hello says of it: use's report, or why it did not load. */
async function loadDriven<D>(driverFile: string, spec: string, use: (driver: D, value: unknown) => Obj): Promise<Obj> {
  try {
    const driver = (await import(pathToFileURL(driverFile).href)) as D;
    const i = spec.lastIndexOf(":");
    const mod = (await import(pathToFileURL(spec.slice(0, i)).href)) as Obj;
    const attr = spec.slice(i + 1);
    if (!(attr in mod)) throw new Error(`${spec.slice(0, i)} has no export ${JSON.stringify(attr)}`);
    return use(driver, await mod[attr]);
  } catch (e) {
    return { ok: false, error: e instanceof Error ? `${e.name}: ${e.message}` : String(e) };
  }
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  let root = process.cwd();
  const specs: [string, string][] = [];
  let appSpec = "";
  let driver = "";
  let authSpec = "";
  let authDriver = "";
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "--root") root = args[++i];
    else if (args[i] === "--app") appSpec = args[++i];
    else if (args[i] === "--app-driver") driver = args[++i];
    else if (args[i] === "--auth") authSpec = args[++i];
    else if (args[i] === "--auth-driver") authDriver = args[++i];
    else if (args[i] === "--graph") {
      const g = args[++i];
      const eq = g.indexOf("=");
      specs.push([g.slice(0, eq), g.slice(eq + 1)]);
    }
  }
  const graphs = new Map<string, Loaded>();
  const report: Record<string, Obj> = {};
  for (const [gid, spec] of specs) {
    try {
      const l = await load(root, spec);
      graphs.set(gid, l);
      report[gid] = { ok: true, factory: l.factory !== undefined };
    } catch (e) {
      report[gid] = { ok: false, error: e instanceof Error ? `${e.name}: ${e.message}` : String(e) };
    }
  }
  const require = createRequire(`${root}/package.json`);
  let library = "unknown";
  try {
    library = (require("@langchain/langgraph/package.json") as { version: string }).version;
  } catch {
    // the version is for the log only
  }
  // The custom routes (http.app) and the auth handler (auth.path): their drivers (http.ts,
  // auth.ts, compiled beside this file) are imported only when the config names them.
  let app: HTTPApp | undefined;
  const appReport = appSpec ? await loadDriven(driver, appSpec, (d: HTTPDriver, v) => {
    app = new d.App(v as never, send);
    return { ok: true, routes: d.routesOf(app.app) };
  }) : undefined;
  let auth: AuthHandler | undefined;
  const authReport = authSpec ? await loadDriven(authDriver, authSpec, (d: AuthDriver, v) => {
    auth = new d.AuthHandler(v);
    return auth.report();
  }) : undefined;
  send({ t: "hello", protocol: PROTOCOL, language: "typescript", runtime: process.version, library, graphs: report,
    ...(appReport ? { app: appReport } : {}), ...(authReport ? { auth: authReport } : {}) });
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of lines) {
    if (!line.trim()) continue;
    const frame = JSON.parse(line) as Frame;
    if (frame.t === "reply") {
      const c = calls.get(frame.id!);
      calls.delete(frame.id!);
      if (c === undefined) continue;
      const err = frame.error as { class?: string; message?: string } | undefined;
      if (err) c.reject(new Error(`${err.class}: ${err.message}`));
      else c.resolve(frame.result);
    } else if (frame.t === "authenticate" && auth !== undefined) {
      const a = auth;
      void answerAuth(frame.id!, () => a.authenticate(frame));
    } else if (frame.t === "authorize" && auth !== undefined) {
      const a = auth;
      void answerAuth(frame.id!, () => a.authorize(frame));
    } else if (frame.t === "http" && app !== undefined) {
      void app.serve(frame);
    } else if (frame.t === "http.body" && app !== undefined) {
      app.feed(frame);
    } else if (frame.t === "cancel" && app?.cancel(frame.id!)) {
      // a custom route's request, ended
    } else if (frame.t === "cancel") {
      // In the run's context: a node's abort listener may still call the store or the saver.
      requests.run(frame.id!, () => running.get(frame.id!)?.abort());
    } else {
      void serve(graphs, frame);
    }
  }
  await flushTraces();
  process.exit(0);
}

void main();
