// The operator's views (the admin key): hosts with their state and use against capacity (cordon, drain, uncordon),
// every account's applications (undeploy), accounts (disable, enable), and the platform's health (platform.js).
import { api, enc } from "../api.js";
import { badge, field, h, link, notice, table, when } from "../dom.js";
import { current, go } from "../main.js";
import { platformView } from "./platform.js";

function tabs(tab) {
  return h(
    "nav",
    { class: "tabs", "aria-label": "operator" },
    h(
      "ul",
      {},
      [["hosts", "Hosts"], ["apps", "All applications"], ["accounts", "Accounts"], ["platform", "Platform"]].map(([t, label]) =>
        h("li", {}, link(`#/admin/${t}`, label, { "aria-current": t === tab ? "page" : null })),
      ),
    ),
  );
}

/**
 * A button that runs f, then shows the view again while it is still shown (live()); errors in msg. ask: a question
 * confirm() puts first, for what cannot be taken back with one click (drain, undeploy).
 */
function act(label, msg, live, f, attrs = {}, ask = null) {
  return h(
    "button",
    {
      type: "button",
      ...attrs,
      onclick: async () => {
        if (ask && !confirm(ask)) return;
        msg.replaceChildren();
        try {
          await f();
          if (live()) go(location.hash);
        } catch (e) {
          if (live()) msg.replaceChildren(notice("error", e.message));
        }
      },
    },
    label,
  );
}

function meter(label, percent) {
  if (percent === null || percent === undefined) return h("span", { class: "muted" }, `${label} —`);
  const m = h("meter", { min: 0, max: 100, low: 70, high: 90, optimum: 0, value: percent, "aria-label": `${label} ${percent}%` });
  return h("span", { class: "use" }, `${label} `, m, ` ${percent}%`);
}

export async function adminView(main, tab) {
  const live = current();
  const msg = h("div", { "aria-live": "polite", id: "admin-message" });
  main.append(h("h1", {}, "Operator"), tabs(tab), msg);
  if (tab === "platform") {
    await platformView(main);
    return;
  }
  if (tab === "apps") {
    const { apps } = await api("GET", "/api/v1/admin/apps");
    if (!live()) return;
    main.append(
      table(
        ["Application", "Owner", "Status", "Version", "Hosts", "Error", ""],
        apps.map((a) => [
          a.name,
          a.owner,
          badge(a.status),
          String(a.version ?? ""),
          (a.hosts || []).map((x) => `${x.host}:${x.status}`).join(" "),
          a.error ? h("span", { class: "err" }, a.error) : "",
          a.status === "undeployed"
            ? ""
            : act(
                "Undeploy",
                msg,
                live,
                () => api("POST", `/api/v1/admin/apps/${enc(a.name)}/undeploy`, { json: {} }),
                { "aria-label": `Undeploy ${a.name}`, dataset: { app: a.name } },
                `Undeploy ${a.name} of ${a.owner}? It stops answering until its owner deploys it again.`,
              ),
        ]),
        { id: "admin-apps-table" },
      ),
    );
    return;
  }
  if (tab === "accounts") {
    const account = h("input", { type: "text", id: "account-name", required: true });
    const reason = h("input", { type: "text", id: "account-reason" });
    const run = (what) => async () => {
      const name = account.value.trim();
      if (what === "disable" && !confirm(`Disable the account ${name}? Its keys stop working and its applications are undeployed.`)) return;
      msg.replaceChildren();
      try {
        const body = what === "disable" && reason.value.trim() ? { reason: reason.value.trim() } : {};
        const r = await api("POST", `/api/v1/admin/accounts/${enc(name)}/${what}`, { json: body });
        if (!live()) return;
        msg.replaceChildren(
          notice(
            "ok",
            r.disabled
              ? `account ${r.account}: disabled${r.reason ? ` (${r.reason})` : ""}; undeployed: ${(r.undeployed || []).join(", ") || "nothing"}`
              : `account ${r.account}: enabled (its applications stay undeployed)`,
          ),
        );
      } catch (e) {
        if (live()) msg.replaceChildren(notice("error", e.message));
      }
    };
    main.append(
      h(
        "form",
        { class: "card", id: "account-form", onsubmit: (ev) => ev.preventDefault() },
        h("h2", {}, "Disable or enable an account"),
        h("p", { class: "muted" }, "A disabled account's keys answer 403 and its applications are undeployed."),
        field("Account", account),
        field("Reason (shown to its developer)", reason),
        h(
          "div",
          { class: "actions" },
          h("button", { type: "button", id: "account-disable", onclick: run("disable") }, "Disable"),
          h("button", { type: "button", id: "account-enable", onclick: run("enable") }, "Enable"),
        ),
      ),
    );
    return;
  }
  const { hosts } = await api("GET", "/api/v1/admin/hosts");
  if (!live()) return;
  main.append(
    table(
      ["Host", "Alive", "Heartbeat", "Schedule", "Use", "Sandboxes", ""],
      hosts.map((x) => {
        const u = x.use || {};
        const res = x.resources || {};
        return [
          h("strong", {}, x.host),
          x.alive ? badge("alive") : badge("down"),
          when(x.heartbeat),
          h("span", {}, badge(x.schedule || "schedulable"), x.schedule_reason ? ` ${x.schedule_reason}` : "", x.drained ? " (drained)" : ""),
          h(
            "span",
            { class: "uses" },
            meter("cpu", u.cpu_percent),
            meter("memory", u.memory_percent),
            h("span", { class: "muted" }, `${u.sandboxes ?? (x.sandboxes || []).length} sandboxes, ${u.grains ?? "?"} grains; ${res.cpus ?? x.capacity ?? "?"} cpus, ${res.memory_mb ?? "?"} MB`),
          ),
          (x.sandboxes || []).map((b) => h("span", { class: "host" }, typeof b === "string" ? b : `${b.app || b.name}:${b.status || ""}`)),
          h(
            "span",
            { class: "actions" },
            [
              ["Cordon", null],
              ["Drain", `Drain ${x.host}? Nothing new is placed on it and its applications are undeployed there.`],
              ["Uncordon", null],
            ].map(([label, ask]) =>
              act(
                label,
                msg,
                live,
                () => api("POST", `/api/v1/admin/hosts/${enc(x.host)}/${label.toLowerCase()}`, { json: {} }),
                { "data-host": x.host, "aria-label": `${label} ${x.host}` },
                ask,
              ),
            ),
          ),
        ];
      }),
      { id: "admin-hosts-table" },
    ),
  );
}
