// A2A 1.0 scenario: the newest official A2A JS client (@a2a-js/sdk 1.x, installed as
// @a2a-js/sdk-1) with its default ClientFactory talks to jetgraph's assistants over A2A 1.0:
// the card it picks the 1.0 JSON-RPC interface from, SendMessage, SendStreamingMessage,
// GetTask, ListTasks, SubscribeToTask (refused in the stream), CancelTask, and interrupts (the
// agent graph's dynamic one and the weather graph's static breakpoint): the input-required
// status says what is asked, and the next message on the task continues it.
//
//   node a2a_v1.mjs        (the server URL comes from JETGRAPH_URL)
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { Role, TaskState } from "@a2a-js/sdk-1";
import { ClientFactory } from "@a2a-js/sdk-1/client";

const base = process.env.JETGRAPH_URL;
const factory = new ClientFactory();

// The SDK's request types are complete protobuf messages: every field is given.
const textPart = (value) => ({ content: { $case: "text", value }, metadata: undefined, filename: "", mediaType: "" });
const dataPart = (value) => ({ content: { $case: "data", value }, metadata: undefined, filename: "", mediaType: "" });
const send = (parts, extra = {}, configuration = undefined) => ({
  tenant: "",
  message: {
    messageId: randomUUID(), contextId: "", taskId: "", role: Role.ROLE_USER, parts,
    metadata: undefined, extensions: [], referenceTaskIds: [], ...extra,
  },
  configuration,
  metadata: undefined,
});
const taskQuery = (id) => ({ tenant: "", id, historyLength: undefined });
const text = (parts) => (parts ?? []).filter((p) => p.content?.$case === "text").map((p) => p.content.value).join("");
const stateName = (s) => Object.keys(TaskState).find((k) => TaskState[k] === s);

// collect drains a stream; shape names its events.
async function collect(stream) {
  const events = [];
  for await (const ev of stream) events.push(ev.payload);
  return events;
}
const shape = (events) =>
  events
    .map((e) => (e.$case === "artifactUpdate" ? `${e.$case}:${e.value.artifact.name}` : `${e.$case}:${stateName(e.value.status.state)}`))
    .join(" ");

// The card: the client asks for 1.0 and picks the 1.0 JSON-RPC interface.
const card = await (await fetch(`${base}/a2a/echo/.well-known/agent-card.json`, { headers: { "A2A-Version": "1.0" } })).json();
assert.deepEqual(card.supportedInterfaces.map((i) => `${i.protocolBinding} ${i.protocolVersion}`), ["JSONRPC 1.0", "JSONRPC 0.3"]);
assert.equal(card.supportedInterfaces[0].url, `${base}/a2a/echo`);
assert.equal(card.protocolVersion, undefined);
const echo = await factory.createFromUrl(`${base}/a2a/echo/`);
assert.equal(echo.protocolVersion, "1.0");

// SendMessage: a completed task whose artifact is the answer.
const first = await echo.sendMessage(send([textPart("hello")]));
assert.equal(first.status.state, TaskState.TASK_STATE_COMPLETED, JSON.stringify(first.status));
assert.equal(text(first.artifacts[0].parts), "echo: hello");
assert.equal(first.history[0].role, Role.ROLE_USER);
assert.equal(first.history[1].role, Role.ROLE_AGENT);

// GetTask, and a second task in the same context.
const got = await echo.getTask(taskQuery(first.id));
assert.equal(got.id, first.id);
assert.equal(text(got.artifacts[0].parts), "echo: hello");
const second = await echo.sendMessage(send([textPart("again")], { contextId: first.contextId }));
assert.equal(second.contextId, first.contextId);

// SendStreamingMessage: task, working, the artifact, the final status.
const streamed = await collect(echo.sendMessageStream(send([textPart("stream me")])));
assert.equal(shape(streamed), "task:TASK_STATE_SUBMITTED statusUpdate:TASK_STATE_WORKING artifactUpdate:Assistant Response statusUpdate:TASK_STATE_COMPLETED");
assert.equal(text(streamed[2].value.artifact.parts), "echo: stream me");

// ListTasks: the context's tasks, the most recently updated first; a state filter.
const listQuery = (q) => ({ tenant: "", contextId: "", status: TaskState.TASK_STATE_UNSPECIFIED, pageSize: undefined, pageToken: "",
  historyLength: undefined, statusTimestampAfter: undefined, includeArtifacts: undefined, ...q });
const inContext = await echo.listTasks(listQuery({ contextId: first.contextId }));
assert.deepEqual(inContext.tasks.map((t) => t.id), [second.id, first.id]);
assert.equal(inContext.nextPageToken, "");
const completed = await echo.listTasks(listQuery({ status: TaskState.TASK_STATE_COMPLETED, pageSize: 2 }));
assert.equal(completed.tasks.length, 2);
assert.equal(completed.totalSize, 3);
assert.notEqual(completed.nextPageToken, "");

// SubscribeToTask is refused in the event stream the client reads: unsupported operation.
await assert.rejects(collect(echo.resubscribeTask({ tenant: "", id: first.id })), (err) => {
  assert.equal(err.cause?.name, "UnsupportedOperationError", String(err));
  return true;
});

// A dynamic interrupt (agent): input-required, whose status message carries the interrupt's
// value; the next message on the task resumes it, and the task goes on under its id.
const agent = await factory.createFromUrl(`${base}/a2a/agent/`);
const asked = await collect(agent.sendMessageStream(send([textPart("hi"), dataPart({ interrupt: true })])));
assert.equal(shape(asked), "task:TASK_STATE_SUBMITTED statusUpdate:TASK_STATE_WORKING artifactUpdate:Interrupt statusUpdate:TASK_STATE_INPUT_REQUIRED");
assert.equal(text(asked[3].value.status.message.parts), "i want to interrupt");
const askedID = asked[0].value.id;
assert.equal((await agent.getTask(taskQuery(askedID))).status.state, TaskState.TASK_STATE_INPUT_REQUIRED);
const resumed = await agent.sendMessage(send([textPart("yes, go on")], { taskId: askedID }));
assert.equal(resumed.id, askedID);
assert.equal(resumed.status.state, TaskState.TASK_STATE_COMPLETED, JSON.stringify(resumed.status));
// An ended task takes no more messages.
await assert.rejects(agent.sendMessage(send([textPart("more")], { taskId: askedID })), { name: "UnsupportedOperationError" });

// A static breakpoint (weather stops before its weather_node): input-required, saying where it
// paused; the next message on the task continues past it.
const weather = await factory.createFromUrl(`${base}/a2a/weather/`);
const paused = await weather.sendMessage(send([textPart("what is the weather in SF?")]));
assert.equal(paused.status.state, TaskState.TASK_STATE_INPUT_REQUIRED, JSON.stringify(paused.status));
assert.match(text(paused.status.message.parts), /weather_node/);
const sunny = await weather.sendMessage(send([textPart("go on")], { taskId: paused.id, contextId: paused.contextId }));
assert.equal(sunny.id, paused.id);
assert.equal(sunny.status.state, TaskState.TASK_STATE_COMPLETED);
assert.match(text(sunny.artifacts[0].parts), /sunny/);

// CancelTask: a long task is cancelled; an ended one cannot be; an unknown one is not found.
const slow = await agent.sendMessage(send([textPart("take your time"), dataPart({ sleep: 60 })], {},
  { acceptedOutputModes: [], taskPushNotificationConfig: undefined, historyLength: undefined, returnImmediately: true }));
assert.ok([TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING].includes(slow.status.state), stateName(slow.status.state));
const cancelled = await agent.cancelTask({ tenant: "", id: slow.id, metadata: undefined });
assert.equal(cancelled.status.state, TaskState.TASK_STATE_CANCELED);
await assert.rejects(agent.cancelTask({ tenant: "", id: resumed.id, metadata: undefined }), { name: "TaskNotCancelableError" });
await assert.rejects(echo.getTask(taskQuery(randomUUID())), { name: "TaskNotFoundError" });

// Validation: a message without parts is refused with invalid params, naming parts.
await assert.rejects(echo.sendMessage(send([])), /parts/);

console.log("a2a 1.0 scenario passed");
