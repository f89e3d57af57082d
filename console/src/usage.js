// Which of the account's applications use each of its shared grains, by the platform's rule
// (GrainsHandler.sharedUsers, DeploymentsHandler): an application runs, for each resource its workflow names
// (contracts Workflow.resources(): a function's `resource`, else its name; an ASL Task's Resource), its own grain
// of that name if it has one, else the account's shared grain. Pure logic: tested by console/test/usage.test.mjs.
import { resourcesOf } from "./bundle.js";

/**
 * apps: [{name, status, workflow, own: [own grain names]}] -> Map shared grain name -> [{name, status}] of the
 * applications that run it (only for names in shared).
 */
export function sharedUsers(shared, apps) {
  const out = new Map(shared.map((g) => [g, []]));
  for (const a of apps) {
    const own = new Set(a.own || []);
    for (const r of resourcesOf(a.workflow)) {
      if (out.has(r) && !own.has(r)) out.get(r).push({ name: a.name, status: a.status });
    }
  }
  for (const users of out.values()) users.sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0));
  return out;
}
