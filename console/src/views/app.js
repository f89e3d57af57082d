// One application: a tab per concern. Overview (status per host, actions, the graph with errors on their nodes,
// workflow and settings), Grains (code in the editor, saved as a new version, update), Run, Executions, Versions and
// aliases, Secrets, Endpoint keys, Triggers, Dead letters, Logs (followed live) and Metrics (small charts).
import { api, enc, getApp } from "../api.js";
import { badge, clear, field, h, link, ms, notice, pretty, table, when } from "../dom.js";
import { editor } from "../editor.js";
import { draw, locate, model } from "../graph.js";
import { go, onLeave } from "../main.js";
import { grainsTab } from "./grains.js";
import { dataTab } from "./data.js";
import { metricsTab } from "./metrics.js";
import { deadLettersTab, keysTab, secretsTab, triggersTab, versionsTab } from "./settings.js";

const TABS = [
  ["overview", "Overview"],
  ["grains", "Grains"],
  ["run", "Run"],
  ["executions", "Executions"],
  ["versions", "Versions & aliases"],
  ["secrets", "Secrets"],
  ["keys", "Endpoint keys"],
  ["triggers", "Triggers"],
  ["dead-letters", "Dead letters"],
  ["data", "Data"],
  ["logs", "Logs"],
  ["metrics", "Metrics"],
];

export async function appView(main, name, tab, rest) {
  const base = `#/apps/${enc(name)}`;
  main.append(
    h("p", { class: "crumbs" }, link("#/apps", "Applications"), " / "),
    h("h1", {}, name),
    h(
      "nav",
      { class: "tabs", "aria-label": "application" },
      h("ul", {}, TABS.map(([t, label]) => h("li", {}, link(`${base}/${t}`, label, { "aria-current": t === tab ? "page" : null, id: `tab-${t}` })))),
    ),
  );
  const body = h("section", { class: "tab", "aria-labelledby": `tab-${tab}` });
  main.append(body);
  const app = await getApp(name);
  const tabs = {
    overview: overviewTab,
    grains: grainsTab,
    run: runTab,
    executions: executionsTab,
    versions: versionsTab,
    secrets: secretsTab,
    keys: keysTab,
    triggers: triggersTab,
    "dead-letters": deadLettersTab,
    data: dataTab,
    logs: logsTab,
    metrics: metricsTab,
  };
  await (tabs[tab] || overviewTab)(body, app, rest);
}

/** Every error the application's state carries: its own and each host's. */
export function appErrors(app) {
  const out = [];
  if (app.error) out.push(app.error);
  for (const x of app.hosts || []) if (x.error && x.error !== app.error) out.push(`${x.host}: ${x.error}`);
  return out;
}

/** The graph of app's workflow with its errors (and extra, e.g. a refused PUT's message) on their nodes. */
export function appGraph(app, extra = [], visited = null) {
  const m = model(app.workflow);
  // one error per node: a host's error repeats the application's
  const seen = new Set();
  const errors = [...extra, ...appErrors(app)]
    .flatMap((msg) => locate(m, msg))
    .filter((e) => !seen.has(e.node) && seen.add(e.node));
  return draw(m, { errors, visited });
}

async function overviewTab(body, app) {
  const name = app.name;
  const msg = h("div", { "aria-live": "polite", id: "app-message" });
  const act = (label, id, f) =>
    h(
      "button",
      {
        type: "button",
        id,
        onclick: async () => {
          msg.replaceChildren();
          try {
            await f();
            go(`#/apps/${enc(name)}/overview`);
          } catch (e) {
            msg.replaceChildren(notice("error", e.message));
          }
        },
      },
      label,
    );
  const graphBox = h("div", { id: "app-graph" }, appGraph(app));
  body.append(
    h(
      "div",
      { class: "summary" },
      h("div", {}, "Status ", h("span", { id: "app-status" }, badge(app.status))),
      h("div", {}, "Version ", h("strong", { id: "app-version" }, String(app.version))),
      h("div", {}, "Id ", h("code", {}, app.id || "—")),
      h(
        "div",
        { class: "actions" },
        act("Deploy", "deploy", () => api("POST", `/api/v1/apps/${enc(name)}/deploy`, { json: {} })),
        act("Undeploy", "undeploy", () => api("POST", `/api/v1/apps/${enc(name)}/undeploy`, { json: {} })),
        act("Delete", "delete", async () => {
          if (!confirm(`Delete ${name}? It must be undeployed; its own grains go with it.`)) return;
          await api("DELETE", `/api/v1/apps/${enc(name)}`);
          go("#/apps");
        }),
        act("Refresh", "refresh", async () => {}),
      ),
    ),
    msg,
    ...(app.error ? [notice("error", app.error)] : []), // DOM append writes a null as "null"
    h("h2", {}, "Hosts"),
    table(
      ["Host", "Status", "Alive", "Updated", "Error"],
      (app.hosts || []).map((x) => [x.host, badge(x.status), x.alive === false ? "no" : "yes", when(x.updated), x.error || ""]),
      { id: "hosts-table" },
    ),
    h("h2", {}, "Workflow"),
    graphBox,
  );
  // workflow and settings, edited together: PUT /api/v1/apps/{app} takes the workflow with a "settings" member
  const doc = { ...app.workflow, settings: app.settings || {} };
  const box = h("div", { id: "workflow-editor" });
  const wfMsg = h("div", { "aria-live": "polite" });
  body.append(h("h2", {}, "Workflow and settings"), box);
  const ed = editor(box, { doc: JSON.stringify(doc, null, 2), language: "json", label: "workflow and settings (JSON)", minLines: 10 });
  body.append(
    h(
      "button",
      {
        type: "button",
        id: "save-workflow",
        onclick: async () => {
          wfMsg.replaceChildren();
          let value;
          try {
            value = JSON.parse(ed.get());
          } catch (e) {
            wfMsg.replaceChildren(notice("error", `not JSON: ${e.message}`));
            return;
          }
          try {
            const saved = await api("PUT", `/api/v1/apps/${enc(name)}`, { json: value });
            wfMsg.replaceChildren(notice("ok", "saved; it takes effect at the next deploy"));
            graphBox.replaceChildren(appGraph(saved));
          } catch (e) {
            wfMsg.replaceChildren(notice("error", e.message));
            graphBox.replaceChildren(appGraph({ ...app, workflow: value }, [e.message]));
          }
        },
      },
      "Save workflow and settings",
    ),
    wfMsg,
  );
  // follow a deploy under way
  // (only while this view is still the one shown: a view left during its calls registers its timer too late)
  if (["deploying", "undeploying"].includes(app.status)) {
    const here = `#/apps/${enc(name)}/overview`;
    const t = setTimeout(() => location.hash === here && go(here), 1500);
    onLeave(() => clearTimeout(t));
  }
}

async function runTab(body, app) {
  const box = h("div", { id: "run-input" });
  const out = h("div", { id: "run-output", "aria-live": "polite" });
  const alias = h("input", { type: "text", id: "run-qualifier", placeholder: "e.g. prod or 3 (empty: the running version)" });
  // a protected endpoint (Endpoint keys): an invoke key, or the signing secret the request is signed with here
  const invokeKey = h("input", { type: "password", id: "run-invoke-key", autocomplete: "off", placeholder: "sik_… (endpoint mode key)" });
  const signing = h("input", { type: "password", id: "run-signing-secret", autocomplete: "off", placeholder: "sss_… (endpoint mode hmac)" });
  body.append(h("h2", {}, "Input (JSON)"), box);
  const ed = editor(box, { doc: "{}", language: "json", label: "input (JSON)", minLines: 6 });
  const run = async (async) => {
    let value;
    try {
      value = ed.get().trim() ? JSON.parse(ed.get()) : {};
    } catch (e) {
      out.replaceChildren(notice("error", `the input is not JSON: ${e.message}`));
      return;
    }
    out.replaceChildren(notice("info", "running…"));
    const target = alias.value.trim() ? `${app.name}@${alias.value.trim()}` : app.name;
    const t0 = performance.now();
    const text = JSON.stringify(value);
    const creds = (payload) => endpointHeaders(invokeKey.value.trim(), signing.value.trim(), payload);
    let r = await api("POST", `/app/${enc(target).replace("%40", "@")}${async ? "?async=1" : ""}`, {
      body: text,
      contentType: "application/json",
      headers: await creds(text),
      raw: true,
      noKey: true,
    });
    let id = r.headers.get("X-Sand-Execution-Id") || (r.data && r.data.execution_id);
    if (async && r.status === 202) {
      out.replaceChildren(notice("info", `accepted: execution ${id}; waiting for its result…`));
      const until = Date.now() + 120_000;
      do {
        await new Promise((res) => setTimeout(res, 400));
        // a poll signs an empty body (docs/api.md, "Protecting an application's endpoint")
        r = await api("GET", `/app/${enc(app.name)}/executions/${enc(id)}`, { headers: await creds(""), raw: true, noKey: true });
      } while (r.status === 202 && Date.now() < until);
    }
    const took = performance.now() - t0;
    out.replaceChildren(
      h(
        "dl",
        { class: "kv" },
        h("dt", {}, "HTTP status"),
        h("dd", { id: "run-status" }, String(r.status)),
        h("dt", {}, "Execution"),
        h("dd", {}, id ? link(`#/executions/${enc(id)}`, id, { id: "run-execution" }) : "—"),
        h("dt", {}, "Took"),
        h("dd", {}, ms(took)),
      ),
      h("h3", {}, "Output"),
      h("pre", { id: "run-result", class: r.status >= 400 ? "err" : "" }, pretty(r.data)),
    );
  };
  body.append(
    field("Alias or version (optional)", alias),
    h("div", { class: "cols" }, field("Invoke key (optional)", invokeKey), field("Signing secret (optional)", signing)),
    h(
      "div",
      { class: "actions" },
      h("button", { type: "button", id: "invoke", onclick: () => run(false) }, "Invoke"),
      h("button", { type: "button", id: "invoke-async", onclick: () => run(true) }, "Invoke asynchronously"),
    ),
    out,
  );
}

/** The headers a protected endpoint asks for: X-Sand-Key, or X-Sand-Timestamp and X-Sand-Signature over "<ts>.<body>". */
export async function endpointHeaders(invokeKey, signingSecret, body) {
  const out = {};
  if (invokeKey) out["X-Sand-Key"] = invokeKey;
  if (signingSecret) {
    // WebCrypto exists only in a secure context: https, or http on this machine (127.0.0.1, localhost)
    if (!globalThis.crypto || !crypto.subtle) throw new Error("signing a request needs the console on https (or on localhost)");
    const ts = String(Math.floor(Date.now() / 1000));
    const te = new TextEncoder();
    const k = await crypto.subtle.importKey("raw", te.encode(signingSecret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    const mac = new Uint8Array(await crypto.subtle.sign("HMAC", k, te.encode(`${ts}.${body}`)));
    out["X-Sand-Timestamp"] = ts;
    out["X-Sand-Signature"] = `sha256=${[...mac].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
  }
  return out;
}

async function executionsTab(body, app) {
  const status = h("select", { id: "exec-status" }, ["", "running", "succeeded", "failed", "timeout"].map((s) => h("option", { value: s }, s || "any")));
  const since = h("select", { id: "exec-since" }, [["1", "last hour"], ["24", "last 24 h"], ["168", "last 7 days"]].map(([v, t]) => h("option", { value: v }, t)));
  since.value = "24";
  const list = h("div", { id: "executions" });
  let cursor = null;
  const rows = [];
  const load = async (more) => {
    const q = new URLSearchParams({ limit: "50", since: String(Date.now() - Number(since.value) * 3600_000) });
    if (status.value) q.set("status", status.value);
    if (more && cursor) q.set("cursor", cursor);
    if (!more) rows.length = 0;
    const page = await api("GET", `/api/v1/apps/${enc(app.name)}/executions?${q}`);
    cursor = page.next;
    for (const e of page.executions) {
      rows.push([
        link(`#/executions/${enc(e.execution_id)}`, e.execution_id, { class: "mono" }),
        badge(e.status),
        when(e.started),
        ms(e.duration_ms),
        e.error ? h("span", { class: "err" }, typeof e.error === "string" ? e.error : pretty(e.error)) : "",
      ]);
    }
    list.replaceChildren(
      table(["Execution", "Status", "Started", "Duration", "Error"], rows, { id: "executions-table" }),
      ...(cursor ? [h("button", { type: "button", id: "exec-more", onclick: () => load(true) }, "More")] : []),
    );
  };
  status.addEventListener("change", () => load(false));
  since.addEventListener("change", () => load(false));
  body.append(h("div", { class: "filters" }, field("Status", status), field("Since", since)), list);
  await load(false);
}

const LOG_LINES_SHOWN = 1000; // the newest lines stay on the page; older ones leave it (and the memory of them)

async function logsTab(body, app) {
  const out = h("div", { class: "logs", id: "live-logs", role: "log", "aria-live": "polite" });
  const state = h("p", { class: "muted" }, "following: new lines every 2 s");
  const seen = new Map(); // line key -> its execution's start: forgotten once that is well behind `since`
  let since = Date.now() - 3600_000;
  let stopped = false;
  const here = location.hash;
  const poll = async () => {
    try {
      const r = await api("GET", `/api/v1/apps/${enc(app.name)}/logs?since=${since}&limit=50`);
      const page = r.executions || [];
      let newest = since;
      for (const x of page) {
        const started = x.started ? Date.parse(x.started) : since;
        for (const l of x.logs || []) {
          const k = `${x.execution_id} ${l.time} ${l.text}`;
          if (seen.has(k)) continue;
          seen.set(k, started);
          out.append(
            h(
              "div",
              { class: `log lv-${String(l.level || "").toLowerCase()}` },
              h("span", { class: "muted" }, when(l.time)),
              " ",
              link(`#/executions/${enc(x.execution_id)}`, x.execution_id.slice(0, 8), { class: "mono" }),
              ` ${l.grain} ${l.level} ${l.text}`,
            ),
          );
        }
        newest = Math.max(newest, started);
      }
      // a minute's margin reads a running execution's later lines again; a full page moves on to what follows it,
      // or a burst of more than a page a minute would be read again and again
      since = page.length >= 50 ? newest : Math.max(since, newest - 60_000);
      for (const [k, t] of seen) if (t < since - 120_000) seen.delete(k);
      while (out.childElementCount > LOG_LINES_SHOWN) out.firstElementChild.remove();
      state.textContent = `following: new lines every 2 s (last read ${new Date().toISOString().slice(11, 19)} UTC)`;
    } catch (e) {
      state.textContent = `could not read the logs: ${e.message}`;
    }
    if (!stopped && location.hash === here) timer = setTimeout(poll, 2000);
  };
  let timer = null;
  onLeave(() => {
    stopped = true;
    clearTimeout(timer);
  });
  body.append(state, out);
  await poll();
}

export { clear };
