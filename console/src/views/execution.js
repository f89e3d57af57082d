// One execution: status, result or error (with its grain and line), the workflow graph with the path it took, and
// the waterfall of its hops with each grain's log lines beside its bar.
import { api, enc, getApp } from "../api.js";
import { badge, h, link, ms, notice, pretty, when } from "../dom.js";
import { errorPlace, rows, waterfall } from "../timeline.js";
import { current } from "../main.js";
import { appGraph } from "./app.js";

async function allLogs(id) {
  const out = [];
  let after = null;
  for (let i = 0; i < 10; i++) {
    const page = await api("GET", `/api/v1/executions/${enc(id)}/logs?limit=1000${after ? `&after=${enc(after)}` : ""}`);
    out.push(...(page.logs || []));
    after = page.next;
    if (!after) break;
  }
  return out;
}

export async function executionView(main, id) {
  const live = current(); // before the first await: the user may go elsewhere while it runs
  const [ex, logs] = await Promise.all([api("GET", `/api/v1/executions/${enc(id)}`), allLogs(id).catch(() => [])]);
  if (!live()) return;
  const app = ex.app ? await getApp(ex.app).catch(() => null) : null;
  if (!live()) return;
  const t = ex.timings || {};
  main.append(
    h("p", { class: "crumbs" }, link("#/apps", "Applications"), " / ", ex.app ? link(`#/apps/${enc(ex.app)}/executions`, ex.app) : "", " / "),
    h("h1", {}, "Execution ", h("code", {}, id)),
    h(
      "dl",
      { class: "kv" },
      h("dt", {}, "Status"),
      h("dd", { id: "exec-status-badge" }, badge(ex.status)),
      h("dt", {}, "Started"),
      h("dd", {}, when(t.started)),
      h("dt", {}, "Duration"),
      h("dd", {}, ms(t.duration_ms)),
      h("dt", {}, "Frontend"),
      h("dd", {}, ex.frontend || "—"),
    ),
  );
  if (ex.error) {
    const where = errorPlace(ex.error, logs);
    main.append(
      h(
        "div",
        { class: "error-box", role: "alert", id: "exec-error" },
        h("strong", {}, typeof ex.error === "object" ? `${ex.error.type || "Error"}: ${ex.error.message || ""}` : String(ex.error)),
        where.grain || where.line
          ? h(
              "p",
              {},
              `in grain ${where.grain || "?"}${where.line ? `, line ${where.line}` : ""} `,
              // to the grain's code in the editor, its cursor on that line
              ex.app && where.grain
                ? link(`#/apps/${enc(ex.app)}/grains/${enc(where.grain)}${where.line ? `/${where.line}` : ""}`, "go to the code", { id: "exec-error-jump" })
                : null,
            )
          : null,
        where.traceback ? h("pre", { id: "exec-traceback" }, where.traceback) : null,
      ),
    );
  } else if (ex.result !== undefined && ex.result !== null) {
    main.append(h("h2", {}, "Result"), h("pre", { id: "exec-result" }, pretty(ex.result)));
  }
  if (app) {
    const visited = new Set(rows(t.hops).map((r) => r.grain).filter(Boolean));
    for (const i of t.instances || []) if (i.grain) visited.add(String(i.grain).replace(/ \[.*\]$/, ""));
    const errs = [];
    if (ex.error && typeof ex.error === "object" && ex.error.grain) errs.push(`grain ${ex.error.grain} failed: ${ex.error.message || ""}`);
    main.append(h("h2", {}, "Path through the workflow"), h("div", { id: "exec-graph" }, appGraph({ ...app, error: null, hosts: [] }, errs, visited)));
  }
  main.append(h("h2", {}, "Timeline"), waterfall(ex, logs));
  const orphan = logs.filter((l) => !rows(t.hops).some((r) => r.grain === l.grain));
  if (orphan.length) {
    main.append(h("h2", {}, "Other log lines"), h("div", { class: "logs" }, orphan.map((l) => h("div", { class: "log" }, `${when(l.time)} ${l.grain} ${l.level} ${l.text}`))));
  }
  if (!t.hops || t.hops.length === 0) main.append(notice("info", "the hops are recorded when the execution ends"));
}
