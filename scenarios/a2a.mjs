// A2A scenario: the official A2A JS client (@a2a-js/sdk) talks to jetgraph's assistants as
// agents over A2A 0.3: the agent card, message/send, message/stream, tasks/get, tasks/list,
// tasks/resubscribe (refused in the stream), tasks/cancel, interrupts (the agent graph's dynamic
// one and the weather graph's static breakpoint: task state input-required, whose status
// message says what is asked) continued by the next message on the task, and the A2A errors.
//
//   node a2a.mjs           every step below, on the example graphs echo and agent
//
// The server URL comes from JETGRAPH_URL.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { ClientFactory } from "@a2a-js/sdk/client";

const base = process.env.JETGRAPH_URL;
const factory = new ClientFactory();
const text = (parts) => (parts ?? []).filter((p) => p.kind === "text").map((p) => p.text).join("");
const userMessage = (parts, extra = {}) => ({
  message: { kind: "message", messageId: randomUUID(), role: "user", parts, ...extra },
});

// collect drains a stream of events.
async function collect(stream) {
  const events = [];
  for await (const ev of stream) events.push(ev);
  return events;
}

// shape names the events: kind, and the state of tasks and status updates or the artifact name.
const shape = (events) =>
  events.map((e) => (e.kind === "artifact-update" ? `${e.kind}:${e.artifact.name}` : `${e.kind}:${e.status?.state}`)).join(" ");

// The card: fetched from /a2a/{assistant_id}/.well-known/agent-card.json by the client itself.
const echo = await factory.createFromUrl(`${base}/a2a/echo/`) // the card path resolves against the URL: a trailing slash keeps the assistant;
const card = await (await fetch(`${base}/a2a/echo/.well-known/agent-card.json`)).json();
assert.equal(card.name, "echo");
assert.equal(card.url, `${base}/a2a/echo`);
assert.equal(card.capabilities.streaming, true);
assert.equal(card.skills.length, 1);

// message/send on echo: a completed task whose artifact is the answer.
const first = await echo.sendMessage(userMessage([{ kind: "text", text: "hello" }]));
assert.equal(first.kind, "task", JSON.stringify(first));
assert.equal(first.status.state, "completed");
assert.equal(text(first.artifacts[0].parts), "echo: hello");
assert.equal(text(first.status.message.parts), "echo: hello");

// The same context: a second task on the same thread.
const second = await echo.sendMessage(userMessage([{ kind: "text", text: "again" }], { contextId: first.contextId }));
assert.equal(second.contextId, first.contextId);
assert.notEqual(second.id, first.id);
assert.equal(text(second.artifacts[0].parts), "echo: again");

// tasks/get.
const got = await echo.getTask({ id: first.id });
assert.equal(got.id, first.id);
assert.equal(got.status.state, "completed");
assert.equal(text(got.artifacts[0].parts), "echo: hello");
assert.equal(got.history[0].role, "user");
assert.equal(text(got.history[0].parts), "hello");

// message/stream on echo: task, working, the artifact, the final status.
const streamed = await collect(echo.sendMessageStream(userMessage([{ kind: "text", text: "stream me" }])));
assert.equal(shape(streamed), "task:submitted status-update:working artifact-update:Assistant Response status-update:completed");
assert.equal(text(streamed[2].artifact.parts), "echo: stream me");
assert.equal(streamed.at(-1).final, true);

// An interrupt on agent: input-required, announced by an artifact-update of its own; the next
// message on the task resumes the graph.
const agent = await factory.createFromUrl(`${base}/a2a/agent/`);
const asked = await collect(
  agent.sendMessageStream(userMessage([{ kind: "text", text: "hi" }, { kind: "data", data: { interrupt: true } }])),
);
assert.equal(shape(asked), "task:submitted status-update:working artifact-update:Interrupt status-update:input-required");
assert.equal(text(asked[2].artifact.parts), "i want to interrupt");
assert.equal(text(asked[3].status.message.parts), "i want to interrupt");
const interrupted = asked[0];
assert.equal((await agent.getTask({ id: interrupted.id })).status.state, "input-required");
const resumed = await agent.sendMessage(
  userMessage([{ kind: "text", text: "yes, go on" }], { taskId: interrupted.id, contextId: interrupted.contextId }),
);
assert.equal(resumed.id, interrupted.id, "the next message continues the task");
assert.equal(resumed.status.state, "completed", JSON.stringify(resumed.status));
assert.equal(resumed.contextId, interrupted.contextId);
assert.ok(text(resumed.artifacts[0].parts).length > 0);
// An ended task takes no more messages: a new one goes to the context.
await assert.rejects(agent.sendMessage(userMessage([{ kind: "text", text: "more" }], { taskId: interrupted.id })),
  (err) => err.name === "UnsupportedOperationError" && /contextId/.test(err.errorResponse.error.message));

// A static breakpoint (weather stops before its weather_node): input-required, its status
// message saying where the graph paused; the next message on the task continues past it.
const weather = await factory.createFromUrl(`${base}/a2a/weather/`);
const paused = await weather.sendMessage(userMessage([{ kind: "text", text: "what is the weather in SF?" }]));
assert.equal(paused.status.state, "input-required", JSON.stringify(paused.status));
assert.match(text(paused.status.message.parts), /weather_node/);
const sunny = await weather.sendMessage(userMessage([{ kind: "text", text: "go on" }], { taskId: paused.id }));
assert.equal(sunny.id, paused.id);
assert.equal(sunny.status.state, "completed", JSON.stringify(sunny.status));
assert.match(text(sunny.artifacts[0].parts), /sunny/);

// tasks/list: the context's tasks, one per task (the resume is no task of its own).
const listed = await (await fetch(`${base}/a2a/agent`, { method: "POST", headers: { "Content-Type": "application/json" },
  body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tasks/list", params: { contextId: interrupted.contextId } }) })).json();
assert.deepEqual(listed.result.tasks.map((t) => [t.id, t.status.state]), [[interrupted.id, "completed"]]);

// tasks/resubscribe is refused in the event stream the client reads.
await assert.rejects(collect(echo.resubscribeTask({ id: first.id })), (err) => {
  assert.equal(err.cause?.name, "UnsupportedOperationError", String(err));
  return true;
});

// tasks/cancel: a long task is cancelled; an ended one cannot be, and an unknown one is not found.
const slow = await agent.sendMessage({
  ...userMessage([{ kind: "text", text: "take your time" }, { kind: "data", data: { sleep: 60 } }]),
  configuration: { blocking: false },
});
assert.ok(["submitted", "working"].includes(slow.status.state), slow.status.state);
const cancelled = await agent.cancelTask({ id: slow.id });
assert.equal(cancelled.status.state, "canceled");
await assert.rejects(agent.cancelTask({ id: resumed.id }), { name: "TaskNotCancelableError" });
await assert.rejects(agent.cancelTask({ id: first.id }), { name: "TaskNotFoundError" }); // echo's task, not agent's
await assert.rejects(echo.getTask({ id: randomUUID() }), { name: "TaskNotFoundError" });

// Validation: a message without parts is refused with invalid params, naming parts.
await assert.rejects(echo.sendMessage(userMessage([])), /parts/);

console.log("a2a scenario passed");
