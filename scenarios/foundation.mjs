// Foundation scenario: threads, assistants and store through the official
// LangGraph JS SDK, in two phases around a kill -9 of the server.
//
//   node foundation.mjs write           -> prints one JSON line (the acked state)
//   node foundation.mjs verify '<json>' -> asserts the acked state survived
//
// The server URL comes from JETGRAPH_URL.
import assert from "node:assert/strict";
import { createHash, randomUUID } from "node:crypto";
import { Client } from "@langchain/langgraph-sdk";

const apiUrl = process.env.JETGRAPH_URL;
assert.ok(apiUrl, "JETGRAPH_URL must be set");

// No retries: a failing request must fail the scenario, not be papered over.
// apiKey null: never pick up a LangSmith key from the environment.
const client = new Client({ apiUrl, apiKey: null, callerOptions: { maxRetries: 0 } });

const GRAPH_NAMESPACE = "6ba7b821-9dad-11d1-80b4-00c04fd430c8";

// uuidv5 computes an RFC 4122 version 5 UUID of name in namespace ns.
function uuidv5(name, ns) {
  const h = createHash("sha1")
    .update(Buffer.from(ns.replaceAll("-", ""), "hex"))
    .update(name, "utf8")
    .digest();
  h[6] = (h[6] & 0x0f) | 0x50;
  h[8] = (h[8] & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString("hex");
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

// rejectsWith asserts that promise rejects with an SDK HTTP error of the given
// status whose message matches re (if given).
async function rejectsWith(promise, status, re, what) {
  let err;
  try {
    await promise;
  } catch (e) {
    err = e;
  }
  assert.ok(err, `${what}: expected HTTP ${status}, got success`);
  assert.equal(err.status, status, `${what}: ${err.message}`);
  if (re) assert.match(err.message, re, what);
}

const sortedIds = (list, key) => list.map((x) => x[key]).sort();
const sortedNamespaces = (res) => res.namespaces.map((ns) => ns.join("/")).sort();

// readUsersNamespaces lists the store namespaces under ["users"].
async function readUsersNamespaces() {
  return sortedNamespaces(await client.store.listNamespaces({ prefix: ["users"] }));
}

async function writePhase() {
  // ---- threads ----
  const t1 = await client.threads.create({ metadata: { user: "a" } });
  assert.ok(t1.thread_id, "thread_id");
  assert.deepEqual(t1.metadata, { user: "a" });
  assert.equal(t1.status, "idle");

  const t2Id = randomUUID();
  const t2 = await client.threads.create({ threadId: t2Id, ifExists: "raise", metadata: { user: "a", n: 1 } });
  assert.equal(t2.thread_id, t2Id);
  await rejectsWith(
    client.threads.create({ threadId: t2Id, ifExists: "raise" }),
    409, /thread already exists/i, "duplicate thread create",
  );
  const same = await client.threads.create({ threadId: t2Id, ifExists: "do_nothing", metadata: { user: "z" } });
  assert.equal(same.thread_id, t2Id);
  assert.deepEqual(same.metadata, { user: "a", n: 1 }, "do_nothing must return the existing thread");

  assert.deepEqual((await client.threads.get(t1.thread_id)).metadata, { user: "a" });
  const t1u = await client.threads.update(t1.thread_id, { metadata: { k: 2 } });
  assert.deepEqual(t1u.metadata, { user: "a", k: 2 }, "update merges metadata");

  const t3 = await client.threads.create({ metadata: { user: "b" } });
  const doomed = await client.threads.create({ metadata: { user: "a", doomed: true } });
  assert.deepEqual(
    sortedIds(await client.threads.search({ metadata: { user: "a" }, limit: 10 }), "thread_id"),
    [t1.thread_id, t2Id, doomed.thread_id].sort(),
  );
  await client.threads.delete(doomed.thread_id);
  await rejectsWith(client.threads.get(doomed.thread_id), 404, null, "get deleted thread");
  const userA = [t1.thread_id, t2Id].sort();
  assert.deepEqual(sortedIds(await client.threads.search({ metadata: { user: "a" }, limit: 10 }), "thread_id"), userA);
  assert.equal(await client.threads.count({ metadata: { user: "a" } }), 2);

  // ---- assistants ----
  const systemId = uuidv5("echo", GRAPH_NAMESPACE);
  const found = await client.assistants.search({ graphId: "echo" });
  assert.deepEqual(sortedIds(found, "assistant_id"), [systemId], "system assistant of graph echo");
  assert.equal(found[0].graph_id, "echo");
  assert.equal(found[0].metadata.created_by, "system");
  const system = await client.assistants.get("echo");
  assert.equal(system.assistant_id, systemId, "graph id accepted as assistant id");
  assert.deepEqual(await client.assistants.get(systemId), system);

  const a1 = await client.assistants.create({ graphId: "echo", name: "My Echo", metadata: { team: "x" } });
  assert.notEqual(a1.assistant_id, systemId);
  assert.equal(a1.graph_id, "echo");
  assert.equal(a1.name, "My Echo");
  assert.equal(a1.version, 1);
  assert.equal(a1.metadata.team, "x");
  const a2 = await client.assistants.update(a1.assistant_id, { metadata: { v: 2 } });
  assert.equal(a2.assistant_id, a1.assistant_id);
  assert.equal(a2.version, 2);
  assert.equal(a2.metadata.v, 2);
  assert.equal(a2.name, "My Echo", "update keeps the name");
  const versions = await client.assistants.getVersions(a1.assistant_id);
  assert.deepEqual(versions.map((v) => v.version), [2, 1], "versions newest first");
  const latest = await client.assistants.setLatest(a1.assistant_id, 1);
  assert.equal(latest.version, 1);
  assert.deepEqual(latest.metadata, a1.metadata, "setLatest restores version 1");
  assert.deepEqual(
    sortedIds(await client.assistants.search({ name: "my echo" }), "assistant_id"),
    [a1.assistant_id],
    "name search is a case-insensitive substring match",
  );
  assert.equal(await client.assistants.count({ graphId: "echo" }), 2);

  // ---- store ----
  await client.store.putItem(["users", "a"], "prefs", { theme: "dark", n: 3 });
  await client.store.putItem(["users", "b"], "prefs", { theme: "light", n: 1 });
  await client.store.putItem(["users", "a"], "tmp", { n: 5 });
  const prefs = await client.store.getItem(["users", "a"], "prefs");
  assert.deepEqual(prefs.value, { theme: "dark", n: 3 });
  assert.deepEqual(prefs.namespace, ["users", "a"]);
  assert.equal(prefs.key, "prefs");
  await client.store.deleteItem(["users", "a"], "tmp");
  assert.equal(await client.store.getItem(["users", "a"], "tmp"), null, "deleted item reads as null");
  const hits = await client.store.searchItems(["users"], { filter: { n: { $gte: 2 } } });
  assert.deepEqual(hits.items.map((i) => `${i.namespace.join("/")}:${i.key}`), ["users/a:prefs"]);
  assert.deepEqual(await readUsersNamespaces(), ["users/a", "users/b"]);

  // The SDK refuses a dotted label client-side, so also ask the server itself.
  await assert.rejects(client.store.putItem(["bad.label"], "k", { x: 1 }), /periods/);
  const res = await fetch(`${apiUrl}/store/items`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ namespace: ["bad.label"], key: "k", value: { x: 1 } }),
  });
  assert.equal(res.status, 422, `PUT /store/items with a dotted label: ${await res.text()}`);

  // Everything below was acknowledged and must survive a kill -9.
  const acked = {
    threads: await Promise.all([t1.thread_id, t2Id, t3.thread_id].map((id) => client.threads.get(id))),
    deletedThread: doomed.thread_id,
    userAThreads: userA,
    systemAssistant: system,
    assistant: await client.assistants.get(a1.assistant_id),
    versions,
    items: [prefs, await client.store.getItem(["users", "b"], "prefs")],
    deletedItem: { namespace: ["users", "a"], key: "tmp" },
    namespaces: ["users/a", "users/b"],
  };
  assert.deepEqual(acked.threads[0].metadata, { user: "a", k: 2 });
  assert.equal(acked.assistant.version, 1);
  console.log(JSON.stringify(acked));
}

async function verifyPhase(acked) {
  for (const thread of acked.threads) {
    assert.deepEqual(await client.threads.get(thread.thread_id), thread, `thread ${thread.thread_id}`);
  }
  await rejectsWith(client.threads.get(acked.deletedThread), 404, null, "deleted thread after restart");
  assert.deepEqual(
    sortedIds(await client.threads.search({ metadata: { user: "a" }, limit: 10 }), "thread_id"),
    acked.userAThreads,
  );
  assert.equal(await client.threads.count({ metadata: { user: "a" } }), acked.userAThreads.length);

  assert.deepEqual(await client.assistants.get("echo"), acked.systemAssistant);
  const id = acked.assistant.assistant_id;
  assert.deepEqual(await client.assistants.get(id), acked.assistant, "assistant after restart");
  assert.deepEqual(await client.assistants.getVersions(id), acked.versions, "versions after restart");

  for (const item of acked.items) {
    assert.deepEqual(await client.store.getItem(item.namespace, item.key), item, `item ${item.key}`);
  }
  const { namespace, key } = acked.deletedItem;
  assert.equal(await client.store.getItem(namespace, key), null, "deleted item after restart");
  assert.deepEqual(await readUsersNamespaces(), acked.namespaces);
  console.log(JSON.stringify({ verified: true }));
}

const [phase, arg] = process.argv.slice(2);
if (phase === "write") await writePhase();
else if (phase === "verify") await verifyPhase(JSON.parse(arg));
else throw new Error(`usage: node foundation.mjs write | verify <json>`);
