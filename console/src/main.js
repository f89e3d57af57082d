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
let generation = 0; // each render of a view is one; a view's awaits may end after the next began
let shownPath = null; // the route drawn last: focus moves only when it changes

/** Called by a view to stop something when the user goes elsewhere (at once if it already went: live() false). */
export function onLeave(f, live = null) {
  if (live && !live()) f();
  else leaving.push(f);
}

/**
 * Whether the view being drawn now is still the one shown: a view takes it before its first await and checks it
 * after each, before it writes into the page, navigates or starts a timer (the user may have gone elsewhere).
 */
export function current() {
  const mine = generation;
  return () => mine === generation;
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

const DEVELOPER_ROUTES = ["apps", "executions", "account"];

async function render() {
  generation++;
  const live = current();
  for (const f of leaving.splice(0)) f();
  const s = session();
  let parts;
  try {
    parts = (location.hash || "#/").slice(1).split("/").filter(Boolean).map(decodeURIComponent);
  } catch {
    parts = ["not-found"]; // a malformed %-escape in the address
  }
  if (!s && parts[0] !== "signin") {
    go("#/signin");
    return;
  }
  // each key opens its own views: the admin key has no account (its calls to a developer's routes answer 401)
  const home = s && s.role === "operator" ? "#/admin/hosts" : "#/apps";
  if (s && (parts.length === 0 || parts[0] === "signin" || (s.role === "operator" ? DEVELOPER_ROUTES.includes(parts[0]) : parts[0] === "admin"))) {
    go(home);
    return;
  }
  const main = h("main", { id: "main", tabindex: "-1" });
  clear(root).append(nav(s), main);
  // a new route moves the keyboard's focus to the view, as a page load would (not a view drawn again after an action)
  const path = location.hash;
  if (path !== shownPath) {
    shownPath = path;
    main.focus({ preventScroll: true });
  }
  try {
    if (parts[0] === "signin") await signInView(main);
    else if (parts[0] === "apps" && parts[1]) await appView(main, parts[1], parts[2] || "overview", parts.slice(3));
    else if (parts[0] === "apps") await appsView(main);
    else if (parts[0] === "executions" && parts[1]) await executionView(main, parts[1]);
    else if (parts[0] === "account") await accountView(main);
    else if (parts[0] === "admin") await adminView(main, parts[1] || "hosts");
    else main.append(h("h1", {}, "Not found"), notice("error", `no view ${location.hash}`));
  } catch (e) {
    if (!live()) return; // the user went elsewhere while this view was loading
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
