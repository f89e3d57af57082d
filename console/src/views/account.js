// The developer's account: its shared grains (GET /api/v1/grains), each with the applications that run it (the
// platform's rule, console/src/usage.js), its code read-only, and Delete (409 while a deployed application uses it);
// and deleting the account itself, its name typed out as the confirmation (409 while an application still runs).
import { api, enc, session, signOut, getApp } from "../api.js";
import { requirementsOf, text, unzipFiles } from "../bundle.js";
import { badge, field, h, link, notice, table, when } from "../dom.js";
import { editor } from "../editor.js";
import { current, go } from "../main.js";
import { sharedUsers } from "../usage.js";

// each View code counts: the code shown is the newest one asked for, never a slower older answer
let viewing = 0;

export async function accountView(main) {
  const live = current();
  const s = session() || {};
  main.append(
    h("h1", {}, "Account"),
    h(
      "p",
      { class: "muted" },
      s.account ? `Signed in as ${s.account}.` : "Signed in with an account's key (the API does not say which account a key is; the console knows it only for an account created here).",
    ),
  );
  const msg = h("div", { "aria-live": "polite", id: "account-message" });
  const grainsBox = h("div", {}, h("p", { class: "muted" }, "loading…"));
  const viewer = h("div", { id: "shared-grain-viewer" });
  main.append(
    h("h2", {}, "Shared grains"),
    h("p", { class: "muted" }, "Grains of the account (PUT /api/v1/grains/{grain}): an application runs one when its workflow names it and it has no grain of its own by that name."),
    msg,
    grainsBox,
    viewer,
    deleteAccountForm(s.account),
  );
  await showGrains(grainsBox, viewer, msg, live);
}

async function showGrains(box, viewer, msg, live) {
  const [{ grains }, { apps }] = await Promise.all([api("GET", "/api/v1/grains"), api("GET", "/api/v1/apps")]);
  if (!live()) return;
  // each application's workflow and own grains: what decides which shared grains it runs
  const details = await Promise.all(
    apps.map(async (a) => {
      const [app, own] = await Promise.all([
        getApp(a.name).catch(() => ({ ...a, workflow: null })),
        api("GET", `/api/v1/apps/${enc(a.name)}/grains`).catch(() => ({ grains: [] })),
      ]);
      return { name: a.name, status: app.status || a.status, workflow: app.workflow, own: (own.grains || []).map((g) => g.name) };
    }),
  );
  if (!live()) return;
  const users = sharedUsers(grains.map((g) => g.name), details);
  const remove = async (g) => {
    if (!confirm(`Delete the shared grain ${g.name}, every version?`)) return;
    msg.replaceChildren();
    try {
      await api("DELETE", `/api/v1/grains/${enc(g.name)}`);
      if (!live()) return;
      msg.replaceChildren(notice("ok", `shared grain ${g.name} deleted`));
      viewing++; // a code still being read is not shown after the delete
      viewer.replaceChildren();
      await showGrains(box, viewer, msg, live);
    } catch (e) {
      if (live()) msg.replaceChildren(notice("error", e.message));
    }
  };
  box.replaceChildren(
    table(
      ["Grain", "Version", "Kind", "Bytes", "Created", "Used by", ""],
      grains.map((g) => [
        h("code", {}, g.name),
        String(g.version ?? "—"),
        g.kind || "—",
        String(g.size ?? "—"),
        when(g.created),
        (users.get(g.name) || []).length
          ? h("span", { class: "uses" }, users.get(g.name).map((u) => h("span", {}, link(`#/apps/${enc(u.name)}/overview`, u.name), " ", badge(u.status))))
          : h("span", { class: "muted" }, "no application"),
        h(
          "span",
          { class: "actions" },
          h("button", { type: "button", "aria-label": `View code of ${g.name}`, dataset: { grain: g.name }, onclick: () => showCode(viewer, g, live) }, "View code"),
          h("button", { type: "button", "aria-label": `Delete ${g.name}`, dataset: { grain: g.name, action: "delete" }, onclick: () => remove(g) }, "Delete"),
        ),
      ]),
      { id: "shared-grains" },
    ),
  );
}

/** A shared grain's code, read-only: a .py in the editor; a zip's files, its requirements and any text file inside. */
async function showCode(viewer, g, live) {
  const mine = ++viewing;
  const newest = () => mine === viewing && live();
  try {
    await drawCode(viewer, g, newest);
  } catch (e) {
    if (newest()) viewer.replaceChildren(notice("error", e.message));
  }
}

async function drawCode(viewer, g, newest) {
  viewer.replaceChildren(h("h2", {}, `${g.name} (version ${g.version}, read-only)`));
  const url = `/api/v1/grains/${enc(g.name)}?code=1`;
  const holder = h("div", {});
  const show = (label, doc) => {
    const box = h("div", { id: "shared-grain-code" });
    holder.replaceChildren(box);
    editor(box, { doc, language: "python", label, readOnly: true, minLines: 8 });
  };
  if (g.kind !== "zip") {
    viewer.append(holder);
    const code = await api("GET", url); // text/x-python: its text as it is (null when empty)
    if (!newest()) return;
    show(`code of shared grain ${g.name} (read-only)`, String(code ?? ""));
    return;
  }
  const zip = await api("GET", url, { binary: true });
  if (!newest()) return;
  const files = unzipFiles(zip);
  const requirements = requirementsOf(files);
  const texts = files.filter((f) => /\.(py|txt|json|cfg|toml|ini|md|ya?ml|csv)$/.test(f.path)).map((f) => f.path);
  const choose = h("select", { id: "shared-grain-file" }, texts.map((p) => h("option", { value: p }, p)));
  const byPath = new Map(files.map((f) => [f.path, f]));
  choose.addEventListener("change", () => show(`${choose.value} in shared grain ${g.name} (read-only)`, text(byPath.get(choose.value).data)));
  viewer.append(
    table(["File", "Bytes"], files.map((f) => [h("code", {}, f.path), String(f.data.length)]), { id: "shared-grain-files" }),
    requirements
      ? field("Requirements", h("textarea", { id: "shared-grain-requirements", readonly: true, rows: Math.min(12, requirements.split("\n").length + 1), spellcheck: "false" }, requirements))
      : h("p", { class: "muted" }, "Requirements: none (the zip holds no requirements.txt)"),
  );
  if (texts.length) {
    choose.value = [`${g.name}.py`, `${g.name}/__init__.py`].find((p) => texts.includes(p)) || texts[0];
    viewer.append(field("File", choose), holder);
    show(`${choose.value} in shared grain ${g.name} (read-only)`, text(byPath.get(choose.value).data));
  }
}

function deleteAccountForm(known) {
  const msg = h("div", { "aria-live": "polite", id: "account-delete-message" });
  const name = h("input", { type: "text", id: "account-delete-name", autocomplete: "off", spellcheck: "false", required: true, "aria-describedby": "account-delete-note" });
  const submit = h("button", { type: "submit", id: "account-delete", disabled: true }, "Delete the account");
  // with the name known, only that name enables the button; else the API checks it (403: "you are '<name>'")
  name.addEventListener("input", () => (submit.disabled = known ? name.value.trim() !== known : name.value.trim() === ""));
  return h(
    "form",
    {
      class: "card",
      id: "account-delete-form",
      onsubmit: async (ev) => {
        ev.preventDefault();
        const account = name.value.trim();
        submit.disabled = true;
        msg.replaceChildren(notice("info", "deleting…"));
        try {
          await api("DELETE", `/api/v1/accounts/${enc(account)}`);
          // whatever view is shown now: the key no longer works, so the console signs out of it at once
          signOut();
          go("#/signin");
        } catch (e) {
          msg.replaceChildren(notice("error", e.message));
          submit.disabled = false;
        }
      },
    },
    h("h2", {}, "Delete the account"),
    h(
      "p",
      { id: "account-delete-note" },
      "Deletes the account with its applications and grains, once none of its applications runs (undeploy them first); its key stops working and its name is free again 2 minutes later. Type the account's name to confirm.",
    ),
    field("Account name", name),
    submit,
    msg,
  );
}
