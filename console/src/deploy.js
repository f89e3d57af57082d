// Following a deploy from GET /api/v1/apps/{app}, as `sand deploy` does (sandclient/client.py wait and _progress):
// "deploying (k/n hosts)" until the status is deployed or failed, for the version the deploy call answered or a
// later one. Pure logic, no page: tested by console/test/deploy.test.mjs.

/**
 * The application's state with its internal id in error messages replaced by its name, as `sand` prints them
 * (the platform says "application add6b61e73c22: its requirements could not be installed").
 */
export function named(app) {
  if (!app || typeof app !== "object" || !app.id || !app.name) return app;
  const say = (e) => (typeof e === "string" ? e.split(`application ${app.id}`).join(`application ${app.name}`) : e);
  return { ...app, error: say(app.error), hosts: Array.isArray(app.hosts) ? app.hosts.map((x) => (x && x.error ? { ...x, error: say(x.error) } : x)) : app.hosts };
}

/** Every error an application's state carries, each once: its own, then each host's that says something more. */
export function errorsOf(app) {
  const out = [];
  if (app && app.error) out.push(String(app.error));
  for (const x of (app && app.hosts) || []) {
    if (!x || !x.error) continue;
    const e = String(x.error);
    if (out.some((o) => o === e || o.includes(e))) continue;
    out.push(x.host ? `${x.host}: ${e}` : e);
  }
  return out;
}

/**
 * Where a deploy is: {state: "waiting" | "deploying" | "deployed" | "failed", text, errors}. version: the one the
 * deploy call answered (an older state is the previous deploy's); want: "deployed" (or "undeployed").
 */
export function progressOf(app, version = null, want = "deployed") {
  const a = app && typeof app === "object" ? app : {};
  if (version !== null && version !== undefined && typeof a.version === "number" && a.version < version) {
    return { state: "waiting", text: `waiting for version ${version}`, errors: [] };
  }
  const hosts = Array.isArray(a.hosts) ? a.hosts : [];
  // a host where the application failed runs nothing of it: for an undeploy, it is done
  const done = hosts.filter((x) => x && (x.status === want || (want === "undeployed" && ["stopped", "failed"].includes(x.status)))).length;
  const parts = hosts.length && hosts.some((x) => x && x.status) ? ` (${done}/${hosts.length} hosts)` : "";
  const text = `${a.status || "?"}${parts}`;
  if (a.status === want) return { state: "deployed", text, errors: [] };
  if (a.status === "failed") return { state: "failed", text, errors: errorsOf(a) };
  return { state: "deploying", text, errors: [] };
}

/**
 * Follows a deploy: get() reads the application (GET /api/v1/apps/{app}) every everyMs until it is deployed or
 * failed, for at most forMs; onProgress(p) sees each reading. Answers the last progressOf(), with state "timeout"
 * when time ran out and "stopped" when stopped() said so (the user went elsewhere).
 */
export async function follow(get, version, { onProgress = () => {}, everyMs = 500, forMs = 120_000, stopped = () => false, sleep = (ms) => new Promise((r) => setTimeout(r, ms)), now = () => Date.now() } = {}) {
  const until = now() + forMs;
  for (;;) {
    if (stopped()) return { state: "stopped", text: "", errors: [] };
    const app = await get();
    const p = { ...progressOf(app, version), app };
    onProgress(p);
    if (p.state === "deployed" || p.state === "failed") return p;
    if (now() >= until) return { ...p, state: "timeout", text: `still ${p.text} after ${Math.round(forMs / 1000)} s` };
    await sleep(everyMs);
  }
}
