// The developer's applications: each with its status per host, version and error; and a new application from a
// folder's files (workflow.json and the grains' .py files, as `sand deploy <folder>` takes them).
import { api, enc } from "../api.js";
import { badge, field, h, link, notice, table } from "../dom.js";
import { go } from "../main.js";

export async function appsView(main) {
  main.append(h("h1", {}, "Applications"));
  const list = h("div", { "aria-live": "polite" }, h("p", { class: "muted" }, "loading…"));
  main.append(list, newAppForm());
  const { apps } = await api("GET", "/api/v1/apps");
  const details = await Promise.all(
    apps.map((a) => api("GET", `/api/v1/apps/${enc(a.name)}`).catch(() => ({ ...a, hosts: [] }))),
  );
  list.replaceChildren(
    table(
      ["Application", "Status", "Version", "Hosts", "Error"],
      details.map((a) => [
        link(`#/apps/${enc(a.name)}`, a.name),
        badge(a.status),
        String(a.version ?? "—"),
        h("span", {}, (a.hosts || []).map((x) => h("span", { class: "host" }, `${x.host}: `, badge(x.status), x.alive === false ? " (down)" : ""))),
        a.error ? h("span", { class: "err" }, a.error) : "",
      ]),
      { id: "apps-table" },
    ),
  );
}

/** Files -> {workflow, grains: [{name, code}]}; workflow.json (or the one .json) is the workflow. */
export async function readFolder(files) {
  const all = [...files];
  const wf = all.find((f) => f.name === "workflow.json") || all.find((f) => f.name.endsWith(".json"));
  if (!wf) throw new Error("choose the folder's workflow.json with its grains' .py files");
  const workflow = JSON.parse(await wf.text());
  const grains = await Promise.all(
    all.filter((f) => f.name.endsWith(".py")).map(async (f) => ({ name: f.name.replace(/\.py$/, ""), code: await f.text() })),
  );
  return { workflow, grains };
}

function newAppForm() {
  const msg = h("div", { "aria-live": "polite" });
  const name = h("input", { type: "text", id: "new-app-name", required: true, pattern: "[a-z0-9][a-z0-9_\\-]{0,62}" });
  const files = h("input", { type: "file", id: "new-app-files", multiple: true, accept: ".json,.py" });
  const deploy = h("input", { type: "checkbox", id: "new-app-deploy", checked: true });
  return h(
    "form",
    {
      class: "card",
      id: "new-app",
      onsubmit: async (ev) => {
        ev.preventDefault();
        msg.replaceChildren(notice("info", "uploading…"));
        const app = name.value.trim();
        try {
          const { workflow, grains } = await readFolder(files.files);
          // the application first (its workflow is checked here), then its own grains, then the deploy
          await api("PUT", `/api/v1/apps/${enc(app)}`, { json: workflow });
          for (const g of grains) {
            await api("PUT", `/api/v1/apps/${enc(app)}/grains/${enc(g.name)}`, { body: g.code, contentType: "text/x-python" });
          }
          if (deploy.checked) await api("POST", `/api/v1/apps/${enc(app)}/deploy`, { json: {} });
          go(`#/apps/${enc(app)}/overview`);
        } catch (e) {
          msg.replaceChildren(notice("error", e.message));
          if (e.body && app) msg.append(h("p", {}, link(`#/apps/${enc(app)}/graph`, "see it on the graph")));
        }
      },
    },
    h("h2", {}, "New application"),
    h("p", { class: "muted" }, "Choose a folder's workflow.json and its grains' .py files (as sand deploy <folder> takes them)."),
    field("Name", name),
    field("Files", files),
    h("div", { class: "field check" }, deploy, h("label", { for: "new-app-deploy" }, "Deploy it")),
    h("button", { type: "submit", id: "new-app-create" }, "Create"),
    msg,
  );
}
