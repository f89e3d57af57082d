// One application: a tab per concern. Overview (status per host, actions, the graph with errors on their nodes,
// workflow and settings), Grains (code in the editor, saved as a new version, update), Run, Executions, Versions and
// aliases, Secrets, Endpoint keys, Triggers, Dead letters, Logs (followed live) and Metrics (small charts).
import { api, enc, getApp } from "../api.js";
import { editableDoc } from "../appdoc.js";
import { badge, clear, field, h, link, ms, notice, pretty, table, when } from "../dom.js";
import { editor } from "../editor.js";
import { draw, locate, model } from "../graph.js";
import { readPage, skippedCount, skippedQuery, skippedText } from "../livelogs.js";
import { logLineClass } from "../timeline.js";
import { current, go, onLeave } from "../main.js";
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
  const live = current(); // before the first await: the user may go elsewhere while it runs
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
  if (!live()) return;
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
  // a tab takes current() before its own first await: it is called at once, still this view's
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

const MOVING = ["deploying", "undeploying"];
const FOLLOW_MS = 1500;

async function overviewTab(body, app) {
  const live = current();
  const name = app.name;
  const msg = h("div", { "aria-live": "polite", id: "app-message" });
  // what changes while a deploy goes on, each updated in place (the editor below keeps what is typed, and the focus)
  const status = h("span", { id: "app-status" });
  const version = h("strong", { id: "app-version" });
  const error = h("div", { id: "app-error" });
  const hosts = h("div", { id: "app-hosts" });
  const graphBox = h("div", { id: "app-graph" });
  let shown = app;
  let draft = null; // a workflow the PUT refused: drawn with its error until a save is accepted
  const drawn = { error: undefined, graph: undefined }; // what the error notice and the graph show: redrawn on a change only
  const show = (a) => {
    shown = a;
    status.replaceChildren(badge(a.status));
    version.textContent = String(a.version);
    // an alert is announced when it is put in: only a new error is
    if (drawn.error !== (a.error || "")) error.replaceChildren(...(a.error ? [notice("error", a.error)] : []));
    drawn.error = a.error || "";
    hosts.replaceChildren(
      table(
        ["Host", "Status", "Alive", "Updated", "Error"],
        (a.hosts || []).map((x) => [x.host, badge(x.status), x.alive === false ? "no" : "yes", when(x.updated), x.error || ""]),
        { id: "hosts-table" },
      ),
    );
    const graph = JSON.stringify([draft, a.workflow, appErrors(a)]);
    if (graph !== drawn.graph) graphBox.replaceChildren(draft ? appGraph({ ...a, workflow: draft.workflow }, [draft.message]) : appGraph(a));
    drawn.graph = graph;
  };
  // a deploy under way is followed: the application read again every 1.5 s until it is deployed, failed or
  // undeployed, or the view is left
  let timer = null;
  let unread = false; // the last reading failed (said in msg)
  const stop = () => {
    clearTimeout(timer);
    timer = null;
  };
  onLeave(stop, live);
  const followIt = () => {
    stop();
    if (!live() || !MOVING.includes(shown.status)) return;
    timer = setTimeout(async () => {
      timer = null;
      try {
        const a = await getApp(name);
        if (!live()) return;
        show(a);
        if (unread) msg.replaceChildren();
        unread = false;
      } catch (e) {
        if (!live()) return;
        msg.replaceChildren(notice("error", `could not read ${name}'s state: ${e.message}`));
        unread = true;
      }
      followIt();
    }, FOLLOW_MS);
  };
  const reread = async () => {
    const a = await getApp(name);
    if (!live()) return;
    show(a);
    followIt();
  };
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
          } catch (e) {
            if (live()) msg.replaceChildren(notice("error", e.message));
          }
        },
      },
      label,
    );
  show(app);
  body.append(
    h(
      "div",
      { class: "summary" },
      h("div", {}, "Status ", status),
      h("div", {}, "Version ", version),
      h("div", {}, "Id ", h("code", {}, app.id || "—")),
      h(
        "div",
        { class: "actions" },
        act("Deploy", "deploy", async () => {
          await api("POST", `/api/v1/apps/${enc(name)}/deploy`, { json: {} });
          if (live()) await reread();
        }),
        act("Undeploy", "undeploy", async () => {
          await api("POST", `/api/v1/apps/${enc(name)}/undeploy`, { json: {} });
          if (live()) await reread();
        }),
        act("Delete", "delete", async () => {
          if (!confirm(`Delete ${name}? It must be undeployed; its own grains go with it.`)) return;
          await api("DELETE", `/api/v1/apps/${enc(name)}`);
          if (live()) go("#/apps");
        }),
        act("Refresh", "refresh", reread),
      ),
    ),
    msg,
    error,
    h("h2", {}, "Hosts"),
    hosts,
    h("h2", {}, "Workflow"),
    graphBox,
  );
  // workflow and settings, edited together: PUT /api/v1/apps/{app} takes the workflow with a "settings" member (the
  // GET's never-set request_timeout_s and hosts left out: the PUT would refuse them as they are)
  const box = h("div", { id: "workflow-editor" });
  const wfMsg = h("div", { "aria-live": "polite", id: "workflow-message" });
  body.append(h("h2", {}, "Workflow and settings"), box);
  const ed = editor(box, { doc: JSON.stringify(editableDoc(app), null, 2), language: "json", label: "workflow and settings (JSON)", minLines: 10 });
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
            if (!live()) return;
            draft = null;
            wfMsg.replaceChildren(notice("ok", "saved; it takes effect at the next deploy"));
            show(saved && typeof saved === "object" && saved.workflow ? saved : shown);
          } catch (e) {
            if (!live()) return;
            wfMsg.replaceChildren(notice("error", e.message));
            const { settings: _s, ...workflow } = value && typeof value === "object" ? value : {};
            draft = { workflow, message: e.message };
            show(shown);
          }
        },
      },
      "Save workflow and settings",
    ),
    wfMsg,
  );
  followIt();
}

async function runTab(body, app) {
  const live = current();
  const box = h("div", { id: "run-input" });
  const out = h("div", { id: "run-output", "aria-live": "polite" });
  const alias = h("input", { type: "text", id: "run-qualifier", placeholder: "e.g. prod or 3 (empty: the running version)" });
  // a protected endpoint (Endpoint keys): an invoke key, or the signing secret the request is signed with here
  const invokeKey = h("input", { type: "password", id: "run-invoke-key", autocomplete: "off", placeholder: "sik_… (endpoint mode key)" });
  const signing = h("input", { type: "password", id: "run-signing-secret", autocomplete: "off", placeholder: "sss_… (endpoint mode hmac)" });
  body.append(h("h2", {}, "Input (JSON)"), box);
  const ed = editor(box, { doc: "{}", language: "json", label: "input (JSON)", minLines: 6 });
  const invoke = async (async) => {
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
    if (!live()) return;
    let id = r.headers.get("X-Sand-Execution-Id") || (r.data && r.data.execution_id);
    if (async && r.status === 202) {
      out.replaceChildren(notice("info", `accepted: execution ${id}; waiting for its result…`));
      const until = Date.now() + 120_000;
      do {
        await new Promise((res) => setTimeout(res, 400));
        if (!live()) return;
        // a poll signs an empty body (docs/api.md, "Protecting an application's endpoint")
        r = await api("GET", `/app/${enc(app.name)}/executions/${enc(id)}`, { headers: await creds(""), raw: true, noKey: true });
        if (!live()) return;
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
      ...(async && r.status === 202 ? [notice("error", `execution ${id} was still running after 120 s: see it in Executions`)] : []),
      h("h3", {}, "Output"),
      h("pre", { id: "run-result", class: r.status >= 400 ? "err" : "" }, pretty(r.data)),
    );
  };
  const buttons = [];
  // an error (the network, WebCrypto refusing to sign) is said where the output goes, never "running…" forever
  const run = async (async) => {
    for (const b of buttons) b.disabled = true;
    try {
      await invoke(async);
    } catch (e) {
      if (live()) out.replaceChildren(notice("error", `the invocation failed: ${e && e.message ? e.message : String(e)}`));
    } finally {
      for (const b of buttons) b.disabled = false;
    }
  };
  buttons.push(
    h("button", { type: "button", id: "invoke", onclick: () => run(false) }, "Invoke"),
    h("button", { type: "button", id: "invoke-async", onclick: () => run(true) }, "Invoke asynchronously"),
  );
  body.append(
    field("Alias or version (optional)", alias),
    h("div", { class: "cols" }, field("Invoke key (optional)", invokeKey), field("Signing secret (optional)", signing)),
    h("div", { class: "actions" }, buttons),
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
  const live = current();
  const status = h("select", { id: "exec-status" }, ["", "running", "succeeded", "failed", "timeout"].map((s) => h("option", { value: s }, s || "any")));
  const since = h("select", { id: "exec-since" }, [["1", "last hour"], ["24", "last 24 h"], ["168", "last 7 days"]].map(([v, t]) => h("option", { value: v }, t)));
  since.value = "24";
  const list = h("div", { id: "executions" });
  const said = h("div", { id: "executions-message", "aria-live": "polite" });
  const more = h("button", { type: "button", id: "exec-more", onclick: () => load(true) }, "More");
  // the list shown: the first page's query (its since fixed when it was asked: More goes on with the same one), the
  // next page's cursor, and the rows
  let shown = null;
  let cursor = null;
  const rows = [];
  let loads = 0; // each load is one; an answer to an older one is dropped (a filter changed while More loaded)
  const load = async (next, initial = false) => {
    const mine = ++loads;
    const fresh = !next || !shown;
    const q = fresh ? new URLSearchParams({ limit: "50", since: String(Date.now() - Number(since.value) * 3600_000) }) : new URLSearchParams(shown);
    if (fresh && status.value) q.set("status", status.value);
    const first = q.toString();
    if (!fresh && cursor) q.set("cursor", cursor);
    more.disabled = true;
    said.replaceChildren(notice("info", "loading…"));
    let page;
    try {
      page = await api("GET", `/api/v1/apps/${enc(app.name)}/executions?${q}`);
    } catch (e) {
      if (initial) throw e; // the view's own failure: main.js says it (and signs out on a 401)
      if (mine !== loads || !live()) return;
      said.replaceChildren(notice("error", `could not list the executions: ${e.message}`));
      more.disabled = false;
      return;
    }
    if (mine !== loads || !live()) return;
    if (fresh) {
      shown = first;
      rows.length = 0;
    }
    cursor = page.next;
    for (const e of page.executions || []) {
      rows.push([
        link(`#/executions/${enc(e.execution_id)}`, e.execution_id, { class: "mono" }),
        badge(e.status),
        when(e.started),
        ms(e.duration_ms),
        e.error ? h("span", { class: "err" }, typeof e.error === "string" ? e.error : pretty(e.error)) : "",
      ]);
    }
    more.disabled = false;
    said.replaceChildren();
    list.replaceChildren(table(["Execution", "Status", "Started", "Duration", "Error"], rows, { id: "executions-table" }), ...(cursor ? [more] : []));
  };
  status.addEventListener("change", () => load(false));
  since.addEventListener("change", () => load(false));
  body.append(h("div", { class: "filters" }, field("Status", status), field("Since", since)), said, list);
  await load(false, true);
}

const LOG_LINES_SHOWN = 1000; // the newest lines stay on the page; older ones leave it (and the memory of them)
const LOG_PAGE = 50; // executions per read

async function logsTab(body, app) {
  const live = current(); // before the first await
  const out = h("div", { class: "logs", id: "live-logs", role: "log", "aria-live": "polite" });
  const state = h("p", { class: "muted", id: "live-logs-state" }, "following: new lines every 2 s");
  const skipped = h("div", { id: "live-logs-skipped", "aria-live": "polite" });
  const seen = new Map(); // execution id -> how many of its lines are shown (livelogs.js)
  let since = Date.now() - 3600_000;
  let timer = null;
  const say = (cls, ...parts) => out.append(h("div", { class: cls }, ...parts));
  const poll = async () => {
    try {
      const before = since;
      const r = await api("GET", `/api/v1/apps/${enc(app.name)}/logs?since=${since}&limit=${LOG_PAGE}`);
      if (!live()) return;
      const page = readPage(seen, r.executions, since, { limit: LOG_PAGE });
      since = page.since;
      for (const l of page.lines) {
        const id = l.execution_id;
        say(
          logLineClass(l.level),
          h("span", { class: "muted" }, when(l.time)),
          " ",
          link(`#/executions/${enc(id)}`, id.slice(0, 8), { class: "mono" }),
          ` ${l.grain} ${l.level} ${l.text}`,
        );
      }
      // an execution's lines past the page the logs answer are on its own page
      for (const id of page.cut) say("log lines-cut", "— lines cut: execution ", link(`#/executions/${enc(id)}`, id.slice(0, 8), { class: "mono" }), " has more lines than shown here (all on its page)");
      while (out.childElementCount > LOG_LINES_SHOWN) out.firstElementChild.remove();
      state.textContent = `following: new lines every 2 s (last read ${new Date().toISOString().slice(11, 19)} UTC)`;
      if (page.full) {
        // the page is the newest executions: how many older ones, started since the previous read, it left out
        let text;
        try {
          const x = await api("GET", `/api/v1/apps/${enc(app.name)}/executions?${skippedQuery(before, page.oldest)}`);
          text = skippedText(skippedCount(seen, x.executions), !!x.next);
        } catch {
          text = skippedText(null);
        }
        if (!live()) return;
        if (text) skipped.replaceChildren(notice("info", `${new Date().toISOString().slice(11, 19)} UTC: ${text}`));
      }
    } catch (e) {
      if (!live()) return;
      state.textContent = `could not read the logs: ${e.message}`;
    }
    if (live()) timer = setTimeout(poll, 2000);
  };
  onLeave(() => clearTimeout(timer), live);
  body.append(state, skipped, out);
  await poll();
}

export { clear };
