// The official JS SDK against a jetgraph that authenticates: no credential is a 401, an API key
// (apiKey) and a JWT (defaultHeaders) are users that a hosted Python graph sees, and a streamed
// run goes with the token too.
//
// Run by TestAuthSDKs; JETGRAPH_URL names the server, AUTH_KEY an API key, AUTH_TOKEN a JWT.
import assert from "node:assert/strict";
import { Client } from "@langchain/langgraph-sdk";

const apiUrl = process.env.JETGRAPH_URL;
const { AUTH_KEY: key, AUTH_TOKEN: token } = process.env;
assert.ok(apiUrl && key && token, "JETGRAPH_URL, AUTH_KEY and AUTH_TOKEN must be set");
const callerOptions = { maxRetries: 0 };

const anonymous = new Client({ apiUrl, apiKey: null, callerOptions });
await assert.rejects(anonymous.threads.search(), (e) => e.status === 401, "no credential: 401");

const keyed = new Client({ apiUrl, apiKey: key, callerOptions });
let out = await keyed.runs.wait(null, "whoami", { input: {} });
assert.equal(out.user_id, "default", `the key's user: ${JSON.stringify(out)}`);

const ada = new Client({ apiUrl, apiKey: null, defaultHeaders: { Authorization: `Bearer ${token}` }, callerOptions });
const thread = await ada.threads.create();
out = await ada.runs.wait(thread.thread_id, "whoami", { input: {} });
assert.equal(out.user_id, "ada", `the token's user: ${JSON.stringify(out)}`);
assert.equal(out.display_name, "Ada L.");
assert.deepEqual(out.leaked, []);

const events = [];
for await (const part of ada.runs.stream(thread.thread_id, "whoami", { input: {}, streamMode: "values" })) {
  events.push(part.event);
}
assert.ok(events.includes("values"), `streamed with a token: ${events}`);
console.log("ok");
