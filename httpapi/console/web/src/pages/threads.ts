// The Threads page: search threads (status, graph, metadata), and a thread's timeline (its runs,
// each with its super-steps, subgraph steps nested under their task) beside one step in detail.
// A running run is followed live.

import { api, apiResponse, type SseEvent } from "../api.js";
import { add, clear, errorBox, every, fmtTime, go, h, link, mount, pageSignal } from "../dom.js";
import { jsonView } from "../json.js";
import { streamRun } from "../live.js";
import { failedTasks, pendingInterrupts, stepLabel, stepView } from "../step.js";
import type { Run, Snapshot, Thread } from "../threadtypes.js";

const statuses = ["", "idle", "busy", "interrupted", "error"];
const pageSize = 50;
/** historyLimit bounds the checkpoints read per graph (root or subgraph) of a thread. */
const historyLimit = 500;

/** render shows the search, or one thread when the route names it. */
export async function render(root: HTMLElement, params: Record<string, string>): Promise<void> {
  const id = params["thread_id"];
  if (id) await renderThread(root, id);
  else await renderSearch(root, params);
}

function badge(status: string): HTMLElement {
  return h("span", { class: "badge " + status }, status);
}

async function renderSearch(root: HTMLElement, params: Record<string, string>): Promise<void> {
  const status = h("select", { id: "search-status", name: "status" }, statuses.map((s) => h("option", { value: s }, s || "any")));
  status.value = params["status"] ?? "";
  const graph = h("input", { id: "search-graph", name: "graph_id", placeholder: "graph id", value: params["graph_id"] ?? "" });
  const meta = h("input", { id: "search-metadata", name: "metadata", placeholder: '{"user": "ada"}', value: params["metadata"] ?? "", size: 30 });
  const submit = (e: Event): void => {
    e.preventDefault();
    go("/threads", { status: status.value, graph_id: graph.value.trim(), metadata: meta.value.trim() });
  };
  const form = h(
    "form",
    { class: "row", role: "search", onsubmit: submit },
    h("label", null, "Status", status),
    h("label", null, "Graph", graph),
    h("label", null, "Metadata (JSON)", meta),
    h("button", { type: "submit", class: "primary" }, "Search"),
  );
  const results = h("div", { id: "threads-results" });
  mount(root, h("h1", null, "Threads"), form, results);

  const body: Record<string, unknown> = { limit: pageSize, offset: Number(params["offset"] ?? 0) || 0, sort_by: "updated_at", sort_order: "desc" };
  if (status.value) body["status"] = status.value;
  let metadata: Record<string, unknown> = {};
  if (meta.value) {
    try {
      const m: unknown = JSON.parse(meta.value);
      if (!m || typeof m !== "object" || Array.isArray(m)) throw new Error("a JSON object");
      metadata = m as Record<string, unknown>;
    } catch (err) {
      results.append(errorBox("Metadata: " + (err instanceof Error ? err.message : String(err))));
      return;
    }
  }
  if (graph.value.trim()) metadata["graph_id"] = graph.value.trim();
  if (Object.keys(metadata).length) body["metadata"] = metadata;
  const { body: threads, headers } = await apiResponse<Thread[]>("POST", "/threads/search", body);
  const total = headers.get("X-Pagination-Total");
  const offset = Number(body["offset"]);
  add(
    results,
    h("p", { class: "muted" }, `${threads.length} thread(s)` + (total ? ` of ${total}` : "") + (offset ? ` from ${offset}` : "")),
    h(
      "table",
      null,
      h("thead", null, h("tr", null, ["Thread", "Status", "Graph", "Updated", "Metadata"].map((c) => h("th", { scope: "col" }, c)))),
      h(
        "tbody",
        null,
        threads.map((t) =>
          h(
            "tr",
            null,
            h("td", { class: "mono" }, link("/threads/" + encodeURIComponent(t.thread_id), t.thread_id)),
            h("td", null, badge(t.status)),
            h("td", null, String(t.metadata?.["graph_id"] ?? "")),
            h("td", null, fmtTime(t.updated_at)),
            h("td", { class: "mono" }, truncate(JSON.stringify(t.metadata ?? {}), 160)),
          ),
        ),
      ),
    ),
    threads.length === pageSize
      ? h("button", { type: "button", onclick: () => go("/threads", { ...params, offset: String(offset + pageSize) }) }, "Next page")
      : null,
  );
}

function truncate(s: string, n: number): string {
  return s.length > n ? s.slice(0, n - 1) + "…" : s;
}

/** history reads a graph's checkpoints of the thread (ns "" is the root graph), oldest first. */
async function history(threadId: string, ns: string): Promise<Snapshot[]> {
  const body: Record<string, unknown> = { limit: historyLimit };
  if (ns) body["checkpoint"] = { checkpoint_ns: ns };
  const snaps = await api<Snapshot[]>("POST", `/threads/${encodeURIComponent(threadId)}/history`, body);
  return snaps.reverse();
}

/** The Threads page's state for one thread. */
interface ThreadView {
  thread: Thread;
  runs: Run[];
  steps: Snapshot[];
  selected: { snap: Snapshot; list: Snapshot[] } | null;
  following: string;
}

async function renderThread(root: HTMLElement, threadId: string): Promise<void> {
  const head = h("div", { class: "thread-head" });
  const timeline = h("nav", { class: "timeline-box", "aria-label": "Timeline" });
  const detail = h("div", { class: "detail", id: "step-detail" });
  const live = h("section", { class: "panel live-box", id: "live", "aria-label": "Live run", hidden: true });
  mount(root, head, h("div", { class: "cols" }, timeline, h("div", null, live, detail)));
  const enc = encodeURIComponent(threadId);
  const signal = pageSignal();
  const view: ThreadView = { thread: { thread_id: threadId, status: "" }, runs: [], steps: [], selected: null, following: "" };

  /** reload reads the thread again; the detail is drawn again only when redraw (not while a run streams). */
  const reload = async (redraw: boolean): Promise<void> => {
    if (signal.aborted) return; // the user left the thread
    const [thread, runs, steps] = await Promise.all([
      api<Thread>("GET", `/threads/${enc}`),
      api<Run[]>("GET", `/threads/${enc}/runs?limit=100`),
      history(threadId, ""),
    ]);
    Object.assign(view, { thread, runs, steps });
    if (view.selected) {
      const sel = view.selected.snap.checkpoint;
      const same = steps.find((s) => s.checkpoint.checkpoint_id === sel.checkpoint_id);
      if (!sel.checkpoint_ns && same) view.selected = { snap: same, list: steps };
    }
    const last = steps[steps.length - 1];
    if (!view.selected && last) {
      view.selected = { snap: last, list: steps };
      redraw = true;
    }
    drawHead();
    drawTimeline();
    if (redraw || !detail.firstChild) drawDetail();
    const active = runs.find((r) => r.status === "pending" || r.status === "running");
    if (active && view.following === "" && !followed.has(active.run_id)) follow(active.run_id);
  };

  /** load reads the thread again and draws all of it; an error is shown above the timeline. */
  const load = (redraw = true): Promise<void> =>
    reload(redraw).catch((err: unknown) => {
      if (!signal.aborted) head.append(errorBox(err));
    });
  // While a run streams, each new state brings its step into the timeline (at most every 500 ms).
  let pending = false;
  const onLive = (ev: SseEvent): void => {
    if (pending || !ev.event.startsWith("values")) return;
    pending = true;
    setTimeout(() => {
      pending = false;
      void load(false);
    }, 500);
  };

  const startRun = (body: Record<string, unknown>): void => {
    live.hidden = false;
    view.following = "starting";
    void streamRun(live, `/threads/${enc}/runs/stream`, body, onLive).then(() => {
      view.following = "";
      return load();
    });
  };

  const followed = new Set<string>();
  const follow = (runId: string): void => {
    followed.add(runId);
    live.hidden = false;
    view.following = runId;
    void streamRun(live, `/threads/${enc}/runs/${encodeURIComponent(runId)}/stream`, undefined, onLive).then(() => {
      view.following = "";
      return load();
    });
  };

  const drawHead = (): void => {
    const t = view.thread;
    mount(
      head,
      h("p", null, link("/threads", "← Threads")),
      h("h1", null, "Thread ", h("span", { class: "mono" }, t.thread_id), " ", badge(t.status)),
      h(
        "p",
        { class: "muted" },
        `created ${fmtTime(t.created_at)} · updated ${fmtTime(t.updated_at)} · ${view.runs.length} run(s) · ${view.steps.length} step(s)`,
      ),
      jsonView(t.metadata ?? {}, { label: "metadata", open: 0 }),
      h("div", { class: "row" }, h("button", { type: "button", id: "refresh", onclick: () => void load() }, "Refresh")),
    );
  };

  const select = (snap: Snapshot, list: Snapshot[]): void => {
    view.selected = { snap, list };
    drawTimeline();
    drawDetail();
    document.getElementById("step-detail")?.focus();
  };

  const stepButton = (s: Snapshot, list: Snapshot[], latest: boolean): HTMLElement => {
    const sel = view.selected?.snap;
    const pressed =
      sel !== undefined &&
      sel.checkpoint.checkpoint_id === s.checkpoint.checkpoint_id &&
      (sel.checkpoint.checkpoint_ns ?? "") === (s.checkpoint.checkpoint_ns ?? "");
    const marks: string[] = [];
    if (pendingInterrupts(s).length) marks.push("interrupt pending");
    else if (latest && s.next.length && view.thread.status === "interrupted") marks.push("paused before " + s.next.join(", "));
    for (const t of failedTasks(s)) marks.push("error in " + t.name + ": " + truncate(JSON.stringify(t.error), 80));
    return h(
      "button",
      { type: "button", class: "step", "aria-pressed": pressed ? "true" : "false", "data-step": String(s.metadata?.step ?? ""), onclick: () => select(s, list) },
      h("span", null, stepLabel(s)),
      s.next.length ? h("span", { class: "sub" }, " → " + s.next.join(", ")) : null,
      marks.map((m) => h("div", { class: m.startsWith("error") ? "sub error-text" : "sub warn-text" }, m)),
    );
  };

  /** subgraphSteps is a task's subgraph, its steps loaded when opened. */
  const subgraphSteps = (ns: string, name: string): HTMLElement => {
    const d = h("details", { class: "nested" }, h("summary", null, "subgraph " + name));
    let loaded = false;
    d.addEventListener("toggle", () => {
      if (loaded || !d.open) return;
      loaded = true;
      void history(threadId, ns).then(
        (steps) => d.append(stepList(steps, false)),
        (err: unknown) => d.append(errorBox(err)),
      );
    });
    return d;
  };

  const stepList = (steps: Snapshot[], root: boolean): HTMLElement =>
    h(
      "ol",
      { class: "timeline" },
      steps.map((s, i) =>
        h(
          "li",
          null,
          stepButton(s, steps, root && i === steps.length - 1),
          s.tasks.filter((t) => t.checkpoint?.checkpoint_ns).map((t) => subgraphSteps(t.checkpoint?.checkpoint_ns ?? "", t.name)),
        ),
      ),
    );

  const drawTimeline = (): void => {
    clear(timeline);
    timeline.append(h("h2", null, "Timeline"));
    if (view.steps.length >= historyLimit) timeline.append(h("p", { class: "muted" }, `The latest ${historyLimit} steps.`));
    // Consecutive steps of one run form a segment; steps without a run (state updates) their own.
    const segments: { runId: string; steps: Snapshot[] }[] = [];
    for (const s of view.steps) {
      const runId = String(s.metadata?.run_id ?? "");
      const lastSeg = segments[segments.length - 1];
      if (lastSeg && lastSeg.runId === runId) lastSeg.steps.push(s);
      else segments.push({ runId, steps: [s] });
    }
    const runsById = new Map(view.runs.map((r) => [r.run_id, r]));
    const shown = new Set<string>();
    segments.forEach((seg, i) => {
      const run = runsById.get(seg.runId);
      shown.add(seg.runId);
      const last = i === segments.length - 1;
      const steps = stepList(seg.steps, last);
      if (!last) steps.querySelectorAll(".warn-text").forEach((el) => el.textContent?.startsWith("paused") && el.remove());
      timeline.append(
        h(
          "section",
          { class: "run", "aria-label": seg.runId ? "Run " + seg.runId : "State update" },
          h(
            "h3",
            null,
            seg.runId ? "Run " : "State update",
            seg.runId ? h("span", { class: "mono" }, seg.runId) : null,
            " ",
            run ? badge(run.status) : null,
            seg.runId ? [" ", link(`/traces/run/${encodeURIComponent(seg.runId)}`, "Trace")] : null,
          ),
          run ? h("p", { class: "muted" }, fmtTime(run.created_at)) : null,
          steps,
        ),
      );
    });
    for (const r of view.runs) {
      if (shown.has(r.run_id)) continue;
      timeline.append(
        h("section", { class: "run" }, h("h3", null, "Run ", h("span", { class: "mono" }, r.run_id), " ", badge(r.status)), h("p", { class: "muted" }, "No step recorded yet. " + fmtTime(r.created_at))),
      );
    }
    if (view.steps.length === 0 && view.runs.length === 0) timeline.append(h("p", { class: "muted" }, "No runs on this thread yet."));
  };

  const drawDetail = (): void => {
    clear(detail);
    const sel = view.selected;
    if (!sel) {
      detail.append(h("p", { class: "muted" }, "Choose a step."));
      return;
    }
    const idx = sel.list.indexOf(sel.snap);
    const parentId = sel.snap.parent_checkpoint?.checkpoint_id;
    const prev = sel.list.find((s) => s.checkpoint.checkpoint_id === parentId) ?? (idx > 0 ? sel.list[idx - 1] : undefined);
    const rootLatest = !sel.snap.checkpoint.checkpoint_ns && sel.snap === view.steps[view.steps.length - 1];
    const assistantId = String(sel.snap.metadata?.assistant_id ?? view.thread.metadata?.["assistant_id"] ?? view.thread.metadata?.["graph_id"] ?? "");
    detail.setAttribute("tabindex", "-1");
    detail.append(stepView(sel.snap, prev, { threadId, latest: rootLatest, assistantId, run: startRun }));
  };

  await reload(true);
  // A busy thread changes without the console: read it again while it is.
  every(2000, () => {
    if (view.thread.status === "busy" && view.following === "") void load(false);
  });
}
