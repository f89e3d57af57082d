// The application's other records: versions and aliases (rollback), secrets by name (never a value), endpoint keys,
// triggers, dead letters (inspect, redrive, discard; a page at a time). Each is a list from its GET with its actions;
// an action that succeeded draws the tab again, which then says what was done (#tab-message).
import { api, enc } from "../api.js";
import { badge, field, h, notice, pretty, table, when } from "../dom.js";
import { current, go } from "../main.js";

const DEAD_LETTERS_PAGE = 50;

// what the last action did, said once by the next drawing of the tab it was done on
let done = null;

/** The tab's message line: the success of the action that drew it again, once. */
function message() {
  const box = h("div", { id: "tab-message", "aria-live": "polite" });
  if (done && done.hash === location.hash) box.append(notice("ok", done.text));
  done = null;
  return box;
}

/** After an action: the tab drawn again saying text, unless the user went elsewhere meanwhile (live() false). */
function finish(live, text) {
  if (!live()) return;
  done = text ? { hash: location.hash, text } : null;
  go(location.hash);
}

/** "what; the API's note" when the answer has a note, else what. */
function noted(what, answer) {
  return answer && typeof answer.note === "string" && answer.note ? `${what}; ${answer.note}` : what;
}

/** A button that runs f (which answers the sentence saying what it did), then shows the tab again; errors in msg. */
function action(label, msg, live, f, attrs = {}) {
  return h(
    "button",
    {
      type: "button",
      ...attrs,
      onclick: async () => {
        msg.replaceChildren();
        try {
          finish(live, await f());
        } catch (e) {
          if (live()) msg.replaceChildren(notice("error", e.message));
        }
      },
    },
    label,
  );
}

export async function versionsTab(body, app) {
  const live = current();
  const msg = message();
  const base = `/api/v1/apps/${enc(app.name)}`;
  const [versions, aliases] = await Promise.all([api("GET", `${base}/versions`), api("GET", `${base}/aliases`)]);
  if (!live()) return;
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
        v.running
          ? ""
          : action(`Roll back to ${v.version}`, msg, live, async () => {
              const r = await api("POST", `${base}/rollback`, { json: { version: v.version } });
              return `rolled back to version ${v.version}: the new version ${r && r.version !== undefined ? r.version : "?"} runs its code`;
            }),
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
        action(
          "Delete",
          msg,
          live,
          async () => {
            await api("DELETE", `${base}/aliases/${enc(a.name)}`);
            return `alias ${a.name} deleted`;
          },
          { "aria-label": `Delete alias ${a.name}` },
        ),
      ]),
    ),
    h(
      "form",
      {
        class: "card inline",
        onsubmit: async (ev) => {
          ev.preventDefault();
          const alias = aliasName.value.trim();
          try {
            const r = await api("PUT", `${base}/aliases/${enc(alias)}`, { json: { version: Number(aliasVersion.value) } });
            const said = `alias ${alias} → version ${r.version}`;
            finish(live, r.serves === false ? noted(said, r) : said); // the note says why it would answer 409
          } catch (e) {
            if (live()) msg.replaceChildren(notice("error", e.message));
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
  const live = current();
  const msg = message();
  const base = `/api/v1/apps/${enc(app.name)}/secrets`;
  const list = await api("GET", base);
  if (!live()) return;
  const name = h("input", { type: "text", id: "secret-name", pattern: "[A-Za-z_][A-Za-z0-9_]*" });
  const value = h("input", { type: "password", id: "secret-value", autocomplete: "off" });
  body.append(
    msg,
    h("p", { class: "muted" }, "Values are stored encrypted and never shown; a change takes effect at the next deploy."),
    table(
      ["Name", "Bytes", "Updated", ""],
      (list.secrets || []).map((x) => [
        x.name,
        String(x.bytes),
        when(x.updated),
        action("Delete", msg, live, async () => noted(`secret ${x.name} deleted`, await api("DELETE", `${base}/${enc(x.name)}`)), {
          "aria-label": `Delete secret ${x.name}`,
        }),
      ]),
      { id: "secrets-table" },
    ),
    h(
      "form",
      {
        class: "card inline",
        onsubmit: async (ev) => {
          ev.preventDefault();
          const secret = name.value.trim();
          try {
            const r = await api("PUT", `${base}/${enc(secret)}`, { json: { value: value.value } });
            value.value = "";
            finish(live, noted(`secret ${secret} set`, r));
          } catch (e) {
            if (live()) msg.replaceChildren(notice("error", e.message));
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
  const live = current();
  const msg = message();
  const base = `/api/v1/apps/${enc(app.name)}`;
  const [endpoint, keys] = await Promise.all([api("GET", `${base}/endpoint`), api("GET", `${base}/keys`)]);
  if (!live()) return;
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
      action(
        "Save",
        msg,
        live,
        async () => {
          const r = await api("PUT", `${base}/endpoint`, { json: { auth: mode.value } });
          return `who may invoke: ${r && r.auth ? r.auth : mode.value}`;
        },
        { id: "endpoint-save" },
      ),
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
              if (!live()) return;
              shown.replaceChildren(notice("ok", `new signing secret (shown once, copy it now; the one before no longer signs): ${r.secret}`));
            } catch (e) {
              if (live()) msg.replaceChildren(notice("error", e.message));
            }
          },
        },
        endpoint.signing_secret ? "Replace the signing secret" : "Create a signing secret",
      ),
    ),
    h("h2", {}, "Invoke keys"),
    table(
      ["Name", "Prefix", "Created", ""],
      (keys.keys || []).map((k) => [
        k.name || "",
        h("code", {}, k.prefix),
        when(k.created),
        action("Revoke", msg, live, async () => noted(`key ${k.name || k.prefix} revoked`, await api("DELETE", `${base}/keys/${enc(k.id)}`)), {
          "aria-label": `Revoke key ${k.name ? `${k.name} (${k.prefix})` : k.prefix}`,
        }),
      ]),
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
            if (!live()) return;
            // answered once: shown here, not kept anywhere
            shown.replaceChildren(notice("ok", `new key (shown once, copy it now): ${r.key}`));
          } catch (e) {
            if (live()) msg.replaceChildren(notice("error", e.message));
          }
        },
      },
      field("Key name (optional)", keyName),
      h("button", { type: "submit", id: "key-create" }, "Create a key"),
    ),
  );
}

export async function triggersTab(body, app) {
  const live = current();
  const msg = message();
  const base = `/api/v1/apps/${enc(app.name)}/triggers`;
  const list = await api("GET", base);
  if (!live()) return;
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
        action(
          "Delete",
          msg,
          live,
          async () => {
            await api("DELETE", `${base}/${enc(t.name)}`);
            return `trigger ${t.name} deleted`;
          },
          { "aria-label": `Delete trigger ${t.name}` },
        ),
      ]),
      { id: "triggers-table" },
    ),
    h(
      "form",
      {
        class: "card inline",
        onsubmit: async (ev) => {
          ev.preventDefault();
          const trigger = name.value.trim();
          try {
            await api("PUT", `${base}/${enc(trigger)}`, { json: JSON.parse(spec.value) });
            finish(live, `trigger ${trigger} set`);
          } catch (e) {
            if (live()) msg.replaceChildren(notice("error", e.message));
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
  const live = current();
  const msg = message();
  const base = `/api/v1/apps/${enc(app.name)}/dead-letters`;
  const first = await api("GET", `${base}?limit=${DEAD_LETTERS_PAGE}`);
  if (!live()) return;
  const detail = h("pre", { id: "dead-letter", hidden: true });
  const row = (d) =>
    h(
      "tr",
      {},
      [
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
              "aria-label": `Inspect dead letter ${d.id}`,
              onclick: async () => {
                msg.replaceChildren();
                try {
                  const one = await api("GET", `${base}/${enc(d.id)}`);
                  if (!live()) return;
                  detail.hidden = false;
                  detail.textContent = pretty(one);
                } catch (e) {
                  if (live()) msg.replaceChildren(notice("error", e.message));
                }
              },
            },
            "Inspect",
          ),
          action(
            "Redrive",
            msg,
            live,
            async () => {
              const r = await api("POST", `${base}/${enc(d.id)}/redrive`, { json: {} });
              return `dead letter ${d.id} redriven${r && r.execution_id ? `: execution ${r.execution_id}` : ""}`;
            },
            { "aria-label": `Redrive dead letter ${d.id}` },
          ),
          action(
            "Discard",
            msg,
            live,
            async () => {
              await api("DELETE", `${base}/${enc(d.id)}`);
              return `dead letter ${d.id} discarded`;
            },
            { "aria-label": `Discard dead letter ${d.id}` },
          ),
        ),
      ].map((c) => h("td", {}, c)),
    );
  const list = table(["Id", "Source", "Attempts", "Error", ""], (first.dead_letters || []).map(row), { id: "dead-letters-table" });
  // newest first, a page at a time: the next page is the one before the last id shown (the API's next)
  let next = first.next || null;
  const more = h("button", { type: "button", id: "dead-letters-more", hidden: !next }, "More");
  more.addEventListener("click", async () => {
    more.disabled = true;
    msg.replaceChildren();
    try {
      const page = await api("GET", `${base}?${new URLSearchParams({ limit: String(DEAD_LETTERS_PAGE), before: next })}`);
      if (!live()) return;
      list.tBodies[0].append(...(page.dead_letters || []).map(row));
      next = page.next || null;
      more.hidden = !next;
    } catch (e) {
      if (live()) msg.replaceChildren(notice("error", e.message));
    } finally {
      more.disabled = false;
    }
  });
  body.append(msg, list, more, detail);
}
