// Small charts per application, from its executions (GET /api/v1/apps/{app}/executions, the last hour): how long
// each took, and how many ended per minute by outcome. /metrics is the operator's (it names every application), so
// a developer's charts are drawn from the executions the API lists.
import uPlot from "uplot";
import { api, enc } from "../api.js";
import { h, notice } from "../dom.js";
import { current, onLeave } from "../main.js";

async function lastHour(app) {
  const since = Date.now() - 3600_000;
  const out = [];
  let cursor = null;
  for (let i = 0; i < 5; i++) {
    const q = new URLSearchParams({ limit: "100", since: String(since) });
    if (cursor) q.set("cursor", cursor);
    const page = await api("GET", `/api/v1/apps/${enc(app)}/executions?${q}`);
    out.push(...page.executions);
    cursor = page.next;
    if (!cursor) break;
  }
  return out;
}

function chart(title, opts, data, parent) {
  const box = h("figure", { class: "chart" }, h("figcaption", {}, title));
  parent.append(box);
  // the last hour, whatever the points (one point alone would make uPlot span years)
  const now = Date.now() / 1000;
  const scales = { x: { time: true, range: () => [now - 3600, now] }, y: { range: (u, min, max) => [0, Math.max(1, max * 1.1)] } };
  // uPlot sizes itself through element.style (CSSOM), which the policy allows
  return new uPlot({ width: 460, height: 180, scales, ...opts }, data, box);
}

export async function metricsTab(body, app) {
  const live = current(); // before the first await
  const read = await lastHour(app.name);
  if (!live()) return;
  const ex = read.filter((e) => e.started).sort((a, b) => Date.parse(a.started) - Date.parse(b.started));
  if (ex.length === 0) {
    body.append(notice("info", "no executions in the last hour: invoke the application (Run) and come back"));
    return;
  }
  const grid = h("div", { class: "charts", id: "metrics" });
  // a uPlot listens on the window (resize, scroll) and keeps its data: each is destroyed when the view is left
  const charts = [];
  onLeave(() => charts.splice(0).forEach((c) => c.destroy()), live);
  body.append(h("p", { class: "muted" }, `${ex.length} execution${ex.length === 1 ? "" : "s"} in the last hour`), grid);
  const done = ex.filter((e) => e.duration_ms !== null && e.duration_ms !== undefined);
  charts.push(chart(
    "Duration per execution (ms)",
    { series: [{}, { label: "duration ms", stroke: "#2563eb", points: { show: true } }], axes: [{}, { label: "ms" }] },
    [done.map((e) => Date.parse(e.started) / 1000), done.map((e) => e.duration_ms)],
    grid,
  ));
  // p50 and p99 of each minute's durations (nearest rank), as the operator's histogram gives them for all
  const perMinute = new Map();
  for (const e of done) {
    const m = Math.floor(Date.parse(e.started) / 60000) * 60;
    if (!perMinute.has(m)) perMinute.set(m, []);
    perMinute.get(m).push(e.duration_ms);
  }
  const ms = [...perMinute.keys()].sort((a, b) => a - b);
  const rank = (xs, q) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil(q * xs.length) - 1)];
  charts.push(chart(
    "p50 and p99 per minute (ms)",
    { series: [{}, { label: "p50", stroke: "#2563eb" }, { label: "p99", stroke: "#b91c1c" }], axes: [{}, { label: "ms" }] },
    [ms, ms.map((m) => rank(perMinute.get(m), 0.5)), ms.map((m) => rank(perMinute.get(m), 0.99))],
    grid,
  ));
  const minutes = new Map();
  for (const e of ex) {
    const m = Math.floor(Date.parse(e.started) / 60000) * 60;
    if (!minutes.has(m)) minutes.set(m, { succeeded: 0, failed: 0, other: 0 });
    const c = minutes.get(m);
    c[e.status === "succeeded" ? "succeeded" : e.status === "failed" ? "failed" : "other"]++;
  }
  const xs = [...minutes.keys()].sort((a, b) => a - b);
  charts.push(chart(
    "Executions per minute",
    {
      series: [
        {},
        { label: "succeeded", stroke: "#15803d" },
        { label: "failed", stroke: "#b91c1c" },
        { label: "running/timeout", stroke: "#a16207" },
      ],
    },
    [xs, xs.map((x) => minutes.get(x).succeeded), xs.map((x) => minutes.get(x).failed), xs.map((x) => minutes.get(x).other)],
    grid,
  ));
}
