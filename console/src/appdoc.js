// What the Overview's editor holds: an application's workflow with its "settings" member, as PUT /api/v1/apps/{app}
// takes it back. GET /api/v1/apps/{app} answers settings.request_timeout_s (0 when never set) and settings.hosts
// ([] when unset) always (frontend AppsHandler.describe), but the PUT (AppsHandler.Settings.parse) takes
// request_timeout_s only in 1..300: the answer as it is would be refused. Pure logic: console/test/appdoc.test.mjs.

/** The settings the GET answered, as the PUT takes them: the unset request_timeout_s and hosts left out. */
export function editableSettings(settings) {
  const out = settings && typeof settings === "object" && !Array.isArray(settings) ? { ...settings } : {};
  // 0 (or null) is "the frontends' default": the PUT says it by leaving the member out
  if (out.request_timeout_s === 0 || out.request_timeout_s === null) delete out.request_timeout_s;
  // [] (or null) is "every live host"; a list is refused when the operator lets no one choose (hosts.choose=false)
  if (out.hosts === null || (Array.isArray(out.hosts) && out.hosts.length === 0)) delete out.hosts;
  return out;
}

/** The document edited: the workflow (either format) with a "settings" member, saving it unchanged is accepted. */
export function editableDoc(app) {
  const wf = app && app.workflow && typeof app.workflow === "object" && !Array.isArray(app.workflow) ? app.workflow : {};
  const { settings: _ignored, ...workflow } = wf; // the platform keeps settings beside the workflow, never in it
  return { ...workflow, settings: editableSettings(app && app.settings) };
}
