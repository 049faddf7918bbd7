// A graph drawn as SVG: a layered layout (longest path from the start along the edges that are
// not back edges), nodes ordered in their layer by their parents' mean position, subgraphs (ids
// "sub:node" with xray) boxed. Every label is a text node of an SVG element.
import { s } from "./dom.js";
const nodeH = 32;
const layerGap = 70;
const colGap = 28;
const pad = 40;
const charW = 7.2;
/** labelOf is a node's name without its subgraphs' prefix. */
function labelOf(n) {
    const d = n.data;
    const name = d && typeof d === "object" && "name" in d ? String(d.name) : typeof d === "string" ? d : n.id;
    const parts = name.split(":");
    return parts[parts.length - 1] ?? name;
}
/** layers assigns each node the length of the longest path to it from the roots, ignoring back edges. */
function layers(nodes, edges) {
    const out = new Map();
    for (const n of nodes)
        out.set(n.id, []);
    for (const e of edges)
        out.get(e.source)?.push(e.target);
    // Back edges found by a depth-first search from __start__ (then any unvisited node).
    const state = new Map(); // 1 on the stack, 2 done
    const back = new Set();
    const visit = (id) => {
        state.set(id, 1);
        for (const t of out.get(id) ?? []) {
            const st = state.get(t);
            if (st === 1)
                back.add(id + "\u0000" + t);
            else if (st === undefined)
                visit(t);
        }
        state.set(id, 2);
    };
    const order = [...nodes].sort((a, b) => (a.id === "__start__" ? -1 : b.id === "__start__" ? 1 : 0));
    for (const n of order)
        if (!state.has(n.id))
            visit(n.id);
    const layer = new Map(nodes.map((n) => [n.id, 0]));
    // Relax along forward edges (a DAG now): at most |nodes| rounds.
    for (let round = 0; round < nodes.length; round++) {
        let changed = false;
        for (const e of edges) {
            if (back.has(e.source + "\u0000" + e.target) || e.source === e.target)
                continue;
            const want = (layer.get(e.source) ?? 0) + 1;
            if ((layer.get(e.target) ?? 0) < want) {
                layer.set(e.target, want);
                changed = true;
            }
        }
        if (!changed)
            break;
    }
    // __end__ goes last.
    const max = Math.max(0, ...[...layer.entries()].filter(([id]) => id !== "__end__").map(([, l]) => l));
    if (layer.has("__end__"))
        layer.set("__end__", max + 1);
    return layer;
}
/** drawGraph lays the graph out and returns it as an SVG element. */
export function drawGraph(g) {
    const layer = layers(g.nodes, g.edges);
    // Each top-level subgraph is a band of its own, right of the root graph's nodes, so that its
    // box holds its nodes only.
    const bandOf = (n) => (n.id.includes(":") ? (n.id.split(":")[0] ?? "") : "");
    const bands = new Map();
    let maxLayer = 0;
    for (const n of g.nodes) {
        const label = labelOf(n);
        const p = { node: n, label, layer: layer.get(n.id) ?? 0, x: 0, y: 0, w: Math.max(60, label.length * charW + 24) };
        maxLayer = Math.max(maxLayer, p.layer);
        const band = bands.get(bandOf(n)) ?? new Map();
        bands.set(bandOf(n), band);
        band.set(p.layer, [...(band.get(p.layer) ?? []), p]);
    }
    const placed = new Map();
    const parents = new Map();
    for (const e of g.edges)
        parents.set(e.target, [...(parents.get(e.target) ?? []), e.source]);
    const bandNames = [...bands.keys()].sort((a, b) => (a === "" ? -1 : b === "" ? 1 : a.localeCompare(b)));
    let left = pad;
    for (const name of bandNames) {
        const band = bands.get(name) ?? new Map();
        const keys = [...band.keys()].sort((a, b) => a - b);
        let bandW = 0;
        for (const l of keys) {
            const row = band.get(l) ?? [];
            // Order by the mean x of the parents already placed.
            const score = (p) => {
                const xs = (parents.get(p.node.id) ?? []).map((id) => placed.get(id)).filter((q) => !!q && q.layer < l).map((q) => q.x);
                return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0;
            };
            row.sort((a, b) => score(a) - score(b) || a.node.id.localeCompare(b.node.id));
            let x = left;
            for (const p of row) {
                p.x = x + p.w / 2;
                p.y = pad + l * (nodeH + layerGap) + nodeH / 2;
                x += p.w + colGap;
                placed.set(p.node.id, p);
            }
            bandW = Math.max(bandW, x - colGap - left);
        }
        // Centre each layer in the band.
        for (const l of keys) {
            const row = band.get(l) ?? [];
            const last = row[row.length - 1];
            const first = row[0];
            if (!last || !first)
                continue;
            const shift = (bandW - (last.x + last.w / 2 - (first.x - first.w / 2))) / 2;
            for (const p of row)
                p.x += shift;
        }
        left += bandW + colGap * 2;
    }
    const width = left - colGap * 2 + pad;
    const keys = Array.from({ length: maxLayer + 1 }, (_, i) => i);
    const height = pad * 2 + keys.length * (nodeH + layerGap) - layerGap;
    const svg = s("svg", {
        class: "graph",
        viewBox: `0 0 ${Math.max(width, 200) + 80} ${Math.max(height, 100)}`,
        width: String(Math.max(width, 200) + 80),
        role: "img",
        "aria-label": `Graph of ${g.nodes.length} nodes and ${g.edges.length} edges`,
    });
    svg.append(s("defs", null, s("marker", { id: "arrow", viewBox: "0 0 10 10", refX: "10", refY: "5", markerWidth: "7", markerHeight: "7", orient: "auto-start-reverse" }, s("path", { d: "M 0 0 L 10 5 L 0 10 z" }))));
    // Subgraph boxes: every prefix "a" or "a:b" of the nodes' ids.
    const clusters = new Map();
    for (const p of placed.values()) {
        const parts = p.node.id.split(":");
        for (let i = 1; i < parts.length; i++) {
            const key = parts.slice(0, i).join(":");
            clusters.set(key, [...(clusters.get(key) ?? []), p]);
        }
    }
    for (const [name, members] of clusters) {
        const depth = name.split(":").length;
        const inset = 22 - depth * 7;
        const x0 = Math.min(...members.map((p) => p.x - p.w / 2)) - inset;
        const x1 = Math.max(...members.map((p) => p.x + p.w / 2)) + inset;
        const y0 = Math.min(...members.map((p) => p.y - nodeH / 2)) - inset - 14;
        const y1 = Math.max(...members.map((p) => p.y + nodeH / 2)) + inset;
        svg.append(s("g", { class: "cluster", "data-subgraph": name }, s("rect", { x: String(x0), y: String(y0), width: String(x1 - x0), height: String(y1 - y0), rx: "8" }), s("text", { x: String(x0 + 6), y: String(y0 + 11) }, name.split(":").pop() ?? name)));
    }
    for (const e of g.edges) {
        const a = placed.get(e.source);
        const b = placed.get(e.target);
        if (!a || !b)
            continue;
        let d;
        let mx;
        let my;
        if (b.layer > a.layer) {
            const y0 = a.y + nodeH / 2;
            const y1 = b.y - nodeH / 2;
            d = `M ${a.x} ${y0} C ${a.x} ${(y0 + y1) / 2}, ${b.x} ${(y0 + y1) / 2}, ${b.x} ${y1}`;
            mx = (a.x + b.x) / 2;
            my = (y0 + y1) / 2;
        }
        else {
            // A back edge (or self loop) goes round the right of both nodes.
            const x0 = a.x + a.w / 2;
            const x1 = b.x + b.w / 2;
            const out = Math.max(x0, x1) + 40;
            d = `M ${x0} ${a.y} C ${out} ${a.y}, ${out} ${b.y}, ${x1} ${b.y}`;
            mx = out - 10;
            my = (a.y + b.y) / 2;
        }
        svg.append(s("path", {
            class: "edge" + (e.conditional ? " conditional" : ""),
            d,
            "marker-end": "url(#arrow)",
            "data-source": e.source,
            "data-target": e.target,
        }));
        if (typeof e.data === "string" && e.data !== "")
            svg.append(s("text", { class: "edge-label", x: String(mx + 4), y: String(my) }, e.data));
    }
    for (const p of placed.values()) {
        const terminal = p.node.id === "__start__" || p.node.id === "__end__";
        const interrupt = p.node.metadata?.["__interrupt"];
        svg.append(s("g", { class: "node" + (terminal ? " terminal" : ""), "data-node": p.node.id }, s("title", null, p.node.id + (interrupt ? ` (interrupt ${String(interrupt)})` : "")), s("rect", { x: String(p.x - p.w / 2), y: String(p.y - nodeH / 2), width: String(p.w), height: String(nodeH), rx: terminal ? "16" : "6" }), s("text", { x: String(p.x), y: String(p.y + 4), "text-anchor": "middle" }, (interrupt ? "‖ " : "") + p.label)));
    }
    return svg;
}
