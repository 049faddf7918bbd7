// Semantic store search through the official LangGraph JS SDK: items put with the server's
// default index, with their own fields and with index false; a query ranks by cosine similarity
// of the embedding (`score` on each item), filters and pages apply, unindexed items come last.
// The server runs with the offline local embedding (--store-embed local, the default).
//
//   node store_search.mjs     (the server URL comes from JETGRAPH_URL)
import assert from "node:assert/strict";
import { Client } from "@langchain/langgraph-sdk";

const client = new Client({ apiUrl: process.env.JETGRAPH_URL, apiKey: null, callerOptions: { maxRetries: 0 } });
const ns = ["users", "ada", "memories"];
await client.store.putItem(ns, "food", { text: "Loves Italian pasta and tomato sauce", kind: "preference" });
await client.store.putItem(ns, "sport", { text: "Goes hiking in the mountains on weekends", kind: "habit" });
await client.store.putItem(ns, "music", { text: "Plays the piano every evening", kind: "habit" });
await client.store.putItem(ns, "trip", { title: "Mountain hiking trip in the Alps", body: "packing list" }, { index: ["title"] });
await client.store.putItem(ns, "hidden", { text: "Mountain hiking secrets" }, { index: false });

const { items } = await client.store.searchItems(["users", "ada"], { query: "hiking in the mountains" });
assert.deepEqual(items.map((i) => i.key).slice(0, 2).sort(), ["sport", "trip"], JSON.stringify(items.map((i) => [i.key, i.score])));
for (let i = 1; i < items.length; i++) {
  if (items[i].score !== undefined && items[i].score !== null) assert.ok(items[i - 1].score >= items[i].score, "ranked by score");
}
assert.ok(items[0].score > 0 && items[0].score <= 1, `score is a cosine similarity: ${items[0].score}`);
const last = items[items.length - 1];
assert.equal(last.key, "hidden", "an item put with index false comes last");
assert.ok(last.score === undefined || last.score === null, "without a score");

const habits = await client.store.searchItems(ns, { query: "piano", filter: { kind: "habit" }, limit: 1 });
assert.deepEqual(habits.items.map((i) => i.key), ["music"]);

const page2 = await client.store.searchItems(ns, { query: "pasta", limit: 1, offset: 1 });
assert.equal(page2.items.length, 1);
assert.notEqual(page2.items[0].key, "food", "the best match is on the first page");
console.log("store search scenario passed");
