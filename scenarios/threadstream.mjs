// Thread-centric streaming scenario: the official LangGraph JS SDK's ThreadStream
// (client.threads.stream) drives a thread through POST /threads/{id}/commands and reads its
// events from /threads/{id}/stream/events.
//
//   node threadstream.mjs sse         on a thread not made yet, a subscription by channel before
//                                     run.start makes it, an interrupt answered with
//                                     input.respond, a subscription made after a run replaying
//                                     it, over SSE; a static interrupt (weather) answered the
//                                     same way; then a stream cut mid-run and reopened with
//                                     since=<last seq>: no gap, no duplicate
//   node threadstream.mjs sse <url>   the same, the cut stream resumed through another process
//                                     (at <url>) sharing the log
//   node threadstream.mjs websocket   the same but the cut, over the SDK's WebSocket transport
//                                     (Node 20 needs NODE_OPTIONS=--experimental-websocket)
//
// The server URL comes from JETGRAPH_URL. On a failed assertion the events seen are printed to
// stderr.
import assert from "node:assert/strict";
import { Client, ProtocolSseTransportAdapter } from "@langchain/langgraph-sdk";

const base = process.env.JETGRAPH_URL;
const client = new Client({ apiUrl: base, apiKey: null, callerOptions: { maxRetries: 0 } });
const ALL = ["values", "updates", "messages", "tools", "lifecycle", "input", "checkpoints", "tasks", "custom"];
const seen = [];

const terminal = (ev) =>
  ev.method === "lifecycle" && ev.params.namespace.length === 0 &&
  ["completed", "failed", "interrupted"].includes(ev.params.data.event);

// untilPaused reads a subscription until the SDK pauses it, which it does after a root run's
// terminal lifecycle event; the subscription stays open for the next run.
async function untilPaused(sub) {
  const events = [];
  const it = sub[Symbol.asyncIterator]();
  for (let r = await it.next(); !r.done; r = await it.next()) {
    events.push(r.value);
    seen.push(r.value);
  }
  return events;
}

// untilResumedEnds reads a paused subscription on until a run other than firstRun ends: the
// run that answered firstRun's interrupt.
async function untilResumedEnds(sub, firstRun) {
  let events = [];
  const ended = () => events.some((e) => terminal(e) && e.params.run_id !== firstRun);
  while (!ended()) {
    events = events.concat(await untilPaused(sub));
    if (ended()) break;
    assert.ok(!sub.closed, "the subscription closed before the resumed run ended");
    await sub.waitForResume();
  }
  return events;
}

// interruptAndRespond: a run that interrupts, its input.requested, and the run that answers it,
// read through one subscription made before the first run starts and kept across both. The SDK
// hands a new subscription every matching event its other subscriptions (its lifecycle watcher's
// among them) receive from the moment it is asked for, before the server replays the run from
// its start for it: a subscription made mid-run can see the run's end before its beginning, on
// either transport. One made before the run sees it in order.
async function interruptAndRespond(thread) {
  const sub = await thread.subscribe(["values", "updates", "lifecycle", "input", "messages"]);
  const started = await thread.run.start({ input: { messages: "foo", interrupt: true } });
  assert.ok(started.run_id, "run.start gave no run_id");
  const first = await untilPaused(sub);
  const requested = first.filter((e) => e.method === "input.requested");
  assert.equal(requested.length, 1, "one input.requested");
  assert.equal(requested[0].params.data.payload, "i want to interrupt");
  assert.equal(first.at(-1).params.data.event, "interrupted", "the run ends interrupted");
  assert.ok(first.every((e) => e.params.run_id === started.run_id), "events of the run started");
  const values = first.filter((e) => e.method === "values");
  assert.ok(values.length > 0, "values events");
  assert.equal(thread.interrupted, true, "the thread knows it is interrupted");
  assert.equal(thread.interrupts.length, 1, "the thread holds the interrupt");
  const interruptId = requested[0].params.data.interrupt_id;
  assert.equal(thread.interrupts[0].interruptId, interruptId);

  // A subscription made after the run ended gets the run's values again. Their order is not
  // checked: the replays the SDK's own subscriptions (made at run.start) caused may still be
  // arriving, and hand the new subscription what they carry before its replay.
  const late = await thread.subscribe(["values"]);
  const replayed = [];
  const lateEvents = late[Symbol.asyncIterator]();
  while (replayed.length < values.length) replayed.push((await lateEvents.next()).value);
  await late.unsubscribe();
  const ids = (evs) => evs.map((e) => e.event_id).sort();
  assert.deepEqual(ids(replayed), ids(values), "the run's values replayed");

  await thread.input.respond({ namespace: [], interrupt_id: interruptId, response: "yes" });
  const second = await untilResumedEnds(sub, started.run_id);
  assert.ok(second.every((e) => e.params.run_id !== started.run_id), "nothing of the first run twice");
  assert.equal(second.at(-1).params.data.event, "completed", "the resumed run completes");
  const text = second
    .filter((e) => e.method === "messages" && e.params.data.event === "content-block-delta")
    .map((e) => e.params.data.delta.text).join("");
  assert.equal(text, "beginend", "the streamed answer of the resumed run");
  const last = second.filter((e) => e.method === "values").at(-1).params.data;
  assert.deepEqual(last.messages.map((m) => m.content), ["foo", "begin", "tool_call__begin", "end"]);
}

// staticInterrupt: weather stops before a node (interrupt_before). The run ends interrupted with
// an input.requested, the SDK holds the interrupt, and input.respond continues the thread.
async function staticInterrupt(thread) {
  const sub = await thread.subscribe(["lifecycle", "input"]);
  const started = await thread.run.start({ input: { messages: [{ role: "user", content: "weather in SF?" }] } });
  const first = await untilPaused(sub);
  assert.equal(first.at(-1).params.data.event, "interrupted", "a static interrupt ends the run interrupted");
  const requested = first.filter((e) => e.method === "input.requested");
  assert.equal(requested.length, 1, "one input.requested for the static interrupt");
  assert.deepEqual(requested[0].params.data.payload, { type: "static", next: ["weather_graph"] });
  assert.equal(thread.interrupted, true, "the thread knows it is interrupted");
  assert.equal(thread.interrupts[0].interruptId, requested[0].params.data.interrupt_id);
  await thread.input.respond({ namespace: [], interrupt_id: requested[0].params.data.interrupt_id, response: "go on" });
  const second = await untilResumedEnds(sub, started.run_id);
  assert.equal(second.at(-1).params.data.event, "completed", "the answered run completes");
  const state = await client.threads.getState(thread.threadId);
  assert.equal(state.values.messages.at(-1).content, "It's sunny in San Francisco!");
}

// readUntil reads an event stream handle until done(events) holds.
async function readUntil(handle, done) {
  const events = [];
  for await (const ev of handle.events) {
    events.push(ev);
    seen.push(ev);
    if (done(events)) break;
  }
  return events;
}

// cutAndResume: a stream cut in the middle of a run and reopened with since=<the last seq it
// had> gives exactly the events an uncut stream of the run gives.
async function cutAndResume(threadId, resumeUrl) {
  const thread = client.threads.stream(threadId, { assistantId: "agent" });
  const { run_id: runId } = await thread.run.start({
    input: { messages: [{ role: "user", content: "again" }], sleep: { steps: 20, ms: 50 } },
  });
  const transport = (apiUrl = base) => new ProtocolSseTransportAdapter({ apiUrl, threadId, maxReconnectAttempts: 0 });
  const ofRun = (events) => events.filter((e) => e.params.run_id === runId);
  const endOf = (events) => ofRun(events).some(terminal);

  const a = transport();
  const h1 = a.openEventStream({ channels: ALL });
  await h1.ready;
  const part1 = await readUntil(h1, (evs) => ofRun(evs).filter((e) => e.method === "custom").length >= 5);
  h1.close(); // the disconnect, mid-run
  await a.close();
  assert.ok(!endOf(part1), "the cut falls before the run's end");
  const since = part1.at(-1).seq;

  const b = transport(resumeUrl);
  const h2 = b.openEventStream({ channels: ALL, since });
  await h2.ready;
  const part2 = await readUntil(h2, endOf);
  h2.close();
  await b.close();
  assert.ok(part2.length > 0 && part2[0].seq > since, `the resumed stream starts after ${since}`);

  const c = transport();
  const h3 = c.openEventStream({ channels: ALL }); // the run is the latest: from its start
  await h3.ready;
  const whole = await readUntil(h3, endOf);
  h3.close();
  await c.close();
  await thread.close();

  const ids = (evs) => ofRun(evs).map((e) => e.event_id);
  const joined = ids(part1).concat(ids(part2));
  assert.equal(new Set(joined).size, joined.length, "no event twice");
  assert.deepEqual(joined, ids(whole), "the cut stream and its resumption are the whole stream");
  const steps = ofRun(whole).filter((e) => e.method === "custom").map((e) => e.params.data.payload.step);
  assert.deepEqual(steps, [...Array(20).keys()], "every custom event of the run, once, in order");
  return { cutAfter: ofRun(part1).length, resumed: ofRun(part2).length };
}

async function main() {
  // A stall prints what was seen before the harness kills the process (and loses it).
  setTimeout(() => {
    console.error(`stalled after 60s; events seen: ${JSON.stringify(seen.slice(-40), null, 1).slice(0, 8000)}`);
    process.exit(2);
  }, 60_000).unref();
  const phase = process.argv[2];
  if (phase === "sse") {
    // A new thread id: the subscription's stream is opened before run.start makes the thread.
    const thread = client.threads.stream({ assistantId: "agent" });
    await interruptAndRespond(thread);
    await thread.close();
    const weather = client.threads.stream({ assistantId: "weather" });
    await staticInterrupt(weather);
    await weather.close();
    const state = await client.threads.getState(thread.threadId);
    assert.deepEqual(state.values.messages.map((m) => m.content), ["foo", "begin", "tool_call__begin", "end"]);
    const resumeUrl = process.argv[3] ?? base;
    const cut = await cutAndResume(thread.threadId, resumeUrl);
    const where = resumeUrl === base ? "" : " through another process";
    console.log(`thread stream sse scenario passed (cut after ${cut.cutAfter} events, ${cut.resumed} resumed${where})`);
  } else if (phase === "websocket") {
    assert.equal(typeof WebSocket, "function", "this Node has no WebSocket (NODE_OPTIONS=--experimental-websocket)");
    const thread = client.threads.stream({ assistantId: "agent", transport: "websocket" });
    await interruptAndRespond(thread); // the thread is made by run.start
    await thread.close();
    const weather = client.threads.stream({ assistantId: "weather", transport: "websocket" });
    await staticInterrupt(weather);
    await weather.close();
    console.log("thread stream websocket scenario passed");
  } else {
    throw new Error(`unknown phase ${phase}`);
  }
}

main().catch((err) => {
  console.error(err);
  console.error("events seen:", JSON.stringify(seen.slice(-40), null, 1).slice(0, 8000));
  process.exit(1);
});
