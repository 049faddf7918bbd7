// Streaming scenario: the official LangGraph JS SDK streams runs over server-sent events.
//
//   node streaming.mjs modes                        values, updates, messages-tuple and custom
//                                                   events of the agent graph; a stateless echo
//                                                   run in values and events modes
//   node streaming.mjs reconnect                    a proxy cuts the first response mid-event; the
//                                                   SDK must resume through Location with
//                                                   Last-Event-ID, losing and repeating nothing
//   node streaming.mjs reconnect-shared-id          the same, cut between two frames shaped from
//                                                   one bus message (each has its own id)
//   node streaming.mjs join <run_id> <thread_id> [steps]
//                                                   join a running agent run (created elsewhere,
//                                                   possibly through another process) and follow
//                                                   it to its end
//
// The server URL comes from JETGRAPH_URL. On a failed assertion the events seen (and, for
// reconnect, the proxy's log) are printed to stderr.
import assert from "node:assert/strict";
import net from "node:net";
import { Client } from "@langchain/langgraph-sdk";

const base = process.env.JETGRAPH_URL;
const texts = (values) => (values?.messages ?? []).map((m) => m.content);
const newClient = (apiUrl) => new Client({ apiUrl, apiKey: null, callerOptions: { maxRetries: 0 } });

// seen is what the current phase received, printed when an assertion fails.
const seen = { events: [], extra: {} };

// collect drains an SDK stream into seen.events and returns them.
async function collect(stream) {
  const events = [];
  seen.events = events;
  for await (const ev of stream) events.push(ev);
  return events;
}

// seqOf is the sequence part of an event id "<ms>-<seq>" (or a plain integer id).
function seqOf(id) {
  assert.equal(typeof id, "string", `event id ${JSON.stringify(id)} is not a string`);
  const m = /^(?:\d+-)?(\d+)$/.exec(id);
  assert.ok(m, `event id ${JSON.stringify(id)} is not <ms>-<seq>`);
  return BigInt(m[1]);
}

// checkWellFormed: every event has an id, ids never go back, no event comes twice, the stream
// ends with exactly one "end" and nothing after it.
function checkWellFormed(events) {
  assert.ok(events.length > 0, "no events");
  const keys = new Set();
  let last = -1n;
  events.forEach((ev, i) => {
    const seq = seqOf(ev.id);
    assert.ok(seq >= last, `event ${i} (${ev.event}) has id ${ev.id}, before the previous event's`);
    last = seq;
    const key = `${ev.id} ${ev.event} ${JSON.stringify(ev.data)}`;
    assert.ok(!keys.has(key), `event ${i} repeated: ${key.slice(0, 300)}`);
    keys.add(key);
  });
  const ends = events.filter((e) => e.event === "end");
  assert.equal(ends.length, 1, `${ends.length} "end" events`);
  assert.equal(events.at(-1).event, "end", "an event came after end");
  assert.equal(events.at(-1).data, null, "end carries data");
  assert.ok(!events.some((e) => e.event === "error"), `an error event: ${JSON.stringify(events.find((e) => e.event === "error")?.data)}`);
}

// customSteps returns the step numbers of the custom {type: "sleep"} events.
function customSteps(events) {
  return events.filter((e) => e.event === "custom").map((e) => {
    assert.equal(e.data?.type, "sleep", `custom event ${JSON.stringify(e.data)}`);
    assert.deepEqual(Object.keys(e.data).sort(), ["step", "type"], `custom event ${JSON.stringify(e.data)}`);
    return e.data.step;
  });
}

const finalMessages = ["foo", "begin", "tool_call__begin", "end"];

async function modes() {
  const client = newClient(base);

  // The agent graph on a thread, in four modes at once.
  const thread = await client.threads.create();
  let created;
  const events = await collect(client.runs.stream(thread.thread_id, "agent", {
    input: { messages: [{ role: "user", content: "foo" }], sleep: { steps: 3, ms: 10 } },
    streamMode: ["values", "updates", "messages-tuple", "custom"],
    onRunCreated: (meta) => { created = meta; },
  }));
  checkWellFormed(events);
  assert.equal(events[0].event, "metadata", "the first event is not metadata");
  assert.equal(typeof events[0].data?.run_id, "string", "metadata has no run_id");
  assert.deepEqual(created, { run_id: events[0].data.run_id, thread_id: thread.thread_id },
    "Content-Location names another run than the metadata event");
  const names = new Set(events.map((e) => e.event));
  assert.deepEqual([...names].sort(), ["custom", "end", "messages", "metadata", "updates", "values"], "event names");

  const values = events.filter((e) => e.event === "values").map((e) => e.data);
  assert.deepEqual(texts(values[0]), ["foo"], "the first values event is not the input");
  assert.deepEqual(texts(values.at(-1)), finalMessages, "the last values event");
  assert.deepEqual(values.map((v) => texts(v).length), [1, 2, 3, 4], "one values event per super-step");

  const updates = events.filter((e) => e.event === "updates").map((e) => e.data);
  assert.deepEqual(updates.map((u) => Object.keys(u)), [["agent"], ["tool"], ["agent"]], "updates' nodes");
  assert.deepEqual(updates.map((u) => Object.values(u)[0].messages.map((m) => m.content)),
    [["begin"], ["tool_call__begin"], ["end"]], "updates' messages");

  const tuples = events.filter((e) => e.event === "messages").map((e) => e.data);
  for (const t of tuples) {
    assert.ok(Array.isArray(t) && t.length === 2, `messages event is not [chunk, metadata]: ${JSON.stringify(t)}`);
    assert.equal(t[1].thread_id, thread.thread_id, "messages metadata thread_id");
    assert.equal(typeof t[1].langgraph_step, "number", "messages metadata langgraph_step");
  }
  const chunks = tuples.filter(([c]) => c.type === "AIMessageChunk");
  for (const [c, md] of chunks) {
    assert.equal(c.content.length, 1, `chunk ${JSON.stringify(c.content)} is not one character`);
    assert.equal(md.langgraph_node, "agent", "a chunk not from the agent node");
  }
  const byId = new Map();
  for (const [c] of chunks) byId.set(c.id, (byId.get(c.id) ?? "") + c.content);
  assert.deepEqual([...byId.values()], ["begin", "end"], "model chunks by message id");
  assert.deepEqual(tuples.filter(([c]) => c.type !== "AIMessageChunk").map(([c, md]) => [c.type, c.content, md.langgraph_node]),
    [["tool", "tool_call__begin", "tool"]], "whole messages in messages-tuple mode");

  assert.deepEqual(events.filter((e) => e.event === "custom").map((e) => e.data),
    [0, 1, 2].map((step) => ({ type: "sleep", step })), "custom events");
  // Custom events come from the first agent step, before its model answers.
  const firstChunk = events.findIndex((e) => e.event === "messages");
  assert.ok(events.findLastIndex((e) => e.event === "custom") < firstChunk, "custom events after the model's chunks");

  const state = await client.threads.getState(thread.thread_id);
  assert.deepEqual(texts(state.values), finalMessages, "thread state after the stream");

  // A stateless run of echo, in values and events modes.
  let stateless;
  const echo = await collect(client.runs.stream(null, "echo", {
    input: { messages: [{ role: "user", content: "foo" }] },
    streamMode: ["values", "events"],
    onRunCreated: (meta) => { stateless = meta; },
  }));
  checkWellFormed(echo);
  assert.equal(echo[0].event, "metadata", "stateless: the first event is not metadata");
  assert.equal(stateless?.run_id, echo[0].data.run_id, "stateless: Content-Location names another run");
  const echoValues = echo.filter((e) => e.event === "values").map((e) => texts(e.data));
  assert.deepEqual(echoValues, [["foo"], ["foo", "echo: foo"]], "stateless values");
  const lifecycle = echo.filter((e) => e.event === "events").map((e) => [e.data.event, e.data.name]);
  assert.deepEqual(lifecycle, [["on_chain_start", "echo"], ["on_chain_start", "echo"], ["on_chain_end", "echo"], ["on_chain_end", "echo"]],
    "stateless events");
  const rootEnd = echo.filter((e) => e.event === "events").at(-1).data;
  assert.equal(rootEnd.run_id, echo[0].data.run_id, "the root on_chain_end's run_id");
  assert.deepEqual(texts(rootEnd.data.output), ["foo", "echo: foo"], "the root on_chain_end's output");

  // Only events mode: nothing but metadata, events and end.
  const only = await collect(client.runs.stream(null, "echo", {
    input: { messages: [{ role: "user", content: "bar" }] }, streamMode: "events",
  }));
  checkWellFormed(only);
  assert.deepEqual([...new Set(only.map((e) => e.event))], ["metadata", "events", "end"], "events mode alone");
  assert.equal(only.at(-2).data.event, "on_chain_end", "the last events event");

  console.log("streaming modes scenario passed");
}

// startProxy puts a TCP proxy before target. The first response to a POST .../runs/stream is
// cut once: cutAt(text so far) returns where (-1: not yet); the bytes up to there go through,
// then both sockets are destroyed. Every request head is logged.
async function startProxy(target, cutAt) {
  const log = { requests: [], connections: 0, cut: null, firstHead: null };
  const sockets = new Set();
  const server = net.createServer((client) => {
    const conn = ++log.connections;
    const upstream = net.connect(Number(target.port), target.hostname);
    sockets.add(client);
    sockets.add(upstream);
    client.on("error", () => {});
    upstream.on("error", () => {});
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());

    let reqBuf = Buffer.alloc(0);
    let current = null; // the request being answered (no pipelining)
    let sent = 0; // bytes of the response forwarded
    let respText = ""; // the response so far (latin1)
    let body = null; // its body, de-chunked
    client.on("data", (d) => {
      upstream.write(d);
      reqBuf = Buffer.concat([reqBuf, d]);
      for (;;) {
        const end = reqBuf.indexOf("\r\n\r\n");
        if (end < 0) return;
        const head = reqBuf.subarray(0, end).toString("latin1").split("\r\n");
        const [method, path] = head[0].split(" ");
        const headers = {};
        for (const line of head.slice(1)) {
          const i = line.indexOf(":");
          headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
        }
        const length = Number(headers["content-length"] ?? 0);
        if (reqBuf.length < end + 4 + length) return;
        reqBuf = reqBuf.subarray(end + 4 + length);
        const req = { conn, method, path, lastEventId: headers["last-event-id"] ?? null };
        log.requests.push(req);
        current = req;
        sent = 0;
        respText = "";
        body = null;
      }
    });

    upstream.on("data", (d) => {
      const cutting = log.cut == null && current?.method === "POST" && /\/runs\/stream$/.test(current.path);
      if (!cutting) {
        client.write(d);
        return;
      }
      respText += d.toString("latin1");
      if (!body) {
        const headEnd = respText.indexOf("\r\n\r\n");
        if (headEnd < 0) {
          client.write(d);
          sent += d.length;
          return;
        }
        log.firstHead = respText.slice(0, headEnd);
        body = new ChunkedBody(headEnd + 4, /^transfer-encoding: *chunked/im.test(log.firstHead));
      }
      body.feed(respText);
      const at = cutAt(body.text);
      if (at < 0) {
        client.write(d);
        sent += d.length;
        return;
      }
      const raw = body.rawOffset(at);
      client.write(Buffer.from(respText.slice(sent, raw), "latin1"), () => {
        client.destroy();
        upstream.destroy();
      });
      // The id of the last whole frame the client received.
      const forwarded = body.text.slice(0, at);
      const ids = [...forwarded.matchAll(/^id: *(.*?)\r?\n\r?\n/gm)].map((x) => x[1]);
      log.cut = { conn, bytes: raw, lastWholeId: ids.at(-1) ?? null, tail: forwarded.slice(-300) };
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    log,
    close() {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}

// ChunkedBody decodes an HTTP/1.1 chunked body from the raw response text as it arrives and
// maps body offsets back to raw ones (a frame may straddle two chunks).
class ChunkedBody {
  constructor(start, chunked) {
    this.pos = start; // next raw offset to read
    this.state = chunked ? "size" : "data";
    this.left = chunked ? 0 : Infinity; // bytes left in the current chunk
    this.text = "";
    this.segments = []; // [bodyOffset, rawOffset, length]
  }

  feed(raw) {
    for (;;) {
      if (this.state === "size") {
        const eol = raw.indexOf("\r\n", this.pos);
        if (eol < 0) return;
        this.left = parseInt(raw.slice(this.pos, eol).split(";")[0], 16);
        this.pos = eol + 2;
        this.state = this.left > 0 ? "data" : "done";
      } else if (this.state === "data") {
        const n = Math.min(this.left, raw.length - this.pos);
        if (n <= 0) return;
        this.segments.push([this.text.length, this.pos, n]);
        this.text += raw.slice(this.pos, this.pos + n);
        this.pos += n;
        this.left -= n;
        if (this.left === 0) this.state = "crlf";
      } else if (this.state === "crlf") {
        if (raw.length - this.pos < 2) return;
        this.pos += 2;
        this.state = "size";
      } else {
        return;
      }
    }
  }

  rawOffset(at) {
    for (const [b, r, n] of this.segments) if (at >= b && at <= b + n) return r + (at - b);
    throw new Error(`body offset ${at} beyond what was read`);
  }
}

// midFrame cuts inside the data line of the custom event of step.
const midFrame = (step) => (text) => {
  const m = new RegExp(`"step":\\s*${step}\\b`).exec(text);
  return m ? m.index + 4 : -1;
};

// message is the bus message an event id "<ms>-<position>" belongs to: a message shaped into
// several frames gives them consecutive positions in one slot of 1024.
const message = (id) => Math.floor(Number(id.split("-")[1]) / 1024);

// sharedID cuts right after a whole frame whose message the next frame comes from too (once that
// next frame has arrived whole), after the metadata frame.
const sharedID = (text) => {
  const frames = [...text.matchAll(/event: *(.*)\r?\ndata: *.*\r?\nid: *(.*?)\r?\n\r?\n/g)];
  for (let i = 1; i + 1 < frames.length; i++) {
    const [a, b] = [frames[i][2], frames[i + 1][2]];
    assert.notEqual(a, b, "two frames share an event id");
    if (message(a) === message(b)) return frames[i].index + frames[i][0].length;
  }
  return -1;
};

// streamThroughCut streams a run of the agent graph on a new thread through a proxy that cuts
// the first response at cutAt, and checks the SDK resumed through Location with the
// Last-Event-ID of the last whole event it got, and that it got exactly the events an uncut
// join of the same run gives. Returns the events.
async function streamThroughCut(cutAt, payload) {
  const proxy = await startProxy(new URL(base), cutAt);
  seen.extra.proxy = proxy.log;
  try {
    const client = newClient(proxy.url);
    const thread = await client.threads.create();
    let created;
    const events = await collect(client.runs.stream(thread.thread_id, "agent", { ...payload, onRunCreated: (meta) => { created = meta; } }));
    const { log } = proxy;

    assert.ok(log.cut, "the proxy never found where to cut the first response");
    const location = /^location: *(.*)$/im.exec(log.firstHead ?? "")?.[1]?.trim();
    assert.equal(location, `/threads/${thread.thread_id}/runs/${created?.run_id}/stream`, "the stream's Location header");
    const resumes = log.requests.filter((r) => r.method === "GET" && r.path.split("?")[0] === location && r.lastEventId);
    assert.ok(resumes.length >= 1, "the SDK never asked Location with Last-Event-ID: " + JSON.stringify(log.requests));
    assert.equal(resumes[0].lastEventId, log.cut.lastWholeId, "the Last-Event-ID of the resume is not the last whole event before the cut");
    assert.notEqual(resumes[0].conn, log.cut.conn, "the resume came on the cut connection");

    checkWellFormed(events);
    assert.equal(events[0].event, "metadata", "the first event is not metadata");
    assert.equal(events.filter((e) => e.event === "metadata").length, 1, "metadata sent again on the resume");

    // The same run joined from its start without a proxy: the reference transcript.
    const direct = newClient(base);
    const whole = [];
    for await (const ev of direct.runs.joinStream(thread.thread_id, created.run_id, { streamMode: payload.streamMode })) whole.push(ev);
    seen.extra.uncut = whole.map((e) => `${e.id} ${e.event} ${JSON.stringify(e.data)?.slice(0, 200)}`);
    const show = (list) => list.map((e) => `${e.id} ${e.event}`);
    assert.deepEqual(show(events), show(whole), "events through the cut vs an uncut join of the same run (id event)");
    assert.deepEqual(events, whole, "events through the cut vs an uncut join of the same run");
    console.log(JSON.stringify({ cut: log.cut.bytes, lastEventId: log.cut.lastWholeId,
      requests: log.requests.map((r) => `${r.method} ${r.path} ${r.lastEventId ?? ""}`) }));
    return events;
  } finally {
    proxy.close();
  }
}

// reconnect: the first response is cut inside the frame of custom step 5 of a 20-step run; the
// SDK resumes while the run is still going.
async function reconnect() {
  const steps = 20;
  const cutStep = 5;
  const events = await streamThroughCut(midFrame(cutStep), {
    input: { messages: [{ role: "user", content: "foo" }], sleep: { steps, ms: 150 } },
    streamMode: ["values", "custom"],
  });
  assert.deepEqual(customSteps(events), [...Array(steps).keys()], "custom steps: each once, in order");
  const values = events.filter((e) => e.event === "values").map((e) => texts(e.data));
  assert.deepEqual(values, [["foo"], ["foo", "begin"], ["foo", "begin", "tool_call__begin"], finalMessages], "values events");
  const i = events.findIndex((e) => e.id === seen.extra.proxy.cut.lastWholeId);
  assert.deepEqual(events[i + 1]?.data, { type: "sleep", step: cutStep }, "the first event after the resume");
  console.log("streaming reconnect scenario passed");
}

// reconnectSharedID: the first response is cut between two frames shaped from one bus message
// (a node's update and its message in messages-tuple mode): each frame has its own id, so
// resuming after the first must not lose the second.
async function reconnectSharedID() {
  const events = await streamThroughCut(sharedID, {
    input: { messages: [{ role: "user", content: "foo" }], sleep: { steps: 3, ms: 10 } },
    streamMode: ["values", "updates", "messages-tuple", "custom"],
  });
  assert.deepEqual(texts(events.filter((e) => e.event === "values").at(-1).data), finalMessages, "the last values event");
  console.log("streaming reconnect shared-id scenario passed");
}

// join follows a running run of the agent graph to its end; while it does, a second join asks for
// the events after the third custom event with Last-Event-ID and must get exactly the rest.
// threadStream follows a thread with the SDK's threads.joinStream while two runs go by: both
// runs' lifecycle and values events arrive, then the client leaves.
async function threadStream() {
  const client = newClient(base);
  const thread = await client.threads.create();
  const ac = new AbortController();
  const seen = [];
  let done = 0;
  const reader = (async () => {
    try {
      for await (const e of client.threads.joinStream(thread.thread_id, { streamMode: ["lifecycle", "run_modes"], signal: ac.signal })) {
        seen.push(e);
        if (e.event === "metadata" && e.data?.status === "run_done" && ++done === 2) return;
      }
    } catch (err) {
      if (!ac.signal.aborted) throw err;
    }
  })();
  await new Promise((r) => setTimeout(r, 300)); // the stream is open before the runs start
  const runs = [];
  for (const text of ["one", "two"]) {
    const run = await client.runs.create(thread.thread_id, "echo", { input: { messages: text }, streamMode: ["values"] });
    runs.push(run.run_id);
    await client.runs.join(thread.thread_id, run.run_id);
  }
  const timeout = new Promise((_, reject) => setTimeout(() => reject(new Error(`thread stream saw only ${JSON.stringify(seen.map((e) => e.event))}`)), 20000));
  await Promise.race([reader, timeout]);
  ac.abort();
  for (const id of runs) {
    assert.ok(seen.some((e) => e.event === "metadata" && e.data?.run_id === id && e.data?.status === "run_done"), `run_done of ${id}`);
  }
  const finals = seen.filter((e) => e.event === "values").map((e) => texts(e.data).at(-1));
  assert.ok(finals.includes("echo: one") && finals.includes("echo: two"), `values of both runs: ${finals}`);
  console.log("streaming thread scenario passed");
}

async function join(runId, threadId, steps) {
  assert.ok(runId && threadId, "usage: node streaming.mjs join <run_id> <thread_id> [steps]");
  const client = newClient(base);
  const events = [];
  seen.events = events;
  let resumeId = null;
  let second = null;
  for await (const ev of client.runs.joinStream(threadId, runId)) {
    events.push(ev);
    if (!second && events.filter((e) => e.event === "custom").length === 3) {
      resumeId = ev.id;
      second = (async () => {
        const out = [];
        seen.extra.resumed = out;
        for await (const e of newClient(base).runs.joinStream(threadId, runId, { lastEventId: resumeId })) out.push(e);
        return out;
      })().then((out) => ({ out }), (err) => ({ err }));
    }
  }
  checkWellFormed(events);
  const got = customSteps(events);
  assert.ok(got.length > 0, "no custom events");
  got.forEach((s, i) => assert.ok(i === 0 || s === got[i - 1] + 1, `custom steps not consecutive: ${got}`));
  assert.equal(got.at(-1), steps - 1, "the last custom step");
  const values = events.filter((e) => e.event === "values");
  assert.ok(values.length > 0, "no values events");
  assert.deepEqual(texts(values.at(-1).data), finalMessages, "the last values event");
  const run = await client.runs.get(threadId, runId);
  assert.equal(run.status, "success", "the run's status after the stream");

  assert.ok(second, "fewer than 3 custom events: no second join");
  const { out, err } = await second;
  if (err) throw err;
  seen.events = out;
  checkWellFormed(out);
  const after = seqOf(resumeId);
  assert.deepEqual(out, events.filter((e) => seqOf(e.id) > after),
    `a join with Last-Event-ID ${resumeId} vs the first join's events after it`);
  console.log(JSON.stringify({ firstStep: got[0], events: events.length, first: events[0].event, resumedAfter: resumeId, resumed: out.length }));
  console.log("streaming join scenario passed");
}

const [phase, ...args] = process.argv.slice(2);
try {
  if (phase === "modes") await modes();
  else if (phase === "reconnect") await reconnect();
  else if (phase === "reconnect-shared-id") await reconnectSharedID();
  else if (phase === "join") await join(args[0], args[1], Number(args[2] ?? 30));
  else if (phase === "thread") await threadStream();
  else throw new Error(`unknown phase ${JSON.stringify(phase)}: modes, reconnect or join`);
} catch (err) {
  console.error(err);
  console.error("--- events seen ---");
  for (const e of seen.events) console.error(`${e.id} ${e.event} ${JSON.stringify(e.data)?.slice(0, 400)}`);
  if (Object.keys(seen.extra).length) console.error("--- extra ---\n" + JSON.stringify(seen.extra, null, 1));
  process.exit(1);
}
