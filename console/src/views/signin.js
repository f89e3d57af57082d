import { api, signIn } from "../api.js";
import { field, h, notice } from "../dom.js";
import { go } from "../main.js";

/**
 * Checks the key with a call its kind of key answers 200 (an account's key: the applications; the operator's admin
 * key: the hosts). The kind is chosen, not probed, so a right key never costs a refused call.
 */
export async function check(key, role) {
  const path = role === "operator" ? "/api/v1/admin/hosts" : "/api/v1/apps";
  await api("GET", path, { headers: { Authorization: `Bearer ${key}` }, noKey: true });
  return role;
}

export async function signInView(main) {
  const msg = h("div", { "aria-live": "polite" });
  const key = h("input", { type: "password", name: "key", id: "key", autocomplete: "off", required: true, spellcheck: "false" });
  const remember = h("input", { type: "checkbox", id: "remember", checked: true });
  const asDev = h("input", { type: "radio", name: "role", id: "role-developer", value: "developer", checked: true });
  const asOp = h("input", { type: "radio", name: "role", id: "role-operator", value: "operator" });
  // an account's keys start sand_; anything else is taken for the admin key until the user says otherwise
  key.addEventListener("input", () => {
    const dev = key.value.trim().startsWith("sand_") || key.value.trim() === "";
    asDev.checked = dev;
    asOp.checked = !dev;
  });
  const email = h("input", { type: "email", id: "email", autocomplete: "username" });
  const password = h("input", { type: "password", id: "password", autocomplete: "current-password" });
  const busy = (on) => main.querySelectorAll("button").forEach((b) => (b.disabled = on));

  async function enter(k, asRole) {
    const role = await check(k, asRole);
    signIn(k, role, remember.checked);
    go(role === "operator" ? "#/admin/hosts" : "#/apps");
  }
  const byKey = h(
    "form",
    {
      id: "signin-key",
      class: "card",
      onsubmit: async (ev) => {
        ev.preventDefault();
        busy(true);
        msg.replaceChildren();
        try {
          await enter(key.value.trim(), asOp.checked ? "operator" : "developer");
        } catch (e) {
          msg.append(notice("error", e.message));
        } finally {
          busy(false);
        }
      },
    },
    h("h2", {}, "With an API key"),
    h("p", { class: "muted" }, "An account's key (sand_…), or the operator's admin key for the operator's views."),
    field("API key", key),
    h(
      "fieldset",
      { class: "roles" },
      h("legend", {}, "The key is"),
      h("span", { class: "field check" }, asDev, h("label", { for: "role-developer" }, "an account's (developer)")),
      h("span", { class: "field check" }, asOp, h("label", { for: "role-operator" }, "the operator's admin key")),
    ),
    h("div", { class: "field check" }, remember, h("label", { for: "remember" }, "Keep me signed in in this tab (sessionStorage; never a cookie)")),
    h("button", { type: "submit", id: "signin" }, "Sign in"),
  );
  const byPassword = h(
    "form",
    {
      id: "signin-knix",
      class: "card",
      onsubmit: async (ev) => {
        ev.preventDefault();
        busy(true);
        msg.replaceChildren();
        try {
          const r = await api("POST", "/management", {
            json: { action: "logIn", data: { user: { email: email.value.trim(), password: password.value } } },
            noKey: true,
          });
          if (r.status !== "success") throw new Error((r.data && r.data.message) || "the e-mail or the password is not right");
          await enter(r.data.token, "developer");
        } catch (e) {
          msg.append(notice("error", e.message));
        } finally {
          busy(false);
        }
      },
    },
    h("h2", {}, "With a KNIX e-mail and password"),
    field("E-mail", email),
    field("Password", password),
    h("button", { type: "submit" }, "Sign in with password"),
  );
  main.append(h("h1", {}, "Sign in"), msg, h("div", { class: "cols" }, byKey, byPassword, signUpForm(remember)));
  key.focus();
}

/** What the page says about a refused sign-up: the API's message, with what to do for the usual refusals. */
export function signUpError(e) {
  if (e.status === 401 || e.status === 403) {
    return `Open sign-up is off on this platform: the operator creates accounts (with the admin key) and gives you the key. (${e.message})`;
  }
  return e.message;
}

/**
 * "Create an account": POST /api/v1/accounts {"name"} without a key answers 201 {"name", "api_key"}; the key is
 * shown once, read-only, and "Continue" signs in with it as that account's developer.
 */
function signUpForm(remember) {
  const msg = h("div", { "aria-live": "polite", id: "signup-message" });
  const result = h("div", { id: "signup-result" });
  const name = h("input", {
    type: "text",
    id: "signup-name",
    required: true,
    autocomplete: "off",
    spellcheck: "false",
    pattern: "[a-z0-9][a-z0-9_\\-]{0,62}",
    "aria-describedby": "signup-rule",
  });
  const submit = h("button", { type: "submit", id: "signup-submit" }, "Create the account");
  const shown = (account, apiKey) => {
    const keyField = h("input", { type: "text", id: "signup-key", class: "key-once", readonly: true, value: apiKey, spellcheck: "false", "aria-describedby": "signup-once" });
    keyField.addEventListener("focus", () => keyField.select());
    result.replaceChildren(
      field(`API key of ${account}`, keyField),
      h("p", { id: "signup-once", class: "notice ok" }, "Copy it now and keep it safe: it is not shown again (only its SHA-256 is stored)."),
      h(
        "button",
        {
          type: "button",
          id: "signup-continue",
          onclick: () => {
            signIn(apiKey, "developer", remember.checked, account);
            go("#/apps");
          },
        },
        `Continue as ${account}`,
      ),
    );
    keyField.focus();
  };
  return h(
    "form",
    {
      id: "signup",
      class: "card",
      onsubmit: async (ev) => {
        ev.preventDefault();
        submit.disabled = true;
        msg.replaceChildren(notice("info", "creating…"));
        result.replaceChildren();
        try {
          const r = await api("POST", "/api/v1/accounts", { json: { name: name.value.trim() }, noKey: true });
          msg.replaceChildren(notice("ok", `account ${r.name} created`));
          shown(r.name, r.api_key);
        } catch (e) {
          msg.replaceChildren(notice("error", signUpError(e)));
        } finally {
          submit.disabled = false;
        }
      },
    },
    h("h2", {}, "Create an account"),
    h("p", { class: "muted", id: "signup-rule" }, "A name of 1-63 lower-case letters, digits, _ and -, starting with a letter or digit. You get the account's API key, once."),
    field("Account name", name),
    submit,
    msg,
    result,
  );
}
