// The official JS SDK against a Go program with an auth handler of its own (cli.Program's Auth:
// scenarios/examples/go-auth, tokens to users, owners.Rules): no token is a 401, and two users
// each see only their own threads, runs, assistants, crons and store namespace; the other's ids
// are 404s (or null), never their content.
//
// Run by TestGoAuthHandler; JETGRAPH_URL names the server, TOKEN_A and TOKEN_B two users' tokens
// and USER_A and USER_B their identities.
import assert from "node:assert/strict";
import { Client } from "@langchain/langgraph-sdk";

const apiUrl = process.env.JETGRAPH_URL;
const { TOKEN_A, TOKEN_B, USER_A, USER_B } = process.env;
assert.ok(apiUrl && TOKEN_A && TOKEN_B && USER_A && USER_B, "JETGRAPH_URL, TOKEN_A, TOKEN_B, USER_A and USER_B must be set");
const callerOptions = { maxRetries: 0 };
const as = (token) =>
  new Client({ apiUrl, apiKey: null, defaultHeaders: token ? { Authorization: `Bearer ${token}` } : {}, callerOptions });
const notFound = (e) => e.status === 404;

const anonymous = as(null);
await assert.rejects(anonymous.threads.search(), (e) => e.status === 401, "no token: 401");
await assert.rejects(anonymous.assistants.search(), (e) => e.status === 401, "no token: 401");
await assert.rejects(anonymous.store.listNamespaces(), (e) => e.status === 401, "no token: 401");
await assert.rejects(as("not-a-token").threads.search(), (e) => e.status === 401, "an unknown token: 401");

const a = as(TOKEN_A);
const b = as(TOKEN_B);
const input = { messages: [{ role: "user", content: "hi" }] };

// A's things, each recorded as A's.
const thread = await a.threads.create({ metadata: { topic: "js" } });
assert.equal(thread.metadata.owner, USER_A, `the thread's owner: ${JSON.stringify(thread.metadata)}`);
const run = await a.runs.create(thread.thread_id, "echo", { input });
await a.runs.join(thread.thread_id, run.run_id);
const assistant = await a.assistants.create({ graphId: "echo", metadata: { team: "js" } });
assert.equal(assistant.metadata.owner, USER_A, `the assistant's owner: ${JSON.stringify(assistant.metadata)}`);
const cron = await a.crons.createForThread(thread.thread_id, assistant.assistant_id, { schedule: "0 0 1 1 *" });
assert.equal(cron.metadata.owner, USER_A, `the cron's owner: ${JSON.stringify(cron.metadata)}`);
await a.store.putItem(["notes"], "k", { v: USER_A });

// B reaches none of them.
await assert.rejects(b.threads.get(thread.thread_id), notFound, "B gets A's thread");
await assert.rejects(b.threads.getState(thread.thread_id), notFound, "B reads A's thread's state");
await assert.rejects(b.runs.list(thread.thread_id), notFound, "B lists A's runs");
await assert.rejects(b.runs.get(thread.thread_id, run.run_id), notFound, "B gets A's run");
await assert.rejects(b.runs.create(thread.thread_id, "echo", { input }), notFound, "B runs on A's thread");
await assert.rejects(b.assistants.get(assistant.assistant_id), notFound, "B gets A's assistant");
await assert.rejects(b.assistants.update(assistant.assistant_id, { metadata: { owner: USER_B } }), notFound, "B takes A's assistant");
await assert.rejects(b.assistants.getVersions(assistant.assistant_id), notFound, "B lists A's assistant's versions");
await assert.rejects(b.runs.wait(null, assistant.assistant_id, { input }), notFound, "B runs A's assistant");
await assert.rejects(b.crons.delete(cron.cron_id), notFound, "B deletes A's cron");
await assert.rejects(b.crons.update(cron.cron_id, { schedule: "0 0 2 1 *" }), notFound, "B changes A's cron");
await assert.rejects(b.crons.createForThread(thread.thread_id, "echo", { schedule: "0 0 1 1 *" }), notFound, "B's cron on A's thread");
assert.equal(await b.store.getItem(["notes"], "k"), null, "B reads A's item");
assert.equal(await b.store.getItem([USER_A, "notes"], "k"), null, "B reads A's item by its full name");

// B's searches and counts hold only B's own (and the graphs' system assistants).
const bThread = await b.threads.create();
await b.runs.wait(bThread.thread_id, "echo", { input });
assert.deepEqual((await b.threads.search()).map((t) => t.thread_id), [bThread.thread_id], "B's threads");
assert.equal(await b.threads.count(), 1, "B's thread count");
const found = await b.assistants.search({ limit: 100 });
assert.ok(found.every((x) => x.metadata.created_by === "system"), `B's assistants: ${JSON.stringify(found.map((x) => x.metadata))}`);
assert.ok(found.some((x) => x.graph_id === "echo"), "B sees the system assistants");
assert.equal(await b.assistants.count({ metadata: { owner: USER_A } }), 0, "B counts A's assistants");
assert.deepEqual(await b.crons.search(), [], "B's crons");
assert.equal(await b.crons.count(), 0, "B's cron count");
await b.store.putItem(["notes"], "k", { v: USER_B });
assert.deepEqual((await b.store.listNamespaces()).namespaces, [[USER_B, "notes"]], "B's namespaces");
assert.deepEqual((await b.store.searchItems(["notes"])).items.map((i) => i.value), [{ v: USER_B }], "B's items");

// A still has everything, untouched.
assert.deepEqual((await a.threads.search()).map((t) => t.thread_id), [thread.thread_id], "A's threads");
assert.equal((await a.runs.list(thread.thread_id)).length, 1, "A's runs");
assert.equal((await a.assistants.get(assistant.assistant_id)).metadata.owner, USER_A, "A's assistant");
assert.deepEqual((await a.crons.search()).map((c) => [c.cron_id, c.schedule]), [[cron.cron_id, "0 0 1 1 *"]], "A's crons");
assert.deepEqual((await a.store.getItem(["notes"], "k")).value, { v: USER_A }, "A's item");
assert.deepEqual((await a.store.listNamespaces()).namespaces, [[USER_A, "notes"]], "A's namespaces");
await a.crons.delete(cron.cron_id);
console.log("ok");
