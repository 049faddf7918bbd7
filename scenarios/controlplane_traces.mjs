// Control-plane scenario, tracing part: the official langsmith client, given a tenant's API key
// of the control plane, reads the traces of that tenant's deployment at the control plane's
// /tracing (the project named after the deployment, where its processes forward their runs);
// another tenant's key does not find that project.
//
//   node controlplane_traces.mjs <project> <tenant_key> <other_tenant_key>
import assert from "node:assert/strict";
import { Client } from "langsmith";

const [project, key, otherKey] = process.argv.slice(2);
const apiUrl = `${process.env.JETGRAPH_URL}/tracing`;

const client = new Client({ apiUrl, apiKey: key, autoBatchTracing: false });
const found = await client.readProject({ projectName: project });
assert.equal(found.name, project);
const runs = [];
for await (const run of client.listRuns({ projectName: project, isRoot: true })) {
  runs.push(run);
}
assert.ok(runs.length > 0, `no root run in project ${project}`);
assert.ok(runs.every((r) => r.session_id === found.id), "a run of another project");

const other = new Client({ apiUrl, apiKey: otherKey, autoBatchTracing: false });
await assert.rejects(other.readProject({ projectName: project }), `another tenant's key found project ${project}`);
console.log(`${runs.length} root runs of ${project} read by the langsmith client`);
console.log("controlplane traces scenario passed");
