// Following an application's logs (GET /api/v1/apps/{app}/logs?since=&limit=): the newest `limit` executions that
// started at or after `since`, oldest first, each with at most a page of its lines (the rest from its `logs_next` on,
// GET /api/v1/executions/{id}/logs?after=). A poll reads again from a minute before the newest start it saw, so a
// running execution's later lines come in; the lines already shown are known by execution id and line index (an
// execution's lines are answered oldest first, so its first n lines stay its first n). Pure logic: tested by
// console/test/livelogs.test.mjs.

export const SEEN_MAX = 5000; // executions remembered; the oldest are forgotten first
export const MARGIN_MS = 60_000; // how far before the newest start a poll reads again
export const KEEP_MS = 120_000; // an execution started this long before the next `since` is never answered again

/**
 * One page read: seen (Map execution id -> {shown, started, cut}) is updated. Answers {lines, cut, since, full,
 * oldest}: the new lines [{execution_id, index, ...line}], the executions newly known to have more lines than the page
 * carries (logs_next), the next poll's `since`, whether the page was full (older executions after the previous
 * `since` were not answered: they started before `oldest`, epoch ms).
 */
export function readPage(seen, executions, since, { limit = 50, max = SEEN_MAX, margin = MARGIN_MS, keep = KEEP_MS } = {}) {
  const lines = [];
  const cut = [];
  let newest = since;
  let oldest = null;
  for (const x of executions || []) {
    if (!x || !x.execution_id) continue;
    const id = String(x.execution_id);
    const t = x.started ? Date.parse(x.started) : NaN;
    const started = Number.isFinite(t) ? t : since;
    const s = seen.get(id) || { shown: 0, started, cut: false };
    seen.delete(id); // set again below: the Map's order is the order of the last reading, the oldest first out
    const logs = Array.isArray(x.logs) ? x.logs : [];
    for (let i = s.shown; i < logs.length; i++) lines.push({ ...logs[i], execution_id: id, index: i });
    s.shown = Math.max(s.shown, logs.length);
    if (x.logs_next && !s.cut) {
      s.cut = true;
      cut.push(id);
    }
    seen.set(id, s);
    newest = Math.max(newest, started);
    oldest = oldest === null ? started : Math.min(oldest, started);
  }
  // a full page moves on to what follows it, or a burst of more than a page a minute would be read again and again
  const full = (executions || []).length >= limit;
  const next = full ? newest : Math.max(since, newest - margin);
  for (const [k, s] of seen) if (s.started < next - keep) seen.delete(k);
  while (seen.size > max) seen.delete(seen.keys().next().value);
  return { lines, cut, since: next, full, oldest };
}

/** The executions list's query for those a full page left out: started at or after since, before oldest. */
export function skippedQuery(since, oldest) {
  return new URLSearchParams({ since: String(since), until: String(oldest), limit: "100" }).toString();
}

/** How many of the executions listed (skippedQuery's page) were never read: those a previous read showed are not. */
export function skippedCount(seen, executions) {
  return (executions || []).filter((x) => x && !seen.has(String(x.execution_id))).length;
}

/** What a full page says on the page: n executions (of the executions list's page; more: it had a next) skipped. */
export function skippedText(n, more) {
  if (n === null || n === undefined) return "more executions started than a page holds: some were skipped ahead";
  if (n === 0) return null;
  return `${n}${more ? " or more" : ""} execution${n === 1 && !more ? "" : "s"} skipped ahead (more started than a page holds): open them from Executions`;
}
