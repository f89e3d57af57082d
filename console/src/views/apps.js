// The developer's applications: each with its status per host, version, requests per minute and error rate over the
// last 5 minutes (console/src/rates.js), and error; and a new application from a
// folder (workflow.json, settings.json, the grains, requirements.txt and shared files), uploaded as
// `sand deploy <folder>` does (console/src/bundle.js), its deploy followed until deployed or failed.
import { api, enc, getApp } from "../api.js";
import { bundle, relativePath, text, wanted, ZIP } from "../bundle.js";
import { follow } from "../deploy.js";
import { badge, field, h, link, notice, table } from "../dom.js";
import { current, go } from "../main.js";
import { errorsText, perMinuteText, rates, ratesQuery } from "../rates.js";

export async function appsView(main) {
  const live = current(); // before the first await: the user may go elsewhere while it runs
  main.append(h("h1", {}, "Applications"));
  const list = h("div", { "aria-live": "polite" }, h("p", { class: "muted" }, "loading…"));
  const listChanged = () =>
    showList(list, live).catch((e) => {
      if (live()) list.append(notice("error", `could not list the applications: ${e.message}`));
    });
  main.append(list, newAppForm(listChanged, live));
  await showList(list, live);
}

/** The list's row of an application whose state could not be read: that error, in its row. */
function unreadable(a, e) {
  return { ...a, hosts: [], error: `could not read its state: ${e && e.message ? e.message : String(e)}` };
}

async function showList(list, live) {
  const { apps } = await api("GET", "/api/v1/apps");
  if (!live()) return;
  const query = ratesQuery();
  const [details, traffic] = await Promise.all([
    Promise.all(apps.map((a) => getApp(a.name).catch((e) => unreadable(a, e)))),
    // one page of the last 5 minutes' executions per application: requests per minute and the error rate
    Promise.all(apps.map((a) => api("GET", `/api/v1/apps/${enc(a.name)}/executions?${query}`).then(rates, () => null))),
  ]);
  if (!live()) return;
  list.replaceChildren(
    table(
      ["Application", "Status", "Version", "Req/min (5 min)", "Errors (5 min)", "Hosts", "Error"],
      details.map((a, i) => [
        link(`#/apps/${enc(a.name)}`, a.name),
        badge(a.status),
        String(a.version ?? "—"),
        traffic[i] ? h("span", { class: "num", title: `${traffic[i].count} executions started in the last 5 minutes${traffic[i].full ? " or more" : ""}` }, perMinuteText(traffic[i])) : "—",
        traffic[i] ? h("span", { class: traffic[i].errors ? "num err" : "num" }, errorsText(traffic[i])) : "—",
        h("span", {}, (a.hosts || []).map((x) => h("span", { class: "host" }, `${x.host}: `, badge(x.status), x.alive === false ? " (down)" : ""))),
        a.error ? h("span", { class: "err" }, a.error) : "",
      ]),
      { id: "apps-table" },
    ),
  );
}

/** The chosen files as [{path, data}]: the folder's (paths inside it) and the loose ones (by name, chosen last wins). */
export async function chosenFiles(folderFiles, looseFiles) {
  const byPath = new Map();
  for (const f of folderFiles || []) byPath.set(relativePath(f), f);
  for (const f of looseFiles || []) byPath.set(f.name, f);
  const keep = [...byPath].filter(([path]) => wanted(path)); // no bytes read for .git, __pycache__, ...
  return Promise.all(keep.map(async ([path, f]) => ({ path, data: new Uint8Array(await f.arrayBuffer()) })));
}

const POLL_MS = 500;
const DEPLOY_WAIT_MS = 120_000;

/**
 * The form; listChanged() shows the list again when a new application stays on this view (failed, or slow). A
 * creation the user started goes on when they go elsewhere (no application is left half uploaded), but then writes
 * nothing into the page, follows no deploy and navigates nowhere.
 */
function newAppForm(listChanged, live) {
  const progress = h("div", { id: "new-app-progress", "aria-live": "polite" });
  const name = h("input", { type: "text", id: "new-app-name", required: true, pattern: "[a-z0-9][a-z0-9_\\-]{0,62}", "aria-describedby": "new-app-name-note" });
  const folderInput = h("input", { type: "file", id: "new-app-folder", webkitdirectory: true, multiple: true });
  const files = h("input", { type: "file", id: "new-app-files", multiple: true });
  const settings = h("textarea", { id: "new-app-settings", rows: 3, spellcheck: "false", placeholder: '{"timeout_s": 30, "env": {"GREETING": "hello"}}' });
  const deploy = h("input", { type: "checkbox", id: "new-app-deploy", checked: true });
  const chosen = h("p", { id: "new-app-chosen", class: "muted", "aria-live": "polite" });
  const submit = h("button", { type: "submit", id: "new-app-create" }, "Create");
  const steps = h("ul", { class: "steps" });
  const state = h("p", { id: "new-app-state" });
  const appLink = (app, text) => h("p", {}, link(`#/apps/${enc(app)}/overview`, text, { id: "new-app-link" }));
  // what was chosen, and the workflow's own name as the default name (sand deploy <folder> without --name)
  const look = async () => {
    try {
      const entries = await chosenFiles(folderInput.files, files.files);
      if (!live()) return;
      const wf = entries.find((f) => f.path === "workflow.json");
      const names = entries.map((f) => f.path).sort();
      chosen.textContent = entries.length ? `${names.length} file${names.length === 1 ? "" : "s"}: ${names.join(", ")}` : "";
      if (wf && !name.value.trim()) {
        const n = JSON.parse(text(wf.data)).name;
        if (typeof n === "string") name.value = n;
      }
    } catch {
      // the Create says what is wrong
    }
  };
  folderInput.addEventListener("change", look);
  files.addEventListener("change", look);
  const say = (line) => live() && steps.append(h("li", {}, line));
  const show = (...parts) => live() && state.replaceChildren(...parts);
  return h(
    "form",
    {
      class: "card",
      id: "new-app",
      onsubmit: async (ev) => {
        ev.preventDefault();
        const app = name.value.trim();
        steps.replaceChildren();
        state.replaceChildren(notice("info", "reading the files…"));
        progress.replaceChildren(steps, state);
        submit.disabled = true;
        let saved = false;
        try {
          const b = bundle(await chosenFiles(folderInput.files, files.files), { name: app, extraSettings: settings.value });
          // the workflow first (it claims the name and is checked), then the grains as the application's own
          show(notice("info", "uploading…"));
          await api("PUT", `/api/v1/apps/${enc(app)}`, { json: b.workflow });
          saved = true;
          say(`application ${app}: workflow saved${b.settings ? " with its settings" : ""}`);
          for (const u of b.uploads) {
            const v = await api("PUT", `/api/v1/apps/${enc(app)}/grains/${enc(u.grain)}`, { body: u.body, contentType: u.contentType });
            const what = u.contentType === ZIP ? `zip of ${u.files.join(", ")}` : u.files[0];
            say(`grain ${u.grain}: version ${(v && v.version) ?? "?"} (${what}, ${u.body.length} bytes)`);
          }
          if (!deploy.checked) {
            if (live()) go(`#/apps/${enc(app)}/overview`);
            return;
          }
          const d = await api("POST", `/api/v1/apps/${enc(app)}/deploy`, { json: {} });
          const version = d && typeof d.version === "number" ? d.version : null;
          say(`deploy of version ${version ?? "?"} started`);
          const p = await follow(() => getApp(app), version, {
            onProgress: (q) => show(notice("info", `${app}: ${q.text}`)),
            everyMs: POLL_MS,
            forMs: DEPLOY_WAIT_MS,
            stopped: () => !live(),
          });
          if (p.state === "stopped" || !live()) return;
          if (p.state === "deployed") {
            go(`#/apps/${enc(app)}/overview`);
            return;
          }
          if (p.state === "failed") {
            state.replaceChildren(
              notice("error", `the deploy of ${app} failed: ${p.text}`),
              h("pre", { id: "new-app-error", class: "err" }, p.errors.join("\n") || "no error text"),
              appLink(app, `Open ${app} (the error on its node)`),
            );
          } else {
            state.replaceChildren(notice("error", `${app} is ${p.text}`), appLink(app, `Follow it on ${app}'s overview`));
          }
          listChanged();
        } catch (e) {
          if (!live()) return;
          state.replaceChildren(notice("error", e.message));
          if (saved) {
            state.append(appLink(app, `Open ${app}`));
            listChanged();
          }
        } finally {
          submit.disabled = false;
        }
      },
    },
    h("h2", {}, "New application"),
    h(
      "p",
      { class: "muted" },
      "Choose the application's folder (or its files: workflow.json, settings.json, the grains' .py files, requirements.txt and any files they read). " +
        "It is uploaded as sand deploy <folder> does: each grain's .py as the application's own grain; requirements.txt and the other files in a zip with the entry grain.",
    ),
    field("Name", name),
    h("p", { class: "muted", id: "new-app-name-note" }, "1-63 of a-z 0-9 _ -; filled in from workflow.json's name when empty."),
    h("div", { class: "cols" }, field("Folder", folderInput), field("Or files", files)),
    chosen,
    field("Settings (JSON, optional: merged over settings.json, as sand deploy --settings)", settings),
    h("div", { class: "field check" }, deploy, h("label", { for: "new-app-deploy" }, "Deploy it")),
    submit,
    progress,
  );
}
