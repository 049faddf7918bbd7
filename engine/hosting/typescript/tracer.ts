// The host's own tracer of a run (see engine/hosting/PROTOCOL.md, Tracing): a LangChain callback
// handler that records the run's graph, its nodes, its model calls, tools and retrievers as
// spans under the run's root span in jetgraph, and posts each once, when it ends, in batches to
// jetgraph's tracing API (LANGSMITH_ENDPOINT, the langsmith clients' /runs/batch).
//
// Why not LangChain's LangChainTracer: it builds a langsmith RunTree for every runnable a run
// calls, the library's hidden plumbing included (28 a run of a one-node graph, against 2 here),
// and posts each twice (start, then end); on Node 20 that doubled the CPU of a hosted run.

import http from "node:http";
import https from "node:https";
import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import type { Serialized } from "@langchain/core/load/serializable";
import type { BaseMessage } from "@langchain/core/messages";
import type { LLMResult } from "@langchain/core/outputs";

type Obj = Record<string, unknown>;

// The tag LangGraph puts on its own plumbing (channel writes, branches, __start__), which
// LangSmith hides: left out, their children hang from the nearest span kept.
const HIDDEN = "langsmith:hidden";
// How long an ended span waits for others to share its post, and how many make a post at once.
const BATCH_WAIT_MS = 50;
const BATCH_MAX = 200;
// A post that fails for the network or the server (5xx, 429) is tried again this many times.
const RETRIES = 3;

// Where a run's spans go: jetgraph's root span of the run, from the run frame's trace.
export type TraceParent = { traceId: string; id: string; dotted: string; project: string };

// The parent named by the langsmith distributed-tracing headers jetgraph sends with a run:
// langsmith-trace, the root span's dotted_order; baggage, its project (langsmith-project=).
// Undefined without headers or when they are malformed (the run is then not traced).
export function traceParentOf(headers: Record<string, string> | null | undefined): TraceParent | undefined {
  const dotted = headers?.["langsmith-trace"];
  // A segment is YYYYMMDDTHHMMSSffffffZ (22 characters) and a UUID (36).
  if (!dotted || dotted.length < 58) return undefined;
  let project = "default";
  for (const item of (headers["baggage"] ?? "").split(",")) {
    const eq = item.indexOf("=");
    if (item.slice(0, eq).trim() === "langsmith-project") project = decodeURIComponent(item.slice(eq + 1).trim());
  }
  return { traceId: dotted.slice(22, 58), id: dotted.slice(-36), dotted, project };
}

type Span = {
  id: string;
  parent: string;
  dotted: string;
  name: string;
  runType: string;
  start: number;
  inputs: unknown;
  tags?: string[];
  metadata?: Obj;
  invocation?: unknown;
  events?: Obj[];
};

// The last dotted_order stamp given: a span's stamp is its start in milliseconds and three
// digits that keep spans started in one millisecond in their order, as the langsmith clients do.
let lastStamp = 0;

function stamp(ms: number): string {
  const t = Math.max(ms * 1000, lastStamp + 1);
  lastStamp = t;
  const iso = new Date(Math.floor(t / 1000)).toISOString(); // 2026-01-01T00:00:00.000Z
  return `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}${iso.slice(20, 23)}${String(t % 1000).padStart(3, "0")}Z`;
}

// One run's tracer: a handler of the run's callbacks (given in the run's config, so that the
// library hands it to every runnable the run calls). Its handlers are awaited (they only record),
// rather than queued behind the callbacks LangChain runs in the background.
export class RunTracer extends BaseCallbackHandler {
  name = "jetgraph_tracer";
  private readonly spans = new Map<string, Span>();
  // Hidden runs by id, to the span their children hang from.
  private readonly hidden = new Map<string, Span | TraceParent>();

  constructor(private readonly root: TraceParent, private readonly serialize: (v: unknown) => unknown) {
    super({ _awaitHandler: true });
  }

  // The same tracer for every child of the run: its spans are the run's.
  override copy(): RunTracer {
    return this;
  }

  private open(id: string, parentId: string | undefined, name: string, runType: string, inputs: unknown, tags?: string[], metadata?: Obj): Span | undefined {
    const parent = (parentId && (this.spans.get(parentId) ?? this.hidden.get(parentId))) || this.root;
    if (tags?.includes(HIDDEN)) {
      this.hidden.set(id, parent);
      return undefined;
    }
    const start = Date.now();
    const span: Span = { id, parent: parent.id, dotted: `${parent.dotted}.${stamp(start)}${id}`, name, runType, start, inputs, tags, metadata };
    this.spans.set(id, span);
    return span;
  }

  private close(id: string, outputs: unknown, error?: unknown): void {
    if (this.hidden.delete(id)) return;
    const s = this.spans.get(id);
    if (s === undefined) return;
    this.spans.delete(id);
    const extra: Obj = { metadata: s.metadata ?? {} };
    if (s.invocation !== undefined) extra.invocation_params = s.invocation;
    queue({
      id: s.id, trace_id: this.root.traceId, parent_run_id: s.parent, dotted_order: s.dotted, session_name: this.root.project,
      name: s.name, run_type: s.runType, start_time: new Date(s.start).toISOString(), end_time: new Date().toISOString(),
      inputs: this.safe(s.inputs), outputs: error === undefined ? this.safe(outputs) : null,
      error: error === undefined ? null : errorText(error), extra, tags: s.tags ?? [], events: s.events ?? [],
    });
  }

  // A value as the API shows it, in an object as the runs' fields are; a value that cannot be
  // shown (a cycle) is named so rather than failing the run.
  private safe(v: unknown): Obj {
    try {
      const out = this.serialize(v);
      return out !== null && typeof out === "object" && !Array.isArray(out) ? (out as Obj) : { output: out };
    } catch (e) {
      return { error: `not serializable: ${String(e)}` };
    }
  }

  // In the order LangChain's callback manager passes them (its declaration puts runType fourth;
  // the manager, and LangChain's own tracers, take the parent's id there).
  override handleChainStart(chain: Serialized, inputs: Obj, runId: string, parentRunId?: string, tags?: string[], metadata?: Obj, runType?: string, runName?: string): void {
    this.open(runId, parentRunId, runName ?? nameOf(chain), runType ?? "chain", inputs, tags, metadata);
  }

  override handleChainEnd(outputs: Obj, runId: string): void {
    this.close(runId, outputs);
  }

  override handleChainError(err: Error, runId: string): void {
    this.close(runId, undefined, err);
  }

  override handleChatModelStart(llm: Serialized, messages: BaseMessage[][], runId: string, parentRunId?: string, extraParams?: Obj, tags?: string[], metadata?: Obj, runName?: string): void {
    this.llm(this.open(runId, parentRunId, runName ?? nameOf(llm), "llm", { messages }, tags, metadata), extraParams);
  }

  override handleLLMStart(llm: Serialized, prompts: string[], runId: string, parentRunId?: string, extraParams?: Obj, tags?: string[], metadata?: Obj, runName?: string): void {
    this.llm(this.open(runId, parentRunId, runName ?? nameOf(llm), "llm", { prompts }, tags, metadata), extraParams);
  }

  private llm(s: Span | undefined, extraParams?: Obj): void {
    if (s === undefined) return;
    s.invocation = extraParams?.invocation_params;
    s.events = [{ name: "start", time: new Date(s.start).toISOString() }];
  }

  // Each token is an event of the model call: jetgraph takes the first as its time to first token.
  override handleLLMNewToken(token: string, _idx: unknown, runId: string): void {
    this.spans.get(runId)?.events?.push({ name: "new_token", time: new Date().toISOString(), kwargs: { token } });
  }

  override handleLLMEnd(output: LLMResult, runId: string): void {
    this.spans.get(runId)?.events?.push({ name: "end", time: new Date().toISOString() });
    this.close(runId, {
      generations: output.generations.map((g) => g.map((x) => {
        const message = (x as { message?: unknown }).message;
        return { text: x.text, generation_info: x.generationInfo, ...(message !== undefined && { message: this.message(message) }) };
      })),
      llm_output: output.llmOutput,
    });
  }

  // A model's answer as the API shows a message, with its type (ai), not its class: a streamed
  // answer is a chunk (AIMessageChunk), which traces read as the message it makes up.
  private message(m: unknown): unknown {
    const d = this.serialize(m) as Obj | null;
    if (d !== null && typeof d === "object" && typeof d.type === "string" && d.type.endsWith("MessageChunk")) {
      d.type = d.type.slice(0, -"MessageChunk".length).toLowerCase();
    }
    return d;
  }

  override handleLLMError(err: Error, runId: string): void {
    this.close(runId, undefined, err);
  }

  override handleToolStart(tool: Serialized, input: string, runId: string, parentRunId?: string, tags?: string[], metadata?: Obj, runName?: string): void {
    this.open(runId, parentRunId, runName ?? nameOf(tool), "tool", { input }, tags, metadata);
  }

  override handleToolEnd(output: unknown, runId: string): void {
    this.close(runId, { output });
  }

  override handleToolError(err: Error, runId: string): void {
    this.close(runId, undefined, err);
  }

  override handleRetrieverStart(retriever: Serialized, query: string, runId: string, parentRunId?: string, tags?: string[], metadata?: Obj, name?: string): void {
    this.open(runId, parentRunId, name ?? nameOf(retriever), "retriever", { query }, tags, metadata);
  }

  override handleRetrieverEnd(documents: unknown, runId: string): void {
    this.close(runId, { documents });
  }

  override handleRetrieverError(err: Error, runId: string): void {
    this.close(runId, undefined, err);
  }
}

function nameOf(s: Serialized | undefined): string {
  const id = (s as { id?: string[] } | undefined)?.id;
  return id?.[id.length - 1] ?? "Unnamed";
}

function errorText(e: unknown): string {
  return e instanceof Error ? `${e.name}: ${e.message}` : String(e);
}

// Ended spans waiting for their post, and the posts under way.
let pending: Obj[] = [];
let timer: NodeJS.Timeout | undefined;
const posting = new Set<Promise<void>>();

function queue(span: Obj): void {
  pending.push(span);
  if (pending.length >= BATCH_MAX) post();
  else timer ??= setTimeout(post, BATCH_WAIT_MS).unref();
}

function post(): void {
  if (timer !== undefined) clearTimeout(timer);
  timer = undefined;
  if (pending.length === 0) return;
  const body = JSON.stringify({ post: pending });
  pending = [];
  const p = send(body).finally(() => posting.delete(p));
  posting.add(p);
}

let warned = 0;

// Connections to jetgraph's tracing API, kept open between posts. node:http rather than fetch:
// Node 20's fetch costs several times its CPU a request.
const agents = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };

// One POST of body to url; the answer's status and (the start of) its text.
function postOnce(url: URL, body: string): Promise<{ status: number; text: string }> {
  const secure = url.protocol === "https:";
  return new Promise((resolve, reject) => {
    const req = (secure ? https : http).request(url, {
      method: "POST", agent: secure ? agents.https : agents.http,
      headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body), "x-api-key": process.env.LANGSMITH_API_KEY ?? "" },
    }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => { if (text.length < 2000) text += c; });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

// Posts a batch to jetgraph's tracing API; traces never fail a run, a batch that cannot be
// posted is dropped with a line in the log.
async function send(body: string): Promise<void> {
  const endpoint = process.env.LANGSMITH_ENDPOINT;
  if (!endpoint) return;
  let why = "";
  for (let attempt = 0; attempt <= RETRIES; attempt++) {
    if (attempt > 0) await new Promise((r) => setTimeout(r, 100 * 4 ** attempt));
    try {
      const res = await postOnce(new URL(`${endpoint.replace(/\/$/, "")}/runs/batch`), body);
      if (res.status >= 200 && res.status < 300) {
        // jetgraph appends what it can of a batch and names the spans it refused.
        if (res.text.includes('"errors"') && warned++ < 10) console.error(`jetgraph host: spans refused by jetgraph's tracing: ${res.text.slice(0, 500)}`);
        return;
      }
      why = `${res.status} ${res.text.slice(0, 500)}`;
      if (res.status < 500 && res.status !== 429) break;
    } catch (e) {
      why = String(e);
    }
  }
  if (warned++ < 10) console.error(`jetgraph host: spans not posted to jetgraph's tracing: ${why}`);
}

// Posts the spans still waiting and waits for every post under way.
export async function flushSpans(): Promise<void> {
  post();
  await Promise.all([...posting]);
}
