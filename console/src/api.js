// The public REST API (docs/api.md), from the browser. The key lives in this module's memory and, when the user
// asks, in the tab's sessionStorage; never in a cookie (no request is sent with credentials, so there is nothing
// for another site to ride on: no CSRF surface).
import { parseAnswer } from "./answer.js";
import { named } from "./deploy.js";

const STORE = "sand.console.key";
const ROLE = "sand.console.role";
const ACCOUNT = "sand.console.account";

let key = sessionStorage.getItem(STORE);
let role = sessionStorage.getItem(ROLE);
// the account's name when the console learnt it (a sign-up here); the API has no call that answers it for a key
let account = sessionStorage.getItem(ACCOUNT);

export function session() {
  return key ? { key, role, account } : null;
}

export function signIn(k, r, remember, name = null) {
  key = k;
  role = r;
  account = name;
  for (const [item, value] of [[STORE, k], [ROLE, r], [ACCOUNT, name]]) {
    if (remember && value) sessionStorage.setItem(item, value);
    else sessionStorage.removeItem(item);
  }
}

export function signOut() {
  key = null;
  role = null;
  account = null;
  for (const item of [STORE, ROLE, ACCOUNT]) sessionStorage.removeItem(item);
}

export class ApiError extends Error {
  constructor(status, code, message, body) {
    super(message);
    this.status = status;
    this.code = code;
    this.body = body;
  }
}

/**
 * One call. opts: json (a value sent as JSON), body + contentType (sent as is), raw (answer {status, data, headers}
 * whatever the status, instead of throwing ApiError on a non-2xx), noKey (send no Authorization), binary (answer
 * the body of a 2xx as an ArrayBuffer, e.g. a zip grain's code; an error is read as usual). A body is parsed as
 * JSON only when its Content-Type is JSON (answer.js); any other (a .py grain's code, Prometheus text) is its text.
 */
export async function api(method, path, opts = {}) {
  const headers = {};
  if (key && !opts.noKey) headers.Authorization = `Bearer ${key}`;
  let body;
  if (opts.json !== undefined) {
    body = JSON.stringify(opts.json);
    headers["Content-Type"] = "application/json";
  } else if (opts.body !== undefined) {
    body = opts.body;
    headers["Content-Type"] = opts.contentType || "text/plain";
  }
  if (opts.headers) Object.assign(headers, opts.headers);
  const r = await fetch(path, { method, headers, body, credentials: "omit", cache: "no-store", redirect: "error" });
  if (opts.binary && r.ok && !opts.raw) return r.arrayBuffer();
  const text = await r.text();
  // JSON only when the answer says so: a grain's code or Prometheus text stays text even when it parses as JSON
  const data = parseAnswer(text, r.headers.get("Content-Type"));
  if (opts.raw) return { status: r.status, data, headers: r.headers, text };
  if (!r.ok) {
    const e = data && typeof data === "object" ? data.error : null;
    throw new ApiError(
      r.status,
      (e && e.code) || `http_${r.status}`,
      (e && e.message) || `${method} ${path} answered ${r.status}`,
      data,
    );
  }
  return data;
}

export const enc = encodeURIComponent;

/** GET /api/v1/apps/{app}, its errors naming the application as the developer named it. */
export async function getApp(name) {
  return named(await api("GET", `/api/v1/apps/${enc(name)}`));
}
