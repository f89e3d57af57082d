// The console's shell: a header with the navigation, a main region, and hash routes (#/apps, #/apps/<app>/<tab>,
// #/executions/<id>, #/account, #/admin/<tab>, #/signin). Hash routing keeps every URL the frontend serves index.html for.
import "uplot/dist/uPlot.min.css";
import "./style.css";
import { session, signOut } from "./api.js";
import { clear, h, notice } from "./dom.js";
import { accountView } from "./views/account.js";
import { adminView } from "./views/admin.js";
import { appView } from "./views/app.js";
import { appsView } from "./views/apps.js";
import { executionView } from "./views/execution.js";
import { signInView } from "./views/signin.js";

const root = document.getElementById("app");
let leaving = []; // what the current view stops when another is shown (timers of live logs)

/** Called by a view to stop something when the user goes elsewhere. */
export function onLeave(f) {
  leaving.push(f);
}

export function go(hash) {
  if (location.hash === hash) render();
  else location.hash = hash;
}

function nav(s) {
  const items = [];
  if (s && s.role === "developer") items.push(["#/apps", "Applications"], ["#/account", "Account"]);
  if (s && s.role === "operator") items.push(["#/admin/hosts", "Hosts"], ["#/admin/apps", "All applications"], ["#/admin/accounts", "Accounts"], ["#/admin/platform", "Platform"]);
  const here = location.hash || "#/";
  return h(
    "header",
    { class: "top" },
    h("a", { class: "brand", href: "#/" }, "SAND console"),
    h(
      "nav",
      { "aria-label": "main" },
      h(
        "ul",
        {},
        items.map(([href, text]) =>
          h("li", {}, h("a", { href, "aria-current": here.startsWith(href.split("/").slice(0, 3).join("/")) ? "page" : null }, text)),
        ),
      ),
    ),
    s
      ? h(
          "div",
          { class: "who" },
          h("span", { class: "muted" }, s.role === "operator" ? "operator (admin key)" : s.account || "developer"),
          h(
            "button",
            {
              type: "button",
              id: "sign-out",
              onclick: () => {
                signOut();
                go("#/signin");
              },
            },
            "Sign out",
          ),
        )
      : null,
  );
}

async function render() {
  for (const f of leaving.splice(0)) f();
  const s = session();
  const parts = (location.hash || "#/").slice(1).split("/").filter(Boolean).map(decodeURIComponent);
  if (!s && parts[0] !== "signin") {
    go("#/signin");
    return;
  }
  if (s && (parts.length === 0 || parts[0] === "signin")) {
    go(s.role === "operator" ? "#/admin/hosts" : "#/apps");
    return;
  }
  const main = h("main", { id: "main", tabindex: "-1" });
  clear(root).append(nav(s), main);
  try {
    if (parts[0] === "signin") await signInView(main);
    else if (parts[0] === "apps" && parts[1]) await appView(main, parts[1], parts[2] || "overview", parts.slice(3));
    else if (parts[0] === "apps") await appsView(main);
    else if (parts[0] === "executions" && parts[1]) await executionView(main, parts[1]);
    else if (parts[0] === "account") await accountView(main);
    else if (parts[0] === "admin") await adminView(main, parts[1] || "hosts");
    else main.append(h("h1", {}, "Not found"), notice("error", `no view ${location.hash}`));
  } catch (e) {
    if (e && e.status === 401) {
      signOut();
      go("#/signin");
      return;
    }
    main.append(notice("error", e && e.message ? e.message : String(e)));
  }
}

window.addEventListener("hashchange", render);
render();
