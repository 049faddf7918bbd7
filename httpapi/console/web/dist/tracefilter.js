// The run filters of the Traces page written in the tracing API's filter language
// (and(...), search(...), has(tags, ...), eq(metadata_key, ...)...), with every value the user
// typed quoted as a string literal of that language, so a value can never change the filter's
// shape. Pure: no DOM, so `node --test` checks it.
/** quote writes s as a string literal of the filter language. */
export function quote(s) {
    // JSON's escapes (\" \\ \n \t \uXXXX) are the language's.
    return JSON.stringify(s);
}
function list(s) {
    return s
        .split(",")
        .map((x) => x.trim())
        .filter((x) => x !== "");
}
/** buildFilter returns the filter for the form, or "" for every run. */
export function buildFilter(f) {
    const parts = [];
    if (f.name?.trim())
        parts.push(`search(name, ${quote(f.name.trim())})`);
    if (f.runType)
        parts.push(`eq(run_type, ${quote(f.runType)})`);
    switch (f.status) {
        case "error":
            parts.push("eq(error, true)");
            break;
        case "success":
        case "pending":
            parts.push(`eq(status, ${quote(f.status)})`);
            break;
    }
    for (const t of list(f.tags ?? ""))
        parts.push(`has(tags, ${quote(t)})`);
    for (const kv of list(f.metadata ?? "")) {
        const eq = kv.indexOf("=");
        if (eq < 0)
            parts.push(`eq(metadata_key, ${quote(kv)})`);
        else {
            const k = kv.slice(0, eq).trim();
            const v = kv.slice(eq + 1).trim();
            parts.push(`and(eq(metadata_key, ${quote(k)}), eq(metadata_value, ${quote(v)}))`);
        }
    }
    if (f.text?.trim())
        parts.push(`search(${quote(f.text.trim())})`);
    if (f.until?.trim())
        parts.push(`lte(start_time, ${quote(f.until.trim())})`);
    if (f.raw?.trim())
        parts.push(f.raw.trim());
    if (parts.length === 0)
        return "";
    return parts.length === 1 ? (parts[0] ?? "") : `and(${parts.join(", ")})`;
}
/** The time windows the form offers: label and milliseconds back from now (0: any time). */
export const sinceChoices = [
    ["Last hour", 3_600_000],
    ["Last 24 hours", 86_400_000],
    ["Last 7 days", 7 * 86_400_000],
    ["Last 30 days", 30 * 86_400_000],
    ["Any time", 0],
];
/** sinceTime is the ISO start of a window ending at now, or "" for any time. */
export function sinceTime(windowMs, now) {
    return windowMs > 0 ? new Date(now - windowMs).toISOString() : "";
}
