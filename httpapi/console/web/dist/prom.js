// The Prometheus text format (what GET /metrics answers) read into samples, and what the Overview
// charts need from a series of scrapes: sums over label filters, rates between two scrapes,
// quantiles of a histogram's buckets. Pure: no DOM, so `node --test` checks it.
function parseValue(s) {
    switch (s) {
        case "+Inf":
        case "Inf":
            return Infinity;
        case "-Inf":
            return -Infinity;
        case "NaN":
            return NaN;
    }
    const v = Number(s);
    if (s === "" || Number.isNaN(v))
        throw new Error(`not a number: ${JSON.stringify(s)}`);
    return v;
}
/** parseLabels reads `a="x",b="y\"z"` from i (just after "{") and returns them and the index after "}". */
function parseLabels(line, i) {
    const labels = {};
    for (;;) {
        while (line[i] === " " || line[i] === ",")
            i++;
        if (line[i] === "}")
            return [labels, i + 1];
        const eq = line.indexOf("=", i);
        if (eq < 0 || line[eq + 1] !== '"')
            throw new Error(`bad label at ${i}`);
        const name = line.slice(i, eq).trim();
        let v = "";
        let j = eq + 2;
        for (; j < line.length && line[j] !== '"'; j++) {
            if (line[j] === "\\") {
                j++;
                const c = line[j];
                v += c === "n" ? "\n" : (c ?? "");
            }
            else
                v += line[j];
        }
        if (j >= line.length)
            throw new Error("unterminated label value");
        labels[name] = v;
        i = j + 1;
    }
}
/**
 * parseProm reads the text exposition format: comments and blank lines skipped, a sample per line
 * (`name{labels} value [timestamp]`). A malformed line throws, naming its number.
 */
export function parseProm(text) {
    const out = [];
    const lines = text.split("\n");
    for (let n = 0; n < lines.length; n++) {
        const line = (lines[n] ?? "").trim();
        if (line === "" || line.startsWith("#"))
            continue;
        try {
            const m = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line);
            if (!m)
                throw new Error("no metric name");
            const name = m[0];
            let i = name.length;
            let labels = {};
            if (line[i] === "{")
                [labels, i] = parseLabels(line, i + 1);
            const rest = line.slice(i).trim().split(/\s+/);
            out.push({ name, labels, value: parseValue(rest[0] ?? "") });
        }
        catch (err) {
            throw new Error(`metrics line ${n + 1}: ${err.message}`);
        }
    }
    return out;
}
function matches(s, f) {
    if (!f)
        return true;
    for (const [k, want] of Object.entries(f)) {
        const v = s.labels[k] ?? "";
        if (typeof want === "string" ? v !== want : !want(v))
            return false;
    }
    return true;
}
/** sum adds the samples of name whose labels match; null when there is none (not exported). */
export function sum(samples, name, filter) {
    let total = null;
    for (const s of samples)
        if (s.name === name && matches(s, filter))
            total = (total ?? 0) + s.value;
    return total;
}
/** rate is the per-second increase of a counter between two scrapes dt seconds apart (a reset counts from 0). */
export function rate(prev, cur, dtSeconds) {
    if (prev === null || cur === null || dtSeconds <= 0)
        return null;
    return (cur >= prev ? cur - prev : cur) / dtSeconds;
}
/** Buckets of a histogram: cumulative counts by upper bound ("le"), summed over matching series. */
export function buckets(samples, name, filter) {
    const out = new Map();
    for (const s of samples) {
        if (s.name !== name + "_bucket" || !matches(s, filter))
            continue;
        const le = parseValue(s.labels["le"] ?? "");
        out.set(le, (out.get(le) ?? 0) + s.value);
    }
    return out;
}
/**
 * quantile estimates the q-quantile (0..1) of the observations between two scrapes of a
 * histogram (prev may be empty: since the start), interpolating linearly within the bucket as
 * Prometheus's histogram_quantile does. null when nothing was observed.
 */
export function quantile(q, cur, prev = new Map()) {
    const bounds = [...cur.keys()].sort((a, b) => a - b);
    const counts = bounds.map((b) => Math.max((cur.get(b) ?? 0) - (prev.get(b) ?? 0), 0));
    const total = counts[counts.length - 1] ?? 0;
    if (total <= 0)
        return null;
    const rank = q * total;
    let lower = 0;
    let below = 0;
    for (let i = 0; i < bounds.length; i++) {
        const upper = bounds[i] ?? 0;
        const c = counts[i] ?? 0;
        if (c >= rank) {
            if (upper === Infinity)
                return lower; // past the last finite bound: its bound is the estimate
            const inBucket = c - below;
            return inBucket <= 0 ? upper : lower + ((upper - lower) * (rank - below)) / inBucket;
        }
        lower = upper;
        below = c;
    }
    return lower;
}
/** Series keeps the points of the last windowMs. */
export class Series {
    windowMs;
    points = [];
    constructor(windowMs) {
        this.windowMs = windowMs;
    }
    /** push adds a point and forgets those older than the window. */
    push(t, v) {
        this.points.push({ t, v });
        while (this.points.length > 0 && (this.points[0]?.t ?? t) < t - this.windowMs)
            this.points.shift();
    }
    /** last is the newest value, or null. */
    last() {
        return this.points[this.points.length - 1]?.v ?? null;
    }
}
/**
 * path draws points as an SVG path in a width x height box: time across the window ending at
 * now, values from 0 to the largest (or 1). Gaps (null) break the line.
 */
export function path(points, now, windowMs, width, height) {
    let max = 0;
    for (const p of points)
        if (p.v !== null && Number.isFinite(p.v))
            max = Math.max(max, p.v);
    const top = max > 0 ? max : 1;
    let d = "";
    let pen = false;
    for (const p of points) {
        if (p.v === null || !Number.isFinite(p.v)) {
            pen = false;
            continue;
        }
        const x = Math.max(0, width - ((now - p.t) / windowMs) * width);
        const y = height - (p.v / top) * height;
        d += `${pen ? "L" : "M"}${x.toFixed(1)},${y.toFixed(1)} `;
        pen = true;
    }
    return { d: d.trim(), max };
}
