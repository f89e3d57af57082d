// The operator's Platform view: the cluster's health as the answering frontend sees it. GET /readyz (ready or not,
// and each check), GET /metrics with the admin key (Cassandra per store, readiness, queue triggers' lag, the build),
// and, while the view is open, /metrics read every 5 s into small charts per application (requests and errors per
// second from sand_frontend_invocations_total) and the invocations' p50/p99 (sand_frontend_request_duration_seconds).
import uPlot from "uplot";
import { api } from "../api.js";
import { badge, h, notice, table, when } from "../dom.js";
import { current, onLeave } from "../main.js";
import { parse, series, value } from "../prom.js";
import { snapshot, topApps, tracker } from "../series.js";

const EVERY_MS = 5000;
const WINDOW_S = 600; // the charts' span: the last 10 minutes
const TOP = 8;

const CHECKS = [
  ["response_topic_polled", "Kafka results listener", "Kafka answered the consumer of this frontend's response topic recently"],
  ["gates_connected", "Host agents' gates", "gates connected (results reach the frontend through them too)"],
  ["cluster_state_answered", "Cassandra: cluster state", "the last call was answered (reported, not required: the API degrades without it)"],
  ["global_data_answered", "Cassandra: global data layer", "the last call was answered (reported, not required)"],
  ["stopping", "Stopping", "the frontend is stopping (a rolling upgrade); it then declines invocations"],
];

const yes = (v) => (v ? "yes" : "no");
const num = (v, d = 2) => (v === null || v === undefined || Number.isNaN(v) ? "—" : Number(v).toFixed(d));

function readyBox(r) {
  if (!r.data || typeof r.data !== "object" || !r.data.checks) {
    return [notice("error", `GET /readyz answered ${r.status}: ${String(r.text || "").slice(0, 200)}`)];
  }
  const c = r.data.checks;
  const ready = r.data.status === "ready";
  return [
    h(
      "p",
      {},
      h("strong", {}, r.data.frontend || "a frontend"),
      " ",
      badge(ready ? "ready" : "not ready"),
      ready ? " takes invocations" : " declines invocations: nginx sends them to another frontend",
      h("span", { class: "muted" }, ` (GET /readyz answered ${r.status})`),
    ),
    table(
      ["Check", "Value", "What it means"],
      CHECKS.map(([k, label, what]) => [
        label,
        h("span", { class: (k === "stopping" ? c[k] === true : c[k] === false) ? "err" : "" }, typeof c[k] === "boolean" ? yes(c[k]) : String(c[k] ?? "—")),
        h("span", { class: "muted" }, what),
      ]),
      { id: "platform-checks" },
    ),
    h("p", { class: "muted" }, "Ready: not stopping, and the Kafka results listener answered or a host agent's gate is connected."),
  ];
}

function storesTable(scrape, nowS) {
  const stores = series(scrape, "sand_cassandra_up").map((x) => x.labels.store);
  return table(
    ["Store", "Up", "Last answered call", "Calls answered / failed"],
    stores.map((store) => {
      const up = value(scrape, "sand_cassandra_up", { store });
      const last = value(scrape, "sand_cassandra_last_success_timestamp_seconds", { store });
      const ago = last === null ? null : Math.max(0, Math.round(nowS - last));
      return [
        h("code", {}, store),
        up === 1 ? badge("up") : badge("down"),
        last === null ? "—" : h("span", { title: when(last * 1000) }, `answered ${ago} s ago`),
        `${num(value(scrape, "sand_cassandra_calls_total", { store, outcome: "ok" }), 0)} / ${num(value(scrape, "sand_cassandra_calls_total", { store, outcome: "error" }), 0)}`,
      ];
    }),
    { id: "platform-stores" },
  );
}

function frontendBox(scrape) {
  const build = series(scrape, "sand_build_info")[0];
  const ready = value(scrape, "sand_frontend_ready");
  const started = value(scrape, "process_start_time_seconds");
  const lags = series(scrape, "sand_frontend_trigger_lag");
  return [
    h(
      "dl",
      { class: "kv" },
      h("dt", {}, "Frontend"),
      h("dd", {}, build ? build.labels.frontend : "—"),
      h("dt", {}, "sand_frontend_ready"),
      h("dd", {}, ready === null ? "—" : ready === 1 ? "1 (takes invocations)" : `${ready} (declines invocations)`),
      h("dt", {}, "Build"),
      h("dd", {}, build ? `${build.labels.component} ${build.labels.version}, Java ${build.labels.java_version}` : "—"),
      h("dt", {}, "Process started"),
      h("dd", {}, started === null ? "—" : when(started * 1000)),
    ),
    h("h3", {}, "Queue triggers' lag (sand_frontend_trigger_lag)"),
    lags.length === 0
      ? h("p", { class: "muted" }, "no queue trigger is consumed by this frontend")
      : table(
          ["Application", "Account", "Trigger", "Records not yet consumed"],
          lags.map((x) => [x.labels.app, x.labels.account || "", x.labels.trigger, num(x.value, 0)]),
          { id: "platform-trigger-lag" },
        ),
  ];
}

// the span drawn: from the first point kept (at most WINDOW_S before the newest) to the newest
let firstT = Date.now() / 1000 - 60;
let lastT = Date.now() / 1000;

/** A small chart: {fig, u, now (its text line)}. */
function chart(title, series_, yMin) {
  const now = h("p", { class: "muted chart-now" });
  const fig = h("figure", { class: "chart" }, h("figcaption", {}, title), now);
  const scales = {
    x: { time: true, range: () => [Math.min(firstT, lastT - 60), lastT] },
    y: { range: (u, min, max) => [0, Math.max(yMin, (max ?? 0) * 1.1)] },
  };
  // uPlot sizes itself through element.style (CSSOM), which the policy allows
  const u = new uPlot({ width: 380, height: 150, scales, series: [{}, ...series_] }, [[], ...series_.map(() => [])], fig);
  fig.insertBefore(u.root, now);
  return { fig, u, now };
}

export async function platformView(main) {
  const live = current();
  const ready = h("div", { id: "platform-ready" }, notice("info", "reading /readyz…"));
  const stores = h("div", { id: "platform-stores-box" }, notice("info", "reading /metrics…"));
  const fe = h("div", { id: "platform-frontend" });
  const status = h("p", { class: "muted", id: "platform-status" });
  const grid = h("div", { class: "charts", id: "platform-charts" });
  main.append(
    h(
      "p",
      { class: "muted" },
      "As the frontend that answered sees the cluster: nginx sends each of these reads to one of the frontends, " +
        "so two reads may come from two frontends. Each section names the one that answered.",
    ),
    h("h2", {}, "Readiness"),
    ready,
    h("h2", {}, "Cassandra, as the frontend sees it"),
    stores,
    h("h2", {}, "The frontend"),
    fe,
    h("h2", {}, "Applications: invocations and latency"),
    h(
      "p",
      { class: "muted" },
      "From the frontends' own counters (sand_frontend_invocations_total and the histogram " +
        "sand_frontend_request_duration_seconds), read every 5 s while this view is open. Each read is answered by one " +
        "frontend, so each frontend's rates are computed between two of its own reads and the charts add up the " +
        "frontends read in the last 30 s; a frontend that restarted (another process start time, or a counter that " +
        "went down) starts again from its next read. Errors are the error and timeout outcomes. The histogram has no " +
        "application label: the latency is that of every invocation (POST /app/{app}) together.",
    ),
    status,
    grid,
    h(
      "p",
      { class: "muted", id: "platform-kafka-lag" },
      "Kafka lag per grain topic (sand_kafka_consumer_lag) is a host agent's metric, on each host's own /metrics, " +
        "which this page cannot reach: see the panel \u201cKafka consumer lag by host and application\u201d of the " +
        "Grafana dashboard deploy/grafana/sand.json.",
    ),
  );

  const track = tracker(30);
  const points = [];
  const charts = new Map(); // app → chart; "" the latency chart
  let restarts = 0;

  const draw = () => {
    const last = points.length ? points[points.length - 1].t : Date.now() / 1000;
    while (points.length && points[0].t < last - WINDOW_S) points.shift();
    lastT = last;
    firstT = points.length ? points[0].t : last;
    const xs = points.map((p) => p.t);
    const apps = topApps(points, TOP);
    if (!charts.has("")) {
      const lines = [{ label: "p50", stroke: "#2563eb" }, { label: "p99", stroke: "#b91c1c" }];
      charts.set("", chart("Invocation latency, every application (ms)", lines, 10));
    }
    const ms = (v) => (Number.isNaN(v) ? null : v * 1000);
    const lat = charts.get("");
    lat.u.setData([xs, points.map((p) => ms(p.p50)), points.map((p) => ms(p.p99))]);
    const lp = points[points.length - 1];
    lat.now.textContent = lp ? `now: p50 ${num(ms(lp.p50), 1)} ms, p99 ${num(ms(lp.p99), 1)} ms` : "";
    for (const [app, c] of charts) {
      if (app !== "" && !apps.includes(app)) {
        c.u.destroy();
        c.fig.remove();
        charts.delete(app);
      }
    }
    const order = [lat.fig];
    for (const app of apps) {
      if (!charts.has(app)) {
        const lines = [{ label: "requests/s", stroke: "#15803d" }, { label: "errors/s", stroke: "#b91c1c" }];
        charts.set(app, chart(`${app}: requests and errors per second`, lines, 1));
      }
      const c = charts.get(app);
      const of = (k) => points.map((p) => (p.frontends.length ? (p.apps.get(app)?.[k] ?? 0) : null));
      c.u.setData([xs, of("rps"), of("eps")]);
      const x = lp && lp.frontends.length ? lp.apps.get(app) || { rps: 0, eps: 0 } : null;
      c.now.textContent = x ? `now: ${num(x.rps)} requests/s, ${num(x.eps)} errors/s` : "now: —";
      order.push(c.fig);
    }
    grid.replaceChildren(...order);
    if (apps.length === 0) grid.append(h("p", { class: "muted" }, "no application invoked through the frontends read so far"));
  };

  const refresh = async () => {
    const [r, m] = await Promise.all([
      api("GET", "/readyz", { raw: true }).catch((e) => ({ status: 0, text: e.message })),
      api("GET", "/metrics", { raw: true }).catch((e) => ({ status: 0, text: e.message })),
    ]);
    if (!live()) return; // the view was left while reading: its charts are destroyed, none is made again
    ready.replaceChildren(...readyBox(r));
    const nowS = Date.now() / 1000;
    if (m.status !== 200) {
      const why = m.data && m.data.error ? m.data.error.message : String(m.text || "").slice(0, 200);
      stores.replaceChildren(notice("error", `GET /metrics answered ${m.status}: ${why}`));
      status.textContent = `last read ${new Date().toISOString().slice(11, 19)} UTC: /metrics answered ${m.status}`;
      return;
    }
    let scrape;
    try {
      scrape = parse(m.text);
    } catch (e) {
      stores.replaceChildren(notice("error", e.message));
      return;
    }
    stores.replaceChildren(storesTable(scrape, nowS));
    fe.replaceChildren(...frontendBox(scrape));
    const snap = snapshot(scrape, nowS);
    const p = track.add(snap);
    if (p) {
      points.push(p);
      if (p.restarted) restarts++;
    }
    const seen = p ? p.frontends.join(", ") || "none yet" : "none yet (a frontend's rate needs two of its reads)";
    status.textContent =
      `last read ${new Date().toISOString().slice(11, 19)} UTC, answered by ${snap.frontend || "?"}; ` +
      `frontends added up: ${seen}` +
      (restarts ? `; ${restarts} restart${restarts === 1 ? "" : "s"} seen${p && p.restarted ? ` (now: ${p.restarted})` : ""}` : "");
    draw();
  };

  let timer = null;
  // leaving stops the reads and destroys every chart drawn (draw() destroys those it drops itself)
  onLeave(() => {
    clearTimeout(timer);
    for (const c of charts.values()) c.u.destroy();
    charts.clear();
  }, live);
  const tick = async () => {
    try {
      await refresh();
    } catch (e) {
      if (live()) status.textContent = `could not read: ${e.message}`;
    }
    if (live()) timer = setTimeout(tick, EVERY_MS);
  };
  await tick();
}
