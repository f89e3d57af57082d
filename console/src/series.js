// Rates and latency quantiles from successive scrapes of the frontends' /metrics, as Prometheus would compute them
// (rate() over two samples, histogram_quantile() over bucket deltas), for the Platform view's charts.
//
// Behind nginx, each scrape is answered by one of several frontends. So rates are computed per frontend, between two
// scrapes of that same frontend (same `frontend` label and same process_start_time_seconds), and a point adds up
// the latest rate of every frontend seen within `staleS` seconds. A frontend whose process changed (it restarted) or
// one of whose counters went down starts again from its next scrape: no negative rate is ever drawn.

/** The route whose latency is charted: every invocation (the histogram has no app label). */
export const INVOKE_ROUTE = "/app/{app}";
/** Outcomes of sand_frontend_invocations_total counted as errors (as deploy/prometheus/rules.yml does). */
export const ERROR_OUTCOMES = new Set(["error", "timeout"]);

/**
 * Prometheus' histogram_quantile(q, buckets): buckets [{le, count}] cumulative (le may be Infinity). NaN when there
 * is no +Inf bucket, fewer than two buckets, or no observation; the largest finite bound when the rank falls in
 * the +Inf bucket; linear interpolation inside a bucket (the first one starts at 0).
 */
export function histogramQuantile(q, buckets) {
  if (Number.isNaN(q)) return NaN;
  if (q < 0) return -Infinity;
  if (q > 1) return Infinity;
  const merged = new Map();
  for (const b of buckets) merged.set(b.le, (merged.get(b.le) || 0) + b.count);
  const bs = [...merged].map(([le, count]) => ({ le, count })).sort((a, b) => a.le - b.le);
  if (bs.length < 2 || bs[bs.length - 1].le !== Infinity) return NaN;
  for (let i = 1; i < bs.length; i++) if (bs[i].count < bs[i - 1].count) bs[i].count = bs[i - 1].count; // ensureMonotonic
  const total = bs[bs.length - 1].count;
  if (total === 0) return NaN;
  let rank = q * total;
  let b = bs.findIndex((x, i) => i < bs.length - 1 && x.count >= rank);
  if (b < 0) b = bs.length - 1;
  if (b === bs.length - 1) return bs[bs.length - 2].le;
  if (b === 0 && bs[0].le <= 0) return bs[0].le;
  let start = 0;
  let count = bs[b].count;
  if (b > 0) {
    start = bs[b - 1].le;
    count -= bs[b - 1].count;
    rank -= bs[b - 1].count;
  }
  return start + (bs[b].le - start) * (rank / count);
}

/**
 * What one scrape says for the charts: {t (s), frontend, started (process_start_time_seconds or null),
 * apps: Map(app → {total, errors}), buckets: Map(le → cumulative count) of INVOKE_ROUTE (all methods)}.
 * `scrape` is prom.js's parse().
 */
export function snapshot(scrape, t) {
  const apps = new Map();
  const buckets = new Map();
  let frontend = null;
  let started = null;
  for (const s of scrape.samples) {
    if (s.labels.frontend && !frontend) frontend = s.labels.frontend;
    if (s.name === "process_start_time_seconds") started = s.value;
    else if (s.name === "sand_frontend_invocations_total" && s.labels.app !== undefined) {
      const a = apps.get(s.labels.app) || { total: 0, errors: 0 };
      a.total += s.value;
      if (ERROR_OUTCOMES.has(s.labels.outcome)) a.errors += s.value;
      apps.set(s.labels.app, a);
    } else if (s.name === "sand_frontend_request_duration_seconds_bucket" && s.labels.route === INVOKE_ROUTE) {
      const le = s.labels.le === "+Inf" ? Infinity : Number(s.labels.le);
      buckets.set(le, (buckets.get(le) || 0) + s.value);
    }
  }
  return { t, frontend, started, apps, buckets };
}

/**
 * Per frontend: its rates between two of its own scrapes, or a reason to start again. {apps: Map(app → {rps, eps}),
 * buckets: Map(le → observations in the interval)} or {restart: "why"}. An application absent before (its series
 * is made at its first invocation) counts from 0.
 */
export function between(prev, cur) {
  if (prev.frontend !== cur.frontend) return { restart: `another frontend (${cur.frontend})` };
  if (prev.started !== null && cur.started !== null && prev.started !== cur.started) return { restart: `${cur.frontend} restarted` };
  const dt = cur.t - prev.t;
  if (!(dt > 0)) return { restart: "no time passed" };
  const apps = new Map();
  for (const [app, c] of cur.apps) {
    const p = prev.apps.get(app) || { total: 0, errors: 0 };
    if (c.total < p.total || c.errors < p.errors) return { restart: `a counter of ${cur.frontend} went down (a restart)` };
    apps.set(app, { rps: (c.total - p.total) / dt, eps: (c.errors - p.errors) / dt });
  }
  for (const app of prev.apps.keys()) if (!cur.apps.has(app)) return { restart: `${cur.frontend} lost the series of ${app} (a restart)` };
  const buckets = new Map();
  for (const [le, n] of cur.buckets) {
    const d = n - (prev.buckets.get(le) || 0);
    if (d < 0) return { restart: `a counter of ${cur.frontend} went down (a restart)` };
    buckets.set(le, d);
  }
  return { apps, buckets };
}

/**
 * Follows the scrapes: add(snapshot) gives the point to draw at snapshot.t, {t, apps: Map(app → {rps, eps}),
 * p50, p99 (seconds, NaN: no invocation), frontends: [ids added up], restarted: a reason or null}, or null when
 * no frontend has two scrapes yet. Keeps, per frontend, its last scrape and its last rates.
 */
export function tracker(staleS = 30) {
  const last = new Map(); // frontend → its last snapshot
  const rates = new Map(); // frontend → {t, apps, buckets}
  return {
    add(snap) {
      let restarted = null;
      const prev = last.get(snap.frontend);
      last.set(snap.frontend, snap);
      if (prev) {
        const r = between(prev, snap);
        if (r.restart) {
          restarted = r.restart;
          rates.delete(snap.frontend);
        } else {
          rates.set(snap.frontend, { t: snap.t, ...r });
        }
      }
      for (const [f, s] of last) {
        if (snap.t - s.t > staleS) {
          last.delete(f);
          rates.delete(f);
        }
      }
      if (rates.size === 0) return restarted ? { t: snap.t, apps: new Map(), p50: NaN, p99: NaN, frontends: [], restarted } : null;
      const apps = new Map();
      const buckets = new Map();
      for (const r of rates.values()) {
        for (const [app, x] of r.apps) {
          const a = apps.get(app) || { rps: 0, eps: 0 };
          apps.set(app, { rps: a.rps + x.rps, eps: a.eps + x.eps });
        }
        for (const [le, n] of r.buckets) buckets.set(le, (buckets.get(le) || 0) + n);
      }
      const bs = [...buckets].map(([le, count]) => ({ le, count }));
      return {
        t: snap.t,
        apps,
        p50: histogramQuantile(0.5, bs),
        p99: histogramQuantile(0.99, bs),
        frontends: [...rates.keys()].sort(),
        restarted,
      };
    },
  };
}

/** The `n` applications with the most requests over `points`, most first (ties by name). */
export function topApps(points, n = 8) {
  const sum = new Map();
  for (const p of points) for (const [app, x] of p.apps) sum.set(app, (sum.get(app) || 0) + x.rps);
  // an application with no request in the window is not charted: a page of flat lines hides the busy ones
  return [...sum]
    .filter(([, rps]) => rps > 0)
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, n)
    .map(([app]) => app);
}
