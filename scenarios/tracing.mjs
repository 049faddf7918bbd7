// Tracing scenario: the official langsmith client, pointed at jetgraph's tracing service, sends a
// nested trace made with `traceable` (chain -> streaming llm -> tool) through /runs/multipart;
// a second client, told by /info that multipart is off, sends one through /runs/batch; then the
// client's own reads (readRun, listRuns with a filter, readProject with stats, getRunStats) give
// back the runs with their tokens, cost and time to first token. Last, a run of the agent graph
// is found in the default project as a root chain span whose id is the run's id (jetgraph traces
// itself). Last, the client's v2 reads (client.runs.query(), retrieve(), traces.query(), listRuns(),
// sessions.listV2()) read the first trace back, and threads.query() and listTraces() a
// two-turn conversation. Then feedback (created directly and in multipart, read, listed, updated,
// deleted, summarised on the run and the project, through a presigned URL) and the first
// project's update and deletion.
//
//   node tracing.mjs     (the server URL comes from JETGRAPH_URL)
import assert from "node:assert/strict";
import { Client } from "langsmith";
import { traceable, getCurrentRunTree } from "langsmith/traceable";
import { Client as LangGraph } from "@langchain/langgraph-sdk";

process.env.LANGSMITH_TRACING = "true";
const base = process.env.JETGRAPH_URL;
const apiUrl = `${base}/tracing`;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// recordingFetch logs "METHOD /path" of every request; with noMultipart it edits /info so the
// client believes the server has no multipart endpoint, and falls back to /runs/batch.
function recordingFetch(log, { noMultipart = false } = {}) {
  return async (input, init) => {
    const url = new URL(typeof input === "string" ? input : input.url);
    log.push(`${init?.method ?? "GET"} ${url.pathname}`);
    const res = await fetch(input, init);
    if (noMultipart && url.pathname.endsWith("/info") && res.ok) {
      const info = await res.json();
      info.batch_ingest_config = { ...info.batch_ingest_config, use_multipart_endpoint: false };
      return new Response(JSON.stringify(info), { status: 200, headers: { "content-type": "application/json" } });
    }
    return res;
  };
}

// poll calls f until it returns something truthy (or 30 s pass): reads see what the trace
// projection has applied, a moment after ingestion answered.
async function poll(what, f) {
  let last;
  for (const end = Date.now() + 30000; Date.now() < end; await sleep(100)) {
    try {
      const v = await f();
      if (v) return v;
    } catch (e) {
      last = e;
    }
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${last}` : ""}`);
}

async function collect(iter) {
  const out = [];
  for await (const x of iter) out.push(x);
  return out;
}

const usage = { input_tokens: 12, output_tokens: 5, total_tokens: 17 };
// gpt-4o-mini's default prices: $0.15 and $0.60 per million input and output tokens.
const wantCost = 12 * 0.15e-6 + 5 * 0.6e-6;

// sendTrace traces one question with client into project: a chain calling a streaming fake
// model (run type llm, model gpt-4o-mini) and a tool. It returns the ids of the three runs.
async function sendTrace(client, project) {
  const ids = {};
  const model = traceable(
    async function* fakeChat({ messages }) {
      ids.llm = getCurrentRunTree().id;
      await sleep(40); // the first token comes after the call started
      for (const token of ["2 + 3 * 4", " is", " 14", "."]) {
        yield token;
        await sleep(5);
      }
    },
    {
      name: "fake-chat", run_type: "llm", client, project_name: project,
      metadata: { ls_provider: "openai", ls_model_name: "gpt-4o-mini" },
      // The chunks become one assistant message in the native format, with the usage.
      aggregator: (chunks) => ({
        messages: [{ role: "assistant", content: [{ type: "text", text: chunks.join("") }] }],
        usage_metadata: usage,
      }),
    },
  );
  const calculator = traceable(
    async ({ expression }) => {
      ids.tool = getCurrentRunTree().id;
      return { result: String(2 + 3 * 4), expression };
    },
    { name: "calculator", run_type: "tool", client, project_name: project },
  );
  const agent = traceable(
    async ({ question }) => {
      ids.chain = getCurrentRunTree().id;
      let text = "";
      for await (const token of model({ messages: [{ role: "user", content: question }] })) text += token;
      const tool = await calculator({ expression: "2 + 3 * 4" });
      return { answer: text, tool };
    },
    { name: "agent-chain", run_type: "chain", client, project_name: project },
  );
  const out = await agent({ question: "What is 2 + 3 * 4?" });
  assert.equal(out.answer, "2 + 3 * 4 is 14.");
  await client.awaitPendingTraceBatches();
  return ids;
}

// checkTrace reads one trace back through client and checks it.
async function checkTrace(client, project, ids) {
  const root = await poll(`run ${ids.chain}`, async () => {
    const r = await client.readRun(ids.chain);
    return r.end_time && r.total_tokens === usage.total_tokens ? r : null;
  });
  assert.equal(root.run_type, "chain");
  assert.equal(root.name, "agent-chain");
  assert.equal(root.parent_run_id, null);
  assert.equal(root.outputs.answer, "2 + 3 * 4 is 14.");
  assert.ok(Math.abs(root.total_cost - wantCost) < 1e-12, `root cost ${root.total_cost}`);

  const llms = await poll(`llm runs of ${project}`, async () => {
    const runs = await collect(client.listRuns({ projectName: project, filter: 'eq(run_type, "llm")' }));
    return runs.length === 1 && runs[0].end_time ? runs : null;
  });
  const llm = llms[0];
  assert.equal(llm.id, ids.llm);
  assert.equal(llm.parent_run_id, ids.chain);
  assert.equal(llm.trace_id, ids.chain);
  assert.equal(llm.prompt_tokens, 12);
  assert.equal(llm.completion_tokens, 5);
  assert.equal(llm.total_tokens, 17);
  assert.ok(llm.total_cost !== null && Math.abs(llm.total_cost - wantCost) < 1e-12, `llm cost ${llm.total_cost}`);
  assert.ok(llm.first_token_time, "first_token_time is set");
  const ttft = Date.parse(llm.first_token_time) - Date.parse(llm.start_time);
  assert.ok(ttft >= 30 && ttft <= Date.parse(llm.end_time) - Date.parse(llm.start_time), `time to first token ${ttft} ms`);
  assert.ok(llm.events.some((e) => e.name === "new_token"));

  const tool = await client.readRun(ids.tool);
  assert.equal(tool.run_type, "tool");
  assert.equal(tool.parent_run_id, ids.chain);
  assert.equal(tool.outputs.result, "14");

  const none = await collect(client.listRuns({ projectName: project, filter: 'and(eq(run_type, "llm"), gt(total_tokens, 100))' }));
  assert.equal(none.length, 0);

  const stats = await poll(`stats of ${project}`, async () => {
    const p = await client.readProject({ projectName: project, includeStats: true });
    return p.run_count === 1 && p.total_tokens === 17 ? p : null;
  });
  assert.equal(stats.name, project);
  assert.equal(stats.prompt_tokens, 12);
  assert.equal(stats.completion_tokens, 5);
  assert.ok(Math.abs(stats.total_cost - wantCost) < 1e-12, `project cost ${stats.total_cost}`);
  assert.ok(stats.first_token_p50 > 0.03, `first token p50 ${stats.first_token_p50}`);
  assert.equal(stats.error_rate, 0);

  const llmStats = await client.getRunStats({ projectNames: [project], runType: "llm" });
  assert.equal(llmStats.run_count, 1);
  assert.equal(llmStats.total_tokens, 17);
  assert.ok(llmStats.first_token_p50 > 0.03, `llm first token p50 ${llmStats.first_token_p50}`);
}

const suffix = Date.now().toString(36);

// 1. Multipart, the client's default.
const multipartLog = [];
const multipart = new Client({ apiUrl, apiKey: "test", fetchImplementation: recordingFetch(multipartLog) });
const project1 = `scenario-multipart-${suffix}`;
const ids1 = await sendTrace(multipart, project1);
assert.ok(multipartLog.includes("POST /tracing/runs/multipart"), `requests: ${multipartLog}`);
assert.ok(!multipartLog.includes("POST /tracing/runs/batch"), `requests: ${multipartLog}`);
await checkTrace(multipart, project1, ids1);

// 2. /runs/batch, when the server says it has no multipart endpoint.
const batchLog = [];
const batch = new Client({ apiUrl, apiKey: "test", fetchImplementation: recordingFetch(batchLog, { noMultipart: true }) });
const project2 = `scenario-batch-${suffix}`;
const ids2 = await sendTrace(batch, project2);
assert.ok(batchLog.includes("POST /tracing/runs/batch"), `requests: ${batchLog}`);
assert.ok(!batchLog.includes("POST /tracing/runs/multipart"), `requests: ${batchLog}`);
await checkTrace(batch, project2, ids2);

// 3. jetgraph traces its own runs into the default project: the root span is the run.
const lg = new LangGraph({ apiUrl: base, apiKey: null, callerOptions: { maxRetries: 0 } });
const thread = await lg.threads.create();
const run = await lg.runs.create(thread.thread_id, "agent", { input: { messages: [{ role: "user", content: "hi" }] } });
await lg.runs.join(thread.thread_id, run.run_id);
const reader = new Client({ apiUrl, apiKey: "test" });
const own = await poll("the agent run's trace", async () => {
  const roots = await collect(reader.listRuns({ projectName: "default", isRoot: true, filter: 'eq(name, "agent")' }));
  const r = roots.find((x) => x.id === run.run_id);
  return r && r.end_time ? r : null;
});
assert.equal(own.run_type, "chain");
assert.equal(own.trace_id, run.run_id);
assert.equal(own.status, "success");
const ownLLMs = await collect(reader.listRuns({ projectName: "default", traceId: run.run_id, filter: 'eq(run_type, "llm")' }));
assert.equal(ownLLMs.length, 2, "the agent's two model calls");
for (const l of ownLLMs) {
  assert.ok(l.total_tokens > 0 && l.first_token_time, `own llm run ${JSON.stringify(l)}`);
}
// The example agent's tool node is a plain node (no tool runs); the react template's tools are
// tool spans.
const ownTools = await collect(reader.listRuns({ projectName: "default", traceId: run.run_id, runType: "tool" }));
assert.equal(ownTools.length, 0);
const reactRun = await lg.runs.create(thread.thread_id, "react", { input: { messages: [{ role: "user", content: "calculator: 2 + 3" }] } });
await lg.runs.join(thread.thread_id, reactRun.run_id);
const reactTools = await poll("the react run's tool span", async () => {
  const tools = await collect(reader.listRuns({ projectName: "default", traceId: reactRun.run_id, runType: "tool" }));
  return tools.length > 0 && tools.every((x) => x.end_time) ? tools : null;
});
assert.equal(reactTools.length, 1);
assert.equal(reactTools[0].name, "calculator");

// 4. The client's v2 reads (client.runs.query() and retrieve(), which replace the deprecated
// listRuns and readRun): the URLs hang off LANGSMITH_ENDPOINT, and the version /info announces
// satisfies the client's check (it warns below 0.16.0).
const warnings = [];
const warn = console.warn;
console.warn = (...args) => {
  warnings.push(args.join(" "));
  warn(...args);
};
const v2Log = [];
const v2 = new Client({ apiUrl, apiKey: "test", fetchImplementation: recordingFetch(v2Log) });
const { id: projectId } = await v2.readProject({ projectName: project1 });
const v2Runs = await collect(v2.runs.query({
  project_ids: [projectId], page_size: 1, selects: ["ID", "NAME", "RUN_TYPE", "STATUS", "PARENT_RUN_IDS", "TOTAL_TOKENS"],
}));
assert.deepEqual(v2Runs.map((r) => r.id).sort(), Object.values(ids1).sort(), "every run, one page at a time");
const v2LLM = v2Runs.find((r) => r.id === ids1.llm);
assert.deepEqual(v2LLM, { id: ids1.llm, name: "fake-chat", run_type: "LLM", status: "SUCCESS", parent_run_ids: [ids1.chain], total_tokens: 17 });
const v2Roots = await collect(v2.runs.query({ project_ids: [projectId], is_root: true, run_type: "CHAIN" }));
assert.deepEqual(v2Roots, [{ id: ids1.chain }], "no selects: the id alone");
const v2Root = await v2.runs.retrieve(ids1.chain, { project_id: projectId, selects: ["NAME", "OUTPUTS", "TOTAL_COST", "IS_ROOT"] });
assert.equal(v2Root.name, "agent-chain");
assert.equal(v2Root.outputs.answer, "2 + 3 * 4 is 14.");
assert.equal(v2Root.is_root, true);
assert.ok(Math.abs(v2Root.total_cost - wantCost) < 1e-12, `v2 root cost ${v2Root.total_cost}`);
const traces = await collect(v2.traces.query({ project_id: projectId, selects: ["NAME"] }));
assert.deepEqual(traces.map((t) => [t.root_run.name, t.trace_aggregates.total_tokens]), [["agent-chain", 17]]);
const traceRuns = await v2.traces.listRuns(ids1.chain, { project_id: projectId, selects: ["ID", "RUN_TYPE"] });
assert.deepEqual(traceRuns.items.map((r) => r.run_type), ["CHAIN", "LLM", "TOOL"], "the trace's runs in execution order");
// Two turns of one conversation (the metadata's thread_id), read back as a thread.
const project4 = `scenario-threads-${suffix}`;
const turn = traceable(async ({ question }) => ({ answer: question.toUpperCase() }), {
  name: "turn", run_type: "chain", client: v2, project_name: project4, metadata: { thread_id: `conv-${suffix}` },
});
await turn({ question: "first" });
// Turns are numbered by start time, to the client's millisecond; two roots started in the same
// millisecond cannot be told apart (the client's UUIDv7s carry no order within it), so the
// second turn starts in a later one, as turns of a conversation do.
for (const t0 = Date.now(); Date.now() === t0; ) await sleep(1);
await turn({ question: "second" });
await v2.awaitPendingTraceBatches();
const { id: project4Id } = await poll(`project ${project4}`, () => v2.readProject({ projectName: project4 }));
const threads = await poll("the thread", async () => {
  const ts = await collect(v2.threads.query({ project_id: project4Id }));
  return ts.length === 1 && ts[0].count === 2 ? ts : null;
});
assert.equal(threads[0].thread_id, `conv-${suffix}`);
const turns = await collect(v2.threads.listTraces(`conv-${suffix}`, { project_id: project4Id, selects: ["TURN_NUMBER", "OUTPUTS"] }));
assert.deepEqual(turns.map((t) => [t.turn_number, t.outputs.answer]), [[1, "FIRST"], [2, "SECOND"]]);
await sleep(100); // the client checks the version in the background
assert.ok(!warnings.some((w) => w.includes("older than")), `version warnings: ${warnings}`);
const projects = await collect(v2.sessions.listV2({ name: project1 }));
assert.deepEqual(projects.map((p) => p.id), [projectId]);
console.warn = warn;
for (const path of ["POST /tracing/api/v2/runs/query", `GET /tracing/api/v2/runs/${ids1.chain}`,
  `GET /tracing/api/v2/traces/${ids1.chain}/runs`, "POST /tracing/api/v2/traces/query", "GET /tracing/api/v2/sessions",
  "POST /tracing/api/v2/threads/query",
  `GET /tracing/api/v2/threads/conv-${suffix}/traces`]) {
  assert.ok(v2Log.includes(path), `requests: ${v2Log}`);
}

// 5. Feedback and the project's lifecycle, through the client's own helpers. Feedback without a
// trace id goes to POST /feedback; with one, the client sends it in a multipart part.
const direct = await multipart.createFeedback(ids1.chain, "correctness", { score: 1, comment: "right" });
const batched = await multipart.createFeedback(ids1.llm, "tone", { value: "warm", traceId: ids1.chain, feedbackSourceType: "model" });
await multipart.awaitPendingTraceBatches();
assert.equal(multipartLog.filter((r) => r === "POST /tracing/feedback").length, 1, `requests: ${multipartLog}`);
const read = await multipart.readFeedback(direct.id);
assert.equal(read.key, "correctness");
assert.equal(read.score, 1);
assert.equal(read.run_id, ids1.chain);
const listed = await poll("the multipart feedback", async () => {
  const all = await collect(multipart.listFeedback({ runIds: [ids1.chain, ids1.llm] }));
  return all.length === 2 ? all : null;
});
assert.deepEqual(listed.map((f) => f.id).sort(), [direct.id, batched.id].sort());
const models = await collect(multipart.listFeedback({ runIds: [ids1.llm], feedbackSourceTypes: ["model"] }));
assert.equal(models.length, 1);
assert.equal(models[0].value, "warm");
assert.equal((await collect(multipart.listFeedback({ feedbackKeys: ["correctness"], runIds: [ids1.chain] }))).length, 1);

await multipart.updateFeedback(direct.id, { score: 0.5 });
assert.equal((await multipart.readFeedback(direct.id)).score, 0.5);
const rated = await multipart.readRun(ids1.chain);
assert.equal(rated.feedback_stats.correctness.n, 1);
assert.equal(rated.feedback_stats.correctness.avg, 0.5);
const v2Rated = await multipart.runs.retrieve(ids1.chain, { project_id: projectId, selects: ["FEEDBACK_STATS"] });
assert.equal(v2Rated.feedback_stats.correctness.avg, 0.5);
const withFeedback = await multipart.readProject({ projectName: project1, includeStats: true });
assert.equal(withFeedback.feedback_stats.correctness.avg, 0.5);
assert.equal(withFeedback.feedback_stats.tone.values.warm, 1);

await multipart.deleteFeedback(batched.id);
assert.deepEqual((await collect(multipart.listFeedback({ runIds: [ids1.chain, ids1.llm] }))).map((f) => f.id), [direct.id]);

// A presigned feedback URL, used without an API key (as a browser would).
const token = await multipart.createPresignedFeedbackToken(ids1.chain, "thumbs");
assert.ok(Date.parse(token.expires_at) > Date.now(), `token ${JSON.stringify(token)}`);
const use = await fetch(`${token.url}?score=1&comment=great`);
assert.equal(use.status, 200, await use.text());
const thumbs = await collect(multipart.listFeedback({ runIds: [ids1.chain], feedbackKeys: ["thumbs"] }));
assert.equal(thumbs.length, 1);
assert.equal(thumbs[0].comment, "great");

const renamed = `${project1}-done`;
const updated = await multipart.updateProject(withFeedback.id, { name: renamed, description: "finished", metadata: { checked: true } });
assert.equal(updated.name, renamed);
assert.equal(updated.description, "finished");
assert.equal(updated.extra.metadata.checked, true);
assert.equal((await multipart.readProject({ projectName: renamed })).id, withFeedback.id);
assert.equal(await multipart.hasProject({ projectName: project1 }), false);

await multipart.deleteProject({ projectName: renamed });
await assert.rejects(multipart.readProject({ projectId: withFeedback.id }), /404|not found/i);
await assert.rejects(multipart.readFeedback(direct.id), /404|not found/i);
await assert.rejects(multipart.readRun(ids1.chain), /404|not found/i);
// The other project is untouched.
assert.equal((await multipart.readRun(ids2.chain)).id, ids2.chain);

console.log(JSON.stringify({ multipart: ids1, batch: ids2, own: run.run_id }));
console.log("tracing scenario passed");
