// The application's other records: versions and aliases (rollback), secrets by name (never a value), endpoint keys,
// triggers, dead letters (inspect, redrive, discard). Each is a list from its GET with its actions.
import { api, enc } from "../api.js";
import { badge, field, h, notice, pretty, table, when } from "../dom.js";
import { go } from "../main.js";

/** A button that runs f, shows its error in msg, and shows the tab again when done. */
function action(label, msg, f, attrs = {}) {
  return h(
    "button",
    {
      type: "button",
      ...attrs,
      onclick: async () => {
        msg.replaceChildren();
        try {
          const note = await f();
          go(location.hash);
          if (note) setTimeout(() => document.getElementById("tab-message")?.replaceChildren(notice("ok", note)), 0);
        } catch (e) {
          msg.replaceChildren(notice("error", e.message));
        }
      },
    },
    label,
  );
}

function message() {
  return h("div", { id: "tab-message", "aria-live": "polite" });
}

export async function versionsTab(body, app) {
  const msg = message();
  const base = `/api/v1/apps/${enc(app.name)}`;
  const [versions, aliases] = await Promise.all([api("GET", `${base}/versions`), api("GET", `${base}/aliases`)]);
  const aliasName = h("input", { type: "text", id: "alias-name", pattern: "[a-z][a-z0-9_\\-]{0,31}" });
  const aliasVersion = h("input", { type: "number", id: "alias-version", min: 1 });
  body.append(
    msg,
    h("h2", {}, "Versions"),
    table(
      ["Version", "Created", "Description", "Running", ""],
      (versions.versions || []).map((v) => [
        String(v.version),
        when(v.created),
        v.description || "",
        v.running ? badge("running") : "",
        v.running ? "" : action(`Roll back to ${v.version}`, msg, () => api("POST", `${base}/rollback`, { json: { version: v.version } })),
      ]),
      { id: "versions-table" },
    ),
    h("h2", {}, "Aliases"),
    table(
      ["Alias", "Version", "Weights", "Serves", "Invoke", ""],
      (aliases.aliases || []).map((a) => [
        a.name,
        String(a.version),
        a.weights ? pretty(a.weights) : "",
        a.serves ? "yes" : "no (not the running version: 409)",
        h("code", {}, a.invoke || ""),
        action("Delete", msg, () => api("DELETE", `${base}/aliases/${enc(a.name)}`)),
      ]),
    ),
    h(
      "form",
      {
        class: "card inline",
        onsubmit: async (ev) => {
          ev.preventDefault();
          try {
            await api("PUT", `${base}/aliases/${enc(aliasName.value.trim())}`, { json: { version: Number(aliasVersion.value) } });
            go(location.hash);
          } catch (e) {
            msg.replaceChildren(notice("error", e.message));
          }
        },
      },
      field("Alias", aliasName),
      field("Version", aliasVersion),
      h("button", { type: "submit", id: "alias-set" }, "Point the alias"),
    ),
  );
}

export async function secretsTab(body, app) {
  const msg = message();
  const base = `/api/v1/apps/${enc(app.name)}/secrets`;
  const list = await api("GET", base);
  const name = h("input", { type: "text", id: "secret-name", pattern: "[A-Za-z_][A-Za-z0-9_]*" });
  const value = h("input", { type: "password", id: "secret-value", autocomplete: "off" });
  body.append(
    msg,
    h("p", { class: "muted" }, "Values are stored encrypted and never shown; a change takes effect at the next deploy."),
    table(
      ["Name", "Bytes", "Updated", ""],
      (list.secrets || []).map((x) => [x.name, String(x.bytes), when(x.updated), action("Delete", msg, () => api("DELETE", `${base}/${enc(x.name)}`))]),
      { id: "secrets-table" },
    ),
    h(
      "form",
      {
        class: "card inline",
        onsubmit: async (ev) => {
          ev.preventDefault();
          try {
            const r = await api("PUT", `${base}/${enc(name.value.trim())}`, { json: { value: value.value } });
            value.value = "";
            go(location.hash);
            setTimeout(() => document.getElementById("tab-message")?.replaceChildren(notice("ok", r.note || "set")), 0);
          } catch (e) {
            msg.replaceChildren(notice("error", e.message));
          }
        },
      },
      field("Name", name),
      field("Value", value),
      h("button", { type: "submit", id: "secret-set" }, "Set the secret"),
    ),
  );
}

export async function keysTab(body, app) {
  const msg = message();
  const base = `/api/v1/apps/${enc(app.name)}`;
  const [endpoint, keys] = await Promise.all([api("GET", `${base}/endpoint`), api("GET", `${base}/keys`)]);
  const mode = h("select", { id: "endpoint-mode" }, ["public", "key", "hmac"].map((m) => h("option", { value: m }, m)));
  mode.value = endpoint.auth;
  const keyName = h("input", { type: "text", id: "key-name", placeholder: "ci" });
  const shown = h("div", { "aria-live": "polite", id: "key-shown" });
  body.append(
    msg,
    shown,
    h(
      "div",
      { class: "card inline" },
      field("Who may invoke", mode),
      action("Save", msg, () => api("PUT", `${base}/endpoint`, { json: { auth: mode.value } }), { id: "endpoint-save" }),
      endpoint.note ? notice("info", endpoint.note) : null,
      h("p", { class: "muted" }, `signing secret: ${endpoint.signing_secret ? "set" : "none"}`),
      // the hmac mode's shared secret: answered once, like a key (POST replaces the one before)
      h(
        "button",
        {
          type: "button",
          id: "signing-secret-new",
          onclick: async () => {
            msg.replaceChildren();
            try {
              const r = await api("POST", `${base}/signing-secret`, { json: {} });
              shown.replaceChildren(notice("ok", `new signing secret (shown once, copy it now; the one before no longer signs): ${r.secret}`));
            } catch (e) {
              msg.replaceChildren(notice("error", e.message));
            }
          },
        },
        endpoint.signing_secret ? "Replace the signing secret" : "Create a signing secret",
      ),
    ),
    h("h2", {}, "Invoke keys"),
    table(
      ["Name", "Prefix", "Created", ""],
      (keys.keys || []).map((k) => [k.name || "", h("code", {}, k.prefix), when(k.created), action("Revoke", msg, () => api("DELETE", `${base}/keys/${enc(k.id)}`))]),
      { id: "keys-table" },
    ),
    h(
      "form",
      {
        class: "card inline",
        onsubmit: async (ev) => {
          ev.preventDefault();
          try {
            const r = await api("POST", `${base}/keys`, { json: keyName.value.trim() ? { name: keyName.value.trim() } : {} });
            // answered once: shown here, not kept anywhere
            shown.replaceChildren(notice("ok", `new key (shown once, copy it now): ${r.key}`));
          } catch (e) {
            msg.replaceChildren(notice("error", e.message));
          }
        },
      },
      field("Key name (optional)", keyName),
      h("button", { type: "submit", id: "key-create" }, "Create a key"),
    ),
  );
}

export async function triggersTab(body, app) {
  const msg = message();
  const base = `/api/v1/apps/${enc(app.name)}/triggers`;
  const list = await api("GET", base);
  const items = list.triggers || [];
  const name = h("input", { type: "text", id: "trigger-name" });
  const spec = h("input", { type: "text", id: "trigger-spec", value: '{"every": "1m"}' });
  body.append(
    msg,
    table(
      ["Name", "Trigger", "Next tick", ""],
      items.map((t) => [
        t.name,
        h("code", {}, JSON.stringify(Object.fromEntries(Object.entries(t).filter(([k]) => !["name", "next", "app"].includes(k))))),
        when(t.next),
        action("Delete", msg, () => api("DELETE", `${base}/${enc(t.name)}`)),
      ]),
      { id: "triggers-table" },
    ),
    h(
      "form",
      {
        class: "card inline",
        onsubmit: async (ev) => {
          ev.preventDefault();
          try {
            await api("PUT", `${base}/${enc(name.value.trim())}`, { json: JSON.parse(spec.value) });
            go(location.hash);
          } catch (e) {
            msg.replaceChildren(notice("error", e.message));
          }
        },
      },
      field("Name", name),
      field('Trigger (JSON: {"every"}, {"cron"} or {"topic"})', spec),
      h("button", { type: "submit" }, "Add or replace"),
    ),
  );
}

export async function deadLettersTab(body, app) {
  const msg = message();
  const base = `/api/v1/apps/${enc(app.name)}/dead-letters`;
  const list = await api("GET", `${base}?limit=100`);
  const detail = h("pre", { id: "dead-letter", hidden: true });
  body.append(
    msg,
    table(
      ["Id", "Source", "Attempts", "Error", ""],
      (list.dead_letters || []).map((d) => [
        h("code", {}, d.id),
        d.source || "",
        String(d.attempts ?? ""),
        h("span", { class: "err" }, typeof d.error === "string" ? d.error : pretty(d.error)),
        h(
          "span",
          { class: "actions" },
          h(
            "button",
            {
              type: "button",
              onclick: async () => {
                detail.hidden = false;
                detail.textContent = pretty(await api("GET", `${base}/${enc(d.id)}`));
              },
            },
            "Inspect",
          ),
          action("Redrive", msg, () => api("POST", `${base}/${enc(d.id)}/redrive`, { json: {} })),
          action("Discard", msg, () => api("DELETE", `${base}/${enc(d.id)}`)),
        ),
      ]),
      { id: "dead-letters-table" },
    ),
    detail,
  );
}
