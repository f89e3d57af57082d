// Requests per minute and error rate of an application over the last minutes, from one page of
// GET /api/v1/apps/{app}/executions?since=<now - window>&limit=100 (newest first; `next` set when more executions
// are in the window than the page holds). Pure logic: tested by console/test/rates.test.mjs.

export const WINDOW_MS = 5 * 60_000;
export const PAGE = 100;

/** The query of the page: the window's start and the largest page (docs/api.md "Listing executions"). */
export function ratesQuery(now = Date.now(), windowMs = WINDOW_MS) {
  return new URLSearchParams({ since: String(now - windowMs), limit: String(PAGE) }).toString();
}

/**
 * One page -> {count, full, perMinute, finished, errors, errorPercent}. full: the page had a `next` (or held a whole
 * page), so the window holds more: count and perMinute are at least those. errors: failed + timeout, over the
 * finished ones (running ones are not counted); errorPercent null when none finished.
 */
export function rates(page, windowMs = WINDOW_MS) {
  const list = (page && Array.isArray(page.executions) && page.executions) || [];
  const full = Boolean(page && page.next) || list.length >= PAGE;
  const finished = list.filter((e) => e && ["succeeded", "failed", "timeout"].includes(e.status)).length;
  const errors = list.filter((e) => e && (e.status === "failed" || e.status === "timeout")).length;
  return {
    count: list.length,
    full,
    perMinute: list.length / (windowMs / 60_000),
    finished,
    errors,
    errorPercent: finished ? (100 * errors) / finished : null,
  };
}

function number(v) {
  if (v === 0) return "0";
  return v < 10 ? String(Math.round(v * 10) / 10) : String(Math.round(v));
}

/** "12", "0.4", or "≥ 20" when the page was full. */
export function perMinuteText(r) {
  return `${r.full ? "≥ " : ""}${number(r.perMinute)}`;
}

/** "3.1 %" (of the finished executions), "—" when none finished; a full page's rate is of its newest ones. */
export function errorsText(r) {
  if (r.errorPercent === null) return "—";
  const p = r.errorPercent;
  const text = `${p > 0 && p < 10 ? (Math.round(p * 10) / 10).toFixed(1) : Math.round(p)} %`;
  return r.full ? `${text} of the newest ${r.count}` : text;
}
