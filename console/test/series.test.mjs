import assert from "node:assert/strict";
import { test } from "node:test";
import { parse } from "../src/prom.js";
import { between, histogramQuantile, snapshot, topApps, tracker } from "../src/series.js";

const B = (pairs) => pairs.map(([le, count]) => ({ le, count }));

test("histogram_quantile as Prometheus computes it", () => {
  const bs = B([[0.1, 10], [0.2, 20], [Infinity, 20]]);
  assert.equal(histogramQuantile(0.5, bs), 0.1); // the first bucket starts at 0
  assert.ok(Math.abs(histogramQuantile(0.75, bs) - 0.15) < 1e-12); // interpolated inside (0.1, 0.2]
  assert.equal(histogramQuantile(0, bs), 0);
  assert.equal(histogramQuantile(1, bs), 0.2);
  // the rank in the +Inf bucket: the largest finite bound
  assert.equal(histogramQuantile(0.99, B([[0.1, 10], [Infinity, 20]])), 0.1);
  // unsorted input, a bucket that went down (made monotonic), equal bounds added up
  assert.ok(Math.abs(histogramQuantile(0.6, B([[Infinity, 20], [0.2, 10], [0.1, 10], [0.2, 5], [0.15, 8]])) - 0.17) < 1e-12);
  assert.ok(Number.isNaN(histogramQuantile(0.5, B([[0.1, 1], [0.2, 2]])))); // no +Inf bucket
  assert.ok(Number.isNaN(histogramQuantile(0.5, B([[Infinity, 5]])))); // fewer than two buckets
  assert.ok(Number.isNaN(histogramQuantile(0.5, B([[0.1, 0], [Infinity, 0]])))); // no observation
  assert.equal(histogramQuantile(-1, bs), -Infinity);
  assert.equal(histogramQuantile(2, bs), Infinity);
  assert.ok(Number.isNaN(histogramQuantile(NaN, bs)));
  assert.equal(histogramQuantile(0.5, B([[-1, 3], [0, 4], [Infinity, 4]])), -1); // a first bound at or below 0
});

function scrape(frontend, started, counts, buckets = {}) {
  const lines = [
    "# TYPE process_start_time_seconds gauge",
    `process_start_time_seconds{frontend="${frontend}"} ${started}`,
    "# TYPE sand_frontend_invocations_total counter",
  ];
  for (const [app, outcomes] of Object.entries(counts)) {
    for (const [outcome, n] of Object.entries(outcomes)) {
      lines.push(`sand_frontend_invocations_total{account="a",app="${app}",frontend="${frontend}",outcome="${outcome}"} ${n}.0`);
    }
  }
  lines.push("# TYPE sand_frontend_request_duration_seconds histogram");
  for (const [le, n] of Object.entries(buckets)) {
    lines.push(`sand_frontend_request_duration_seconds_bucket{frontend="${frontend}",method="POST",route="/app/{app}",le="${le}"} ${n}`);
    lines.push(`sand_frontend_request_duration_seconds_bucket{frontend="${frontend}",method="GET",route="/api/v1/apps",le="${le}"} 1000`);
  }
  return parse(lines.join("\n"));
}

test("a scrape's snapshot: invocations by application, errors (error, timeout), the invocation route's buckets", () => {
  const s = snapshot(scrape("fe-1", 100, { hello: { ok: 7, error: 2, timeout: 1, async: 3 } }, { 0.1: 4, "+Inf": 9 }), 50);
  assert.equal(s.frontend, "fe-1");
  assert.equal(s.started, 100);
  assert.deepEqual(s.apps.get("hello"), { total: 13, errors: 3 });
  assert.deepEqual([...s.buckets], [[0.1, 4], [Infinity, 9]]); // GET /api/v1/apps is not an invocation
});

test("rates between two scrapes of one frontend; an application new since counts from 0", () => {
  const a = snapshot(scrape("fe-1", 100, { hello: { ok: 10 } }, { 0.1: 1, "+Inf": 2 }), 0);
  const b = snapshot(scrape("fe-1", 100, { hello: { ok: 20, error: 5 }, new: { ok: 5 } }, { 0.1: 11, "+Inf": 12 }), 5);
  const r = between(a, b);
  assert.deepEqual(r.apps.get("hello"), { rps: 3, eps: 1 });
  assert.deepEqual(r.apps.get("new"), { rps: 1, eps: 0 });
  assert.deepEqual([...r.buckets], [[0.1, 10], [Infinity, 10]]);
});

test("a restart: another process start time, or a counter that went down; never a negative rate", () => {
  const a = snapshot(scrape("fe-1", 100, { hello: { ok: 10 } }), 0);
  assert.match(between(a, snapshot(scrape("fe-1", 200, { hello: { ok: 50 } }), 5)).restart, /fe-1 restarted/);
  assert.match(between(a, snapshot(scrape("fe-1", 100, { hello: { ok: 3 } }), 5)).restart, /went down/);
  assert.match(between(a, snapshot(scrape("fe-1", 100, {}), 5)).restart, /lost the series of hello/);
  assert.match(between(a, snapshot(scrape("fe-2", 100, { hello: { ok: 10 } }), 5)).restart, /another frontend/);
  const buckets = between(
    snapshot(scrape("fe-1", 100, {}, { "+Inf": 5 }), 0),
    snapshot(scrape("fe-1", 100, {}, { "+Inf": 4 }), 5),
  );
  assert.match(buckets.restart, /went down/);
});

test("behind nginx: scrapes alternate between frontends; each frontend's rate is its own, the point adds them up", () => {
  const t = tracker(30);
  const at = (time, fe, started, ok, err, inf) =>
    t.add(snapshot(scrape(fe, started, { hello: { ok, error: err } }, { 0.05: Math.floor(inf / 2), "+Inf": inf }), time));
  assert.equal(at(0, "fe-1", 100, 0, 0, 0), null); // nothing to compare with yet
  assert.equal(at(5, "fe-2", 100, 1000, 0, 1000), null); // fe-2's own first scrape: its 1000 are not a rate
  let p = at(10, "fe-1", 100, 20, 10, 40); // fe-1: 30 invocations, 10 of them errors, in 10 s
  assert.deepEqual(p.frontends, ["fe-1"]);
  assert.deepEqual(p.apps.get("hello"), { rps: 3, eps: 1 });
  assert.ok(p.p50 > 0 && p.p50 <= 0.05);
  assert.equal(p.p99, 0.05); // in the +Inf bucket: the largest finite bound
  p = at(15, "fe-2", 100, 1050, 0, 1040); // fe-2: 5/s, no errors
  assert.deepEqual(p.frontends, ["fe-1", "fe-2"]);
  assert.deepEqual(p.apps.get("hello"), { rps: 8, eps: 1 });
  assert.equal(p.restarted, null);
  // fe-1 restarts: its counters start again; it is left out until its next scrape, and nothing goes negative
  p = at(20, "fe-1", 200, 2, 0, 2);
  assert.match(p.restarted, /fe-1 restarted/);
  assert.deepEqual(p.frontends, ["fe-2"]);
  assert.deepEqual(p.apps.get("hello"), { rps: 5, eps: 0 });
  p = at(30, "fe-1", 200, 12, 0, 12);
  assert.deepEqual(p.apps.get("hello"), { rps: 6, eps: 0 }); // fe-1 1/s again, fe-2 still 5/s
  // fe-2 has not answered for over 30 s: dropped
  p = at(50, "fe-1", 200, 32, 0, 32);
  assert.deepEqual(p.frontends, ["fe-1"]);
  assert.deepEqual(p.apps.get("hello"), { rps: 1, eps: 0 });
});

test("a lone frontend that restarts gives a point with no rate (a gap), then rates again", () => {
  const t = tracker();
  const at = (time, started, ok) => t.add(snapshot(scrape("fe-1", started, { hello: { ok } }), time));
  at(0, 100, 50);
  assert.deepEqual(at(5, 100, 60).apps.get("hello"), { rps: 2, eps: 0 });
  const gap = at(10, 300, 1);
  assert.equal(gap.apps.size, 0);
  assert.deepEqual(gap.frontends, []);
  assert.deepEqual(at(15, 300, 11).apps.get("hello"), { rps: 2, eps: 0 });
});

test("the top applications by requests", () => {
  const pt = (o) => ({ apps: new Map(Object.entries(o).map(([k, rps]) => [k, { rps, eps: 0 }])) });
  const points = [pt({ a: 1, b: 5, c: 0 }), pt({ a: 1, b: 0, c: 2, d: 2 })];
  assert.deepEqual(topApps(points, 3), ["b", "a", "c"]); // a, c and d tie: by name
  assert.deepEqual(topApps(points), ["b", "a", "c", "d"]);
  // no request in the window: not charted
  assert.deepEqual(topApps([pt({ idle: 0, busy: 1 }), pt({ idle: 0 })]), ["busy"]);
});
