// The Grains tab: each grain of the application (its own, and the account's shared ones it runs) with its scope,
// kind, version and whether the newest runs. A .py grain's code in the editor, saved as a new version and optionally
// swapped into the running application (POST .../update). A zip grain (a folder: requirements.txt, helper modules,
// data) is opened here: its files listed, its requirements shown, any .py inside edited, and saved as a new zip with
// every other file as it was; a zip's change needs a new sandbox (docs/getting-started.md "Change one grain"), so it
// is saved and deployed.
import { api, enc, getApp } from "../api.js";
import { bytes, replaceInZip, requirementsOf, text, unzipFiles, ZIP } from "../bundle.js";
import { follow } from "../deploy.js";
import { field, h, notice, pretty, table, link } from "../dom.js";
import { editor } from "../editor.js";
import { onLeave } from "../main.js";

const PY_REQUIREMENTS = "none (a .py grain; requirements ride in the entry grain's zip)";

function grainUrl(app, g) {
  return g.scope === "account" ? `/api/v1/grains/${enc(g.name)}` : `/api/v1/apps/${enc(app.name)}/grains/${enc(g.name)}`;
}

export async function grainsTab(body, app, rest) {
  const own = await api("GET", `/api/v1/apps/${enc(app.name)}/grains`).catch(() => ({ grains: [] }));
  const ownMeta = new Map((own.grains || []).map((g) => [g.name, g]));
  const running = new Map((app.grains || []).map((g) => [g.name, g]));
  const names = new Set([...ownMeta.keys(), ...running.keys()]);
  const chosen = rest[0] || [...names][0];
  body.append(
    table(
      ["Grain", "Scope", "Kind", "Version", "Runs the newest", "sha256"],
      [...names].map((n) => {
        const r = running.get(n) || {};
        const o = ownMeta.get(n) || {};
        return [
          link(`#/apps/${enc(app.name)}/grains/${enc(n)}`, n, { "aria-current": n === chosen ? "true" : null }),
          r.scope || "application",
          o.kind || (r.scope === "account" ? "shared" : "—"),
          String(o.version ?? r.version ?? "—"),
          r.current === false ? "no: a newer version was uploaded" : r.name ? "yes" : "not deployed",
          h("code", {}, (r.sha256 || o.sha256 || "").slice(0, 12)),
        ];
      }),
      { id: "grains-table" },
    ),
  );
  if (!chosen) return;
  const g = running.get(chosen) || { name: chosen, scope: "application" };
  const meta = ownMeta.get(chosen) || (await api("GET", grainUrl(app, g)).catch(() => ({})));
  if (g.scope === "account") {
    body.append(notice("info", `${chosen} is one of the account's shared grains: a new version is run by every application of the account that uses it, from its next deploy`));
  }
  if (meta.kind === "zip") await zipGrain(body, app, g);
  else await pyGrain(body, app, g, rest[1]);
}

/** A .py grain in the editor; line (from an execution's error: #/apps/<app>/grains/<grain>/<line>) is put in view. */
async function pyGrain(body, app, g, line) {
  const code = await api("GET", `${grainUrl(app, g)}?code=1`);
  const box = h("div", { id: "grain-editor" });
  const msg = h("div", { "aria-live": "polite", id: "grain-message" });
  body.append(h("h2", {}, `${g.name}.py`), h("dl", { class: "kv" }, h("dt", {}, "Requirements"), h("dd", { id: "grain-requirements" }, PY_REQUIREMENTS)), box);
  const ed = editor(box, { doc: typeof code === "string" ? code : pretty(code), language: "python", label: `code of grain ${g.name}`, minLines: 14 });
  if (line) ed.goToLine(line);
  const save = async (update) => {
    msg.replaceChildren(notice("info", "saving…"));
    try {
      const v = await api("PUT", grainUrl(app, g), { body: ed.get(), contentType: "text/x-python" });
      let said = `saved as version ${v.version}`;
      if (update) {
        await api("POST", `/api/v1/apps/${enc(app.name)}/update`, { json: { grains: [g.name] } });
        said += `; ${app.name} is updating to it`;
        await waitDeployed(app.name, msg);
        said += " — done";
      }
      msg.replaceChildren(notice("ok", said));
    } catch (e) {
      msg.replaceChildren(notice("error", e.message));
    }
  };
  body.append(
    h(
      "div",
      { class: "actions" },
      h("button", { type: "button", id: "grain-save", onclick: () => save(false) }, "Save as a new version"),
      h("button", { type: "button", id: "grain-save-update", onclick: () => save(true), disabled: app.status !== "deployed" }, "Save and update the running application"),
    ),
    msg,
  );
}

async function zipGrain(body, app, g) {
  const zip = new Uint8Array(await api("GET", `${grainUrl(app, g)}?code=1`, { binary: true }));
  const files = unzipFiles(zip);
  const original = new Map(files.map((f) => [f.path, text(f.data)]));
  const pys = files.map((f) => f.path).filter((p) => p.endsWith(".py"));
  const requirements = requirementsOf(files);
  const msg = h("div", { "aria-live": "polite", id: "grain-message" });
  body.append(
    h("h2", {}, `${g.name} (a zip of ${files.length} file${files.length === 1 ? "" : "s"})`),
    table(["File", "Bytes"], files.map((f) => [h("code", {}, f.path), String(f.data.length)]), { id: "grain-files" }),
    requirements
      ? field("Requirements", h("textarea", { id: "grain-requirements", readonly: true, rows: Math.min(12, requirements.split("\n").length + 1), spellcheck: "false" }, requirements))
      : h("dl", { class: "kv" }, h("dt", {}, "Requirements"), h("dd", { id: "grain-requirements" }, "none (the zip holds no requirements.txt)")),
  );
  if (pys.length === 0) {
    body.append(notice("info", "the zip holds no .py file to edit"));
    return;
  }
  // the file edited, and what was typed in each file opened (kept when another is chosen)
  const edits = new Map();
  let current = [`${g.name}.py`, `${g.name}/__init__.py`].find((p) => pys.includes(p)) || pys[0];
  let ed = null;
  const holder = h("div", {});
  const open = (path) => {
    if (ed) edits.set(current, ed.get());
    current = path;
    // a new editor per file: no undo reaches into another file
    const box = h("div", { id: "grain-editor" });
    holder.replaceChildren(box);
    ed = editor(box, { doc: edits.get(path) ?? original.get(path), language: "python", label: `code of ${path} in grain ${g.name}`, minLines: 14 });
  };
  const choose = h("select", { id: "grain-file", onchange: (ev) => open(ev.target.value) }, pys.map((p) => h("option", { value: p }, p)));
  choose.value = current;
  body.append(field("File to edit", choose), holder);
  open(current);
  let left = false;
  onLeave(() => (left = true));
  const save = async (deploy) => {
    edits.set(current, ed.get());
    const changed = new Map([...edits].filter(([p, t]) => t !== original.get(p)).map(([p, t]) => [p, bytes(t)]));
    if (changed.size === 0 && !deploy) {
      msg.replaceChildren(notice("info", "no file changed"));
      return;
    }
    msg.replaceChildren(notice("info", "saving…"));
    try {
      const v = await api("PUT", grainUrl(app, g), { body: replaceInZip(zip, changed), contentType: ZIP });
      const said = `saved as version ${v.version} (${changed.size ? [...changed.keys()].join(", ") + " changed" : "no file changed"})`;
      if (!deploy) {
        msg.replaceChildren(notice("ok", `${said}; it runs from the next deploy`));
        return;
      }
      const d = await api("POST", `/api/v1/apps/${enc(app.name)}/deploy`, { json: {} });
      const p = await follow(() => getApp(app.name), d && typeof d.version === "number" ? d.version : null, {
        onProgress: (q) => msg.replaceChildren(notice("info", `${said}; ${app.name}: ${q.text}`)),
        stopped: () => left,
      });
      if (p.state === "deployed") msg.replaceChildren(notice("ok", `${said}; ${app.name}: ${p.text} — done`));
      else if (p.state === "failed") msg.replaceChildren(notice("error", `${said}; the deploy of ${app.name} failed: ${p.text}`), h("pre", { class: "err", id: "grain-deploy-error" }, p.errors.join("\n") || "no error text"));
      else if (p.state === "timeout") msg.replaceChildren(notice("error", `${said}; ${app.name} is ${p.text}`));
    } catch (e) {
      msg.replaceChildren(notice("error", e.message));
    }
  };
  body.append(
    h(
      "div",
      { class: "actions" },
      h("button", { type: "button", id: "grain-save", onclick: () => save(false) }, "Save as a new version"),
      h("button", { type: "button", id: "grain-save-deploy", onclick: () => save(true) }, "Save and deploy"),
    ),
    h("p", { class: "muted" }, "A zip's new version needs a new sandbox: Save and deploy deploys the application again (a .py grain is swapped into the running one instead)."),
    msg,
  );
}

/** Waits (at most 60 s) for the application to be deployed again; an error is thrown. */
async function waitDeployed(name, msg) {
  const until = Date.now() + 60_000;
  for (;;) {
    const a = await getApp(name);
    const errs = (a.hosts || []).map((x) => x.error).filter(Boolean);
    if (a.status === "deployed" && (a.hosts || []).every((x) => x.status === "deployed")) {
      if (errs.length) throw new Error(errs.join("; "));
      return a;
    }
    if (a.status === "failed") throw new Error(a.error || "the update failed");
    if (Date.now() > until) throw new Error(`${name} is still ${a.status} after 60 s`);
    msg.replaceChildren(notice("info", `${name}: ${a.status}…`));
    await new Promise((r) => setTimeout(r, 500));
  }
}
