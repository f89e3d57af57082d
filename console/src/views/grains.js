// The Grains tab: each grain of the application (its own, and the account's shared ones it runs) with its scope,
// kind, version and whether the newest runs. A .py grain's code in the editor, saved as a new version and optionally
// swapped into the running application (POST .../update). A zip grain (a folder: requirements.txt, helper modules,
// data) is opened here: its files listed, its requirements shown, any .py inside edited, and saved as a new zip with
// every other file as it was; a zip's change needs a new sandbox (docs/getting-started.md "Change one grain"), so it
// is saved and deployed.
import { api, enc, getApp } from "../api.js";
import { replaceInZip, requirementsOf, unzipFiles, ZIP } from "../bundle.js";
import { errorsOf, follow } from "../deploy.js";
import { field, h, notice, pretty, table, link } from "../dom.js";
import { editor } from "../editor.js";
import { current } from "../main.js";
import { asEdited, changedFiles, decodeFile } from "../ziptext.js";

const PY_REQUIREMENTS = "none (a .py grain; requirements ride in the entry grain's zip)";

function grainUrl(app, g) {
  return g.scope === "account" ? `/api/v1/grains/${enc(g.name)}` : `/api/v1/apps/${enc(app.name)}/grains/${enc(g.name)}`;
}

export async function grainsTab(body, app, rest) {
  const live = current(); // before the first await: each await below is followed by live()
  const own = await api("GET", `/api/v1/apps/${enc(app.name)}/grains`).catch(() => ({ grains: [] }));
  if (!live()) return;
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
  if (!live()) return;
  if (g.scope === "account") {
    body.append(notice("info", `${chosen} is one of the account's shared grains: a new version is run by every application of the account that uses it, from its next deploy`));
  }
  if (meta.kind === "zip") await zipGrain(body, app, g, live);
  else await pyGrain(body, app, g, rest[1], live);
}

/** A .py grain in the editor; line (from an execution's error: #/apps/<app>/grains/<grain>/<line>) is put in view. */
async function pyGrain(body, app, g, line, live) {
  const code = await api("GET", `${grainUrl(app, g)}?code=1`);
  if (!live()) return; // an editor made now would be left to the next view to destroy
  const box = h("div", { id: "grain-editor" });
  const msg = h("div", { "aria-live": "polite", id: "grain-message" });
  body.append(h("h2", {}, `${g.name}.py`), h("dl", { class: "kv" }, h("dt", {}, "Requirements"), h("dd", { id: "grain-requirements" }, PY_REQUIREMENTS)), box);
  const ed = editor(box, { doc: typeof code === "string" ? code : pretty(code), language: "python", label: `code of grain ${g.name}`, minLines: 14 });
  if (line) ed.goToLine(line);
  const save = async (update) => {
    msg.replaceChildren(notice("info", "saving…"));
    try {
      const updateUrl = `/api/v1/apps/${enc(app.name)}/update`;
      // as sand update: asked first with dry_run (a .py grain has no requirements), so an update the platform
      // refuses (not deployed, requirements changed) leaves no new grain version behind
      if (update) await api("POST", updateUrl, { json: { grains: [g.name], dry_run: true, requirements: { [g.name]: "" } } });
      const v = await api("PUT", grainUrl(app, g), { body: ed.get(), contentType: "text/x-python" });
      let said = `saved as version ${v.version}`;
      if (update) {
        const u = await api("POST", updateUrl, { json: { grains: [g.name] } });
        said += `; ${app.name} is updating to it`;
        const done = await waitUpdated(app.name, u && typeof u.version === "number" ? u.version : null, live, (text) => msg.replaceChildren(notice("info", `${said}: ${text}`)));
        if (!done) return; // the view was left
        said += " — done";
      }
      if (live()) msg.replaceChildren(notice("ok", said));
    } catch (e) {
      if (live()) msg.replaceChildren(notice("error", e.message));
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

async function zipGrain(body, app, g, live) {
  const zip = new Uint8Array(await api("GET", `${grainUrl(app, g)}?code=1`, { binary: true }));
  if (!live()) return;
  const files = unzipFiles(zip);
  // each file's text, decoded strictly: a file that is not UTF-8 is shown read-only and kept byte for byte
  const original = new Map(files.map((f) => [f.path, decodeFile(f.data)]));
  const pys = files.map((f) => f.path).filter((p) => p.endsWith(".py"));
  const requirements = requirementsOf(files);
  const msg = h("div", { "aria-live": "polite", id: "grain-message" });
  body.append(
    h("h2", {}, `${g.name} (a zip of ${files.length} file${files.length === 1 ? "" : "s"})`),
    table(
      ["File", "Bytes"],
      files.map((f) => [h("code", {}, f.path), original.get(f.path).editable || !f.path.endsWith(".py") ? String(f.data.length) : `${f.data.length} (not UTF-8: read-only)`]),
      { id: "grain-files" },
    ),
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
    if (ed) {
      if (original.get(current).editable) edits.set(current, ed.get());
      ed.destroy(); // its listeners on the window and the document go with it
    }
    current = path;
    const o = original.get(path);
    // a new editor per file: no undo reaches into another file
    const box = h("div", { id: "grain-editor" });
    const note = o.editable
      ? null
      : notice("info", `${path} is not valid UTF-8: shown read-only (invalid bytes as \ufffd) and kept in the zip as it is`);
    holder.replaceChildren(...(note ? [h("div", { id: "grain-file-readonly" }, note)] : []), box);
    ed = editor(box, { doc: edits.get(path) ?? asEdited(o.text), language: "python", label: `code of ${path} in grain ${g.name}`, minLines: 14, readOnly: !o.editable });
  };
  const choose = h("select", { id: "grain-file", onchange: (ev) => open(ev.target.value) }, pys.map((p) => h("option", { value: p }, p)));
  choose.value = current;
  body.append(field("File to edit", choose), holder);
  open(current);
  const save = async (deploy) => {
    if (original.get(current).editable) edits.set(current, ed.get());
    // compared with line breaks as the editor holds them; written with the original's (a CRLF file stays CRLF)
    const changed = changedFiles(original, edits);
    if (changed.size === 0 && !deploy) {
      msg.replaceChildren(notice("info", "no file changed"));
      return;
    }
    msg.replaceChildren(notice("info", "saving…"));
    try {
      const v = await api("PUT", grainUrl(app, g), { body: replaceInZip(zip, changed), contentType: ZIP });
      if (!live()) return;
      const said = `saved as version ${v.version} (${changed.size ? [...changed.keys()].join(", ") + " changed" : "no file changed"})`;
      if (!deploy) {
        msg.replaceChildren(notice("ok", `${said}; it runs from the next deploy`));
        return;
      }
      const d = await api("POST", `/api/v1/apps/${enc(app.name)}/deploy`, { json: {} });
      if (!live()) return;
      const p = await follow(() => getApp(app.name), d && typeof d.version === "number" ? d.version : null, {
        onProgress: (q) => live() && msg.replaceChildren(notice("info", `${said}; ${app.name}: ${q.text}`)),
        stopped: () => !live(),
      });
      if (!live()) return;
      if (p.state === "deployed") msg.replaceChildren(notice("ok", `${said}; ${app.name}: ${p.text} — done`));
      else if (p.state === "failed") msg.replaceChildren(notice("error", `${said}; the deploy of ${app.name} failed: ${p.text}`), h("pre", { class: "err", id: "grain-deploy-error" }, p.errors.join("\n") || "no error text"));
      else if (p.state === "timeout") msg.replaceChildren(notice("error", `${said}; ${app.name} is ${p.text}`));
    } catch (e) {
      if (live()) msg.replaceChildren(notice("error", e.message));
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

/**
 * Follows an update (POST .../update answered version) until every host runs it: true when done, false when the view
 * was left; an error (a host's, the update's failure, 60 s gone by) is thrown.
 */
async function waitUpdated(name, version, live, say) {
  const p = await follow(() => getApp(name), version, {
    onProgress: (q) => live() && say(q.text),
    forMs: 60_000,
    stopped: () => !live(),
  });
  if (p.state === "stopped" || !live()) return false;
  if (p.state === "failed") throw new Error(p.errors.join("; ") || "the update failed");
  if (p.state === "timeout") throw new Error(`${name}: ${p.text}`);
  // after an update every host's state is new: an error there (the new code did not load) is about this update
  const errs = errorsOf(p.app);
  if (errs.length) throw new Error(errs.join("; "));
  return true;
}
