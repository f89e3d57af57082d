// The application's keys in the global data layer, read-only, as `sand data <app>` shows them
// (GET /api/v1/apps/{app}/data: ?prefix=, ?limit=, ?cursor= a page at a time; ?key= one value, "utf-8" or "base64").
// What grains write reaches the global layer through the host agents' write-behind, so the newest may show late.
import { api, enc } from "../api.js";
import { field, h, notice, table } from "../dom.js";
import { current } from "../main.js";

const PAGE = 100;

/** A value as the page shows it: pretty JSON when the text parses, else the text; base64 with its byte count. */
export function showValue(v) {
  if (v.encoding === "base64") return { kind: "base64", text: v.value, note: `${v.bytes} bytes, not UTF-8: shown as base64` };
  const text = v.value ?? "";
  try {
    const parsed = JSON.parse(text);
    if (parsed !== null && typeof parsed === "object") return { kind: "json", text: JSON.stringify(parsed, null, 2), note: `${v.bytes} bytes, JSON` };
  } catch {
    // not JSON: the text as it is
  }
  return { kind: "text", text, note: `${v.bytes} bytes, text` };
}

export async function dataTab(body, app) {
  const live = current();
  const url = `/api/v1/apps/${enc(app.name)}/data`;
  const prefix = h("input", { type: "text", id: "data-prefix", placeholder: "e.g. user: (empty: all)", autocomplete: "off" });
  const list = h("div", { id: "data-list" });
  const value = h("section", { id: "data-value", "aria-live": "polite", "aria-label": "value of the chosen key" });
  let keys = [];
  let cursor = null;
  let shown = ""; // the prefix of the listing shown
  // each read counts: an answer that is not the newest read's is dropped (a slower older one would overwrite it)
  let opened = 0;
  let listed = 0;
  let more = null; // the More button drawn, disabled while a listing is read

  const open = async (key, button) => {
    const mine = ++opened;
    for (const b of list.querySelectorAll("button[aria-pressed]")) b.setAttribute("aria-pressed", String(b === button));
    value.replaceChildren(notice("info", `reading ${key}…`));
    try {
      const v = await api("GET", `${url}?${new URLSearchParams({ key })}`);
      if (mine !== opened || !live()) return;
      const s = showValue(v);
      value.replaceChildren(
        h("h2", {}, h("code", {}, v.key)),
        h("p", { class: "muted", id: "data-value-note" }, s.note),
        h("pre", { class: `data-${s.kind}`, tabindex: "0", "aria-label": `value of ${v.key}` }, s.text),
      );
    } catch (e) {
      if (mine === opened && live()) value.replaceChildren(notice("error", e.message));
    }
  };

  const draw = () => {
    const rows = keys.map((k) => [
      h("button", { type: "button", class: "linklike mono", "aria-pressed": "false", onclick: (ev) => open(k, ev.currentTarget) }, k),
    ]);
    const parts = [];
    if (keys.length === 0) {
      const text = shown
        ? `no keys starting with "${shown}" in ${app.name}'s data layer`
        : `${app.name} has no keys in the global data layer yet. Its grains write them with context.put(key, value) ` +
          "(and read them with context.get(key)); a write reaches this list through the host agents' write-behind, a moment later.";
      parts.push(h("div", { id: "data-empty" }, notice("info", text)));
    } else {
      parts.push(
        h("p", { class: "muted" }, `${keys.length} key${keys.length === 1 ? "" : "s"}${shown ? ` starting with "${shown}"` : ""}${cursor ? " (more below)" : ""}, in key order; choose one to see its value`),
        // a box of its own, so the value below stays in sight whatever the number of keys
        h("div", { class: "data-keys-box" }, table(["Key"], rows, { id: "data-keys" })),
      );
    }
    more = cursor ? h("button", { type: "button", id: "data-more", onclick: () => load(true) }, "More") : null;
    if (more) parts.push(more);
    list.replaceChildren(...parts);
  };

  const load = async (next) => {
    const mine = ++listed;
    if (more) more.disabled = true; // one listing read at a time: a More of the listing being replaced means nothing
    const q = new URLSearchParams({ prefix: next ? shown : prefix.value, limit: String(PAGE) });
    if (next && cursor) q.set("cursor", cursor);
    try {
      const page = await api("GET", `${url}?${q}`);
      if (mine !== listed || !live()) return;
      if (!next) {
        keys = [];
        shown = page.prefix ?? prefix.value;
        opened++; // a key of the listing before, still being read, is not shown under this one
        value.replaceChildren();
      }
      keys.push(...(page.keys || []));
      cursor = page.next || null;
      draw();
    } catch (e) {
      if (mine === listed && live()) list.replaceChildren(notice("error", e.message));
    }
  };

  body.append(
    h(
      "p",
      { class: "muted" },
      "Read-only: the keys this application's grains wrote to the global data layer (Cassandra), as sand data shows them. " +
        "Maps, sets and counters are not listed.",
    ),
    h(
      "form",
      {
        class: "filters search",
        role: "search",
        "aria-label": "keys",
        onsubmit: (ev) => {
          ev.preventDefault();
          load(false);
        },
      },
      field("Key prefix", prefix),
      h("button", { type: "submit", id: "data-list-keys" }, "List keys"),
    ),
    list,
    value,
  );
  await load(false);
}
