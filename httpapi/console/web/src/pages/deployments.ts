// The Deployments page (the control plane's /v2 API, which needs a control-plane key: the admin
// key or a tenant's): the deployments (#/deployments); a deployment with its active revision and
// custom_url, its revisions, redeploy and delete (#/deployments/<id>); a revision's status
// history and its build and rollout log, followed live while it runs
// (#/deployments/<id>/revisions/<revision_id>).

import { ApiError, api, apiKey } from "../api.js";
import { add, clear, errorBox, fmtTime, go, h, link, mount, pageSignal } from "../dom.js";
import { isFinal, logDelta } from "../logtail.js";

interface Deployment {
  id: string;
  name: string;
  status: string;
  source: string;
  source_config: { repo_url?: string | null; custom_url?: string | null; build_on_push?: boolean | null; listener_id?: string | null };
  source_revision_config: { repo_ref?: string | null; graph_config_path?: string | null; image_uri?: string | null };
  secrets: { name: string; value: string }[];
  created_at: string;
  updated_at: string;
  latest_revision_id: string | null;
  active_revision_id: string | null;
}

interface Revision {
  id: string;
  deployment_id: string;
  created_at: string;
  status: string;
  source_revision_config: { repo_ref?: string | null; repo_commit_sha?: string | null; image_uri?: string | null };
  status_history: { status: string; at: string; note?: string }[];
  failure_reason: string | null;
}

interface ListAnswer<T> {
  resources: T[];
  offset: number;
}

/** statusClass maps a control-plane status onto the console's badge colours. */
function statusClass(st: string): string {
  if (st === "DEPLOYED" || st === "READY") return "success";
  if (st.endsWith("FAILED") || st === "INTERRUPTED") return "error";
  if (st === "SKIPPED" || st === "AWAITING_DELETE") return "interrupted";
  return "running";
}

function badge(st: string): HTMLElement {
  return h("span", { class: `badge ${statusClass(st)}`, "data-status": st }, st);
}

/** keyHint explains a refusal of the /v2 API: it takes a control-plane key only. */
function keyHint(err: unknown): HTMLElement {
  const box = errorBox(err);
  if (err instanceof ApiError && (err.status === 401 || err.status === 403)) {
    box.append(h("p", null, "Deployments need a control-plane key: the admin key (printed on the first start, or JETGRAPH_ADMIN_KEY) or a tenant's (jetgraph keys create). Set it with the API key button."));
  }
  return box;
}

/** render dispatches on the route's params. */
export async function render(root: HTMLElement, params: Record<string, string>): Promise<void> {
  try {
    if (params["deployment_id"]) await deployment(root, params["deployment_id"], params["revision_id"] ?? "");
    else await deployments(root);
  } catch (err) {
    mount(root, h("h1", null, "Deployments"), keyHint(err));
  }
}

async function deployments(root: HTMLElement): Promise<void> {
  const list = await api<ListAnswer<Deployment>>("GET", "/v2/deployments?limit=100&offset=0");
  mount(
    root,
    h("h1", null, "Deployments"),
    list.resources.length === 0
      ? h("p", { class: "muted" }, "No deployment yet. POST /v2/deployments makes one (see the README's Deployments section).")
      : h(
          "table",
          { class: "deployments" },
          h("thead", null, h("tr", null, ["Deployment", "Status", "Source", "Active revision", "URL", "Updated"].map((x) => h("th", null, x)))),
          h(
            "tbody",
            null,
            list.resources.map((d) =>
              h(
                "tr",
                null,
                h("td", null, link(`/deployments/${encodeURIComponent(d.id)}`, d.name)),
                h("td", null, badge(d.status)),
                h("td", { class: "mono" }, d.source_config.repo_url ?? d.source_revision_config.image_uri ?? d.source, d.source_revision_config.repo_ref ? ` @ ${d.source_revision_config.repo_ref}` : ""),
                h("td", { class: "mono" }, d.active_revision_id ? d.active_revision_id.slice(0, 8) : "none"),
                h("td", null, d.source_config.custom_url ? h("span", { class: "mono" }, d.source_config.custom_url) : ""),
                h("td", null, fmtTime(d.updated_at)),
              ),
            ),
          ),
        ),
  );
}

async function deployment(root: HTMLElement, id: string, revisionId: string): Promise<void> {
  const signal = pageSignal();
  const base = `/v2/deployments/${encodeURIComponent(id)}`;
  const [d, revs] = await Promise.all([api<Deployment>("GET", base), api<ListAnswer<Revision>>("GET", `${base}/revisions?limit=100&offset=0`)]);
  const facts = h("dl", { class: "facts" });
  const revList = h("tbody");
  const detail = h("section", { class: "panel revision", "aria-label": "Revision" });
  const status = h("div", { role: "status" });
  const shownRev = revisionId || d.latest_revision_id || "";

  const drawFacts = (d: Deployment): void => {
    clear(facts);
    const row = (k: string, ...v: (Node | string)[]): void => add(facts, h("dt", null, k), h("dd", { "data-fact": k }, ...v));
    row("Status", badge(d.status));
    row("Source", d.source, d.source_config.repo_url ? ` ${d.source_config.repo_url}` : "", d.source_revision_config.image_uri ? ` ${d.source_revision_config.image_uri}` : "");
    if (d.source_revision_config.repo_ref) row("Ref", d.source_revision_config.repo_ref, d.source_config.build_on_push ? " (builds on push)" : "");
    if (d.source_revision_config.graph_config_path) row("Config", d.source_revision_config.graph_config_path);
    // The runtime's URL is shown as text: it is reached with the SDKs and the key, not by a browser.
    row("custom_url", d.source_config.custom_url ? h("span", { class: "mono custom-url" }, d.source_config.custom_url) : "none yet");
    row("Active revision", d.active_revision_id ? link(`/deployments/${encodeURIComponent(d.id)}/revisions/${encodeURIComponent(d.active_revision_id)}`, h("span", { class: "mono" }, d.active_revision_id)) : "none yet");
    row("Secrets", d.secrets.length ? d.secrets.map((s) => s.name).join(", ") : "none");
    row("Created", fmtTime(d.created_at));
  };

  const drawRevisions = (revs: Revision[], active: string | null): void => {
    clear(revList);
    for (const r of revs) {
      revList.append(
        h(
          "tr",
          { class: r.id === shownRev ? "selected" : "" },
          h("td", null, link(`/deployments/${encodeURIComponent(id)}/revisions/${encodeURIComponent(r.id)}`, h("span", { class: "mono" }, r.id.slice(0, 8))), r.id === active ? h("span", { class: "badge success" }, "active") : null),
          h("td", null, badge(r.status)),
          h("td", { class: "mono" }, r.source_revision_config.repo_ref ?? "", r.source_revision_config.repo_commit_sha ? ` ${r.source_revision_config.repo_commit_sha.slice(0, 10)}` : ""),
          h("td", null, fmtTime(r.created_at)),
        ),
      );
    }
  };

  const redeploy = (rid: string): void => {
    if (!confirm(`Roll ${d.name} out at revision ${rid}? Its build is reused.`)) return;
    api<Deployment>("POST", `${base}/revisions/${encodeURIComponent(rid)}/redeploy`)
      .then((nd) => {
        mount(status, h("p", null, "Redeploy requested."));
        drawFacts(nd);
      })
      .catch((err) => mount(status, keyHint(err)));
  };
  const remove = (): void => {
    if (!confirm(`Delete the deployment ${d.name}? Its processes stop and its threads, runs and store are deleted.`)) return;
    api("DELETE", base)
      .then(() => go("/deployments"))
      .catch((err) => mount(status, keyHint(err)));
  };

  mount(
    root,
    h("p", null, link("/deployments", "Deployments"), " / "),
    h("h1", null, d.name),
    facts,
    h(
      "div",
      { class: "row" },
      h("button", { type: "button", id: "delete-deployment", onclick: remove }, "Delete deployment"),
      d.source_config.custom_url ? h("span", { class: "muted" }, "Traces of its runs: project ", link("/traces", d.name)) : null,
    ),
    status,
    h(
      "div",
      { class: "cols" },
      h(
        "section",
        { "aria-label": "Revisions" },
        h("h2", null, "Revisions"),
        h("table", { class: "revisions" }, h("thead", null, h("tr", null, ["Revision", "Status", "Source", "Created"].map((x) => h("th", null, x)))), revList),
      ),
      detail,
    ),
  );
  drawFacts(d);
  drawRevisions(revs.resources, d.active_revision_id);
  if (!shownRev) {
    detail.append(h("p", { class: "muted" }, "No revision yet."));
    return;
  }
  await revision(detail, base, shownRev, d, redeploy, signal);
  // While anything is in flight the list and the facts change: read them again.
  const timer = setInterval(() => {
    Promise.all([api<Deployment>("GET", base), api<ListAnswer<Revision>>("GET", `${base}/revisions?limit=100&offset=0`)])
      .then(([nd, nr]) => {
        if (signal.aborted) return;
        drawFacts(nd);
        drawRevisions(nr.resources, nd.active_revision_id);
      })
      .catch(() => undefined);
  }, 3000);
  signal.addEventListener("abort", () => clearInterval(timer), { once: true });
}

/** revision shows a revision's status history and its log, following both until it is final. */
async function revision(
  box: HTMLElement,
  base: string,
  rid: string,
  d: Deployment,
  redeploy: (rid: string) => void,
  signal: AbortSignal,
): Promise<void> {
  const path = `${base}/revisions/${encodeURIComponent(rid)}`;
  const head = h("div");
  const history = h("tbody");
  const log = h("pre", { class: "live build-log", "aria-label": "Build and rollout log", tabindex: "0", "aria-live": "off" });
  const follow = h("input", { type: "checkbox", id: "follow-log", "aria-label": "Follow the log" });
  follow.checked = true;
  const state = h("span", { class: "muted log-state" });
  mount(
    box,
    head,
    h("h3", null, "Status history"),
    h("table", { class: "history" }, h("thead", null, h("tr", null, ["Status", "At", "Note"].map((x) => h("th", null, x)))), history),
    h("h3", null, "Log"),
    h("div", { class: "row" }, h("label", { class: "inline" }, follow, " Follow"), state),
    log,
  );
  let text = "";
  let last: Revision | null = null;
  const draw = (r: Revision): void => {
    last = r;
    clear(head);
    add(
      head,
      h("h2", null, "Revision ", h("span", { class: "mono" }, r.id), " ", badge(r.status)),
      h(
        "p",
        null,
        r.source_revision_config.repo_ref ? `ref ${r.source_revision_config.repo_ref}` : "",
        r.source_revision_config.repo_commit_sha ? h("span", { class: "mono" }, ` commit ${r.source_revision_config.repo_commit_sha}`) : "",
        r.id === d.active_revision_id ? h("span", { class: "badge success" }, "active") : "",
      ),
      r.failure_reason ? h("pre", { class: "error failure-reason" }, r.failure_reason) : null,
      r.status === "DEPLOYED" || r.status.endsWith("FAILED") || r.status === "INTERRUPTED"
        ? h("button", { type: "button", id: "redeploy", onclick: () => redeploy(r.id) }, "Redeploy this revision")
        : null,
    );
    clear(history);
    for (const c of r.status_history) history.append(h("tr", null, h("td", null, badge(c.status)), h("td", null, fmtTime(c.at)), h("td", null, c.note ?? "")));
  };
  const read = async (): Promise<void> => {
    const [r, now] = await Promise.all([
      api<Revision>("GET", path),
      fetchLog(`${path}/logs`),
    ]);
    if (signal.aborted) return;
    draw(r);
    const dl = logDelta(text, now);
    if (dl.reset) log.textContent = dl.text;
    else if (dl.text) log.append(document.createTextNode(dl.text));
    text = now;
    if (follow.checked) log.scrollTop = log.scrollHeight;
    state.textContent = isFinal(r.status) ? `${r.status}: the build and rollout are done` : `${r.status}: following the log as it is written`;
  };
  await read();
  // The log is appended every second while a step runs: read it every second until the revision
  // is final, then every 5 seconds (its process's output still reaches it).
  let busy = false;
  let tick = 0;
  const timer = setInterval(() => {
    tick++;
    const final = last !== null && isFinal(last.status);
    if (busy || (final && tick % 5 !== 0)) return;
    busy = true;
    read()
      .catch((err) => mount(state, errorBox(err)))
      .finally(() => (busy = false));
  }, 1000);
  signal.addEventListener("abort", () => clearInterval(timer), { once: true });
}

/** fetchLog reads a revision's log: text/plain, so not through api(), with the same key. */
async function fetchLog(path: string): Promise<string> {
  const key = apiKey();
  const res = await fetch(path, { headers: key ? { "X-Api-Key": key, Accept: "text/plain" } : { Accept: "text/plain" } });
  if (!res.ok) throw new ApiError(res.status, res.statusText, `GET ${path}: ${res.status}`);
  return res.text();
}
