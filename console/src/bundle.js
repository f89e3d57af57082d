// An application folder as `sand deploy <folder>` uploads it (sandclient/_bundle.py and load_folder in
// sandclient/client.py, rule for rule): workflow.json (renamed to the chosen name), settings.json as the workflow's
// "settings" member (the settings typed in the form merged over it, as --settings is), and one upload per resource
// the workflow runs. A resource is `<r>.py` (text/x-python) or the package folder `<r>/`; every other file
// (requirements.txt, helper modules, data) is shared, and the shared files ride in ONE zip, the entry grain's: on a
// host every zip of an application unpacks into the same folder, and a file may come from one resource only.
// Pure logic, no page: tested by console/test/bundle.test.mjs. Zips are lists of files (zip.js), never objects keyed
// by path (a file named __proto__ would be lost).
import { strFromU8, strToU8 } from "fflate";
import { unzip, zip } from "./zip.js";

export const PYTHON = "text/x-python";
export const ZIP = "application/zip";
const SKIP_FILES = new Set(["workflow.json", "settings.json"]);
const SKIP_DIRS = new Set(["__pycache__", "node_modules"]);
// a fixed time keeps a zip's bytes the same for the same files (local time: a zip stores DOS local times)
const ZIP_DATE = new Date(2020, 0, 1, 0, 0, 0);

export class BundleError extends Error {}

/** A chosen file's path in its folder: webkitRelativePath without the folder's own name, else the file's name. */
export function relativePath(file) {
  const rel = file.webkitRelativePath || "";
  const i = rel.indexOf("/");
  return i >= 0 ? rel.slice(i + 1) : file.name;
}

/** Whether a file of the folder is never uploaded (what _bundle._skipped says). */
export function skipped(path) {
  const parts = path.split("/");
  const name = parts[parts.length - 1];
  return (
    parts.some((p) => p.startsWith(".") || SKIP_DIRS.has(p)) ||
    /\.py[co]$/.test(name) ||
    (parts.length === 1 && (SKIP_FILES.has(name) || name.toUpperCase().startsWith("README")))
  );
}

/** Whether the page needs a file's bytes at all: the workflow, the settings and whatever is uploaded. */
export function wanted(path) {
  return path === "workflow.json" || path === "settings.json" || !skipped(path);
}

// Python sorts paths part by part ("a/b" before "a.txt"), not as strings
function byParts(a, b) {
  const x = a.split("/");
  const y = b.split("/");
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    if (x[i] !== y[i]) return x[i] < y[i] ? -1 : 1;
  }
  return x.length - y.length;
}

function parseJson(text, what) {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new BundleError(`${what} is not valid JSON: ${e.message}`);
  }
}

/**
 * The grains of a workflow and the code each runs, in the workflow's order, as the platform reads them
 * (contracts Workflow.grains, grainworker/workflow.py): [{grain, code}] where code is the resource it runs ("" for
 * an ASL state other than Task). SAND's format: a function runs `resource`, else its own name; ASL: a Task runs its
 * Resource, the states of Parallel branches and Map iterators included. Also answers the entry grain.
 */
export function grainsOf(workflow) {
  const out = [];
  if (!workflow || typeof workflow !== "object") return { grains: out, entry: null };
  if (workflow.StartAt !== undefined && workflow.States && typeof workflow.States === "object") {
    const machine = (sm) => {
      const states = sm && sm.States && typeof sm.States === "object" ? sm.States : {};
      const first = out.length;
      for (const [name, st] of Object.entries(states)) {
        out.push({ grain: name, code: st && st.Type === "Task" && typeof st.Resource === "string" ? st.Resource : "" });
      }
      const start = out.slice(first).find((g) => g.grain === sm.StartAt) || null;
      // nested machines come after every state of this one, as grainworker/workflow.py's _flatten adds them
      for (const st of Object.values(states)) {
        if (st && st.Type === "Parallel") for (const b of st.Branches || []) machine(b);
        else if (st && st.Type === "Map") machine(st.ItemProcessor || st.Iterator || {});
      }
      return start;
    };
    const start = machine(workflow);
    return { grains: out, entry: start };
  }
  for (const f of Array.isArray(workflow.functions) ? workflow.functions : []) {
    if (f && typeof f.name === "string") out.push({ grain: f.name, code: f.resource || f.name });
  }
  return { grains: out, entry: out.find((g) => g.grain === workflow.entry) || null };
}

/** The resources (uploaded grain codes) a workflow runs, each once, in its order (Workflow.resources()). */
export function resourcesOf(workflow) {
  return [...new Set(grainsOf(workflow).grains.map((g) => g.code).filter(Boolean))];
}

/**
 * A zip of [{path, data}], deflated, with fixed times and mode 644, sizes in the local headers (as _bundle._zip
 * makes it), in the list's order. zip.js keeps the files in a list, so any name is a file's, __proto__ included.
 */
export function zipFiles(files) {
  return zip(files, { mtime: ZIP_DATE, attrs: 0o644 });
}

/** A zip's files [{path, data}] in the zip's order (folders' own entries left out). */
export function unzipFiles(bytes) {
  return unzip(bytes).filter((f) => !f.path.endsWith("/"));
}

/** The zip with some files' contents replaced or added (changes: Map path -> bytes), every other file as it was. */
export function replaceInZip(bytes, changes) {
  const files = unzipFiles(bytes).map((f) => (changes.has(f.path) ? { path: f.path, data: changes.get(f.path) } : f));
  for (const [path, data] of changes) if (!files.some((f) => f.path === path)) files.push({ path, data });
  return zipFiles(files);
}

/** A zip grain's top-level requirements.txt as text ("" without one): what the platform installs for it. */
export function requirementsOf(files) {
  const r = files.find((f) => f.path === "requirements.txt");
  return r ? strFromU8(r.data) : "";
}

export const text = strFromU8;
export const bytes = strToU8;

/**
 * Files of a folder ([{path, data: Uint8Array}], paths relative to the folder) -> what `sand deploy` sends:
 * {workflow (the body of PUT /api/v1/apps/{name}, with "settings" when there are any), settings (or null), entry,
 * uploads: [{grain, contentType, body, files}]}, the entry grain's resource first. name renames the workflow;
 * extraSettings (a JSON object's text, or empty) is merged over settings.json. Throws BundleError saying what to fix.
 */
export function bundle(files, { name = "", extraSettings = "" } = {}) {
  const byPath = new Map(files.map((f) => [f.path, f]));
  let wfFile = byPath.get("workflow.json");
  if (!wfFile) {
    // loose files chosen one by one: the one .json that is not settings.json
    const jsons = files.filter((f) => !f.path.includes("/") && f.path.endsWith(".json") && f.path !== "settings.json");
    if (jsons.length === 1) wfFile = jsons[0];
  }
  if (!wfFile) throw new BundleError("workflow.json is missing: choose the application's folder (workflow.json and the grains' .py files)");
  const doc = parseJson(strFromU8(wfFile.data), wfFile.path);
  if (!doc || typeof doc !== "object" || Array.isArray(doc)) throw new BundleError(`${wfFile.path} is not a JSON object`);
  if (name) doc.name = name;
  let settings = null;
  const sFile = byPath.get("settings.json");
  if (sFile) settings = parseJson(strFromU8(sFile.data), "settings: settings.json");
  if (extraSettings && extraSettings.trim()) {
    const extra = parseJson(extraSettings, "the settings typed in");
    if (!extra || typeof extra !== "object" || Array.isArray(extra)) throw new BundleError("the settings typed in are not a JSON object");
    settings = { ...(settings && typeof settings === "object" ? settings : {}), ...extra };
  }
  const workflow = settings === null ? doc : { ...doc, settings };

  const { grains, entry: entryGrain } = grainsOf(doc);
  const codes = grains.map((g) => g.code).filter(Boolean);
  const entry = (entryGrain && entryGrain.code) || codes[0] || "";
  const resources = (entry ? [entry] : []).concat([...new Set(codes)].filter((c) => c !== entry).sort());
  const all = files.map((f) => f.path).filter((p) => p !== wfFile.path && !skipped(p)).sort(byParts);
  const own = new Map();
  for (const r of resources) {
    if (byPath.has(`${r}.py`)) own.set(r, [`${r}.py`]);
    else if (byPath.has(`${r}/__init__.py`)) own.set(r, all.filter((p) => p.split("/")[0] === r));
    else {
      const users = [...new Set(grains.filter((g) => g.code === r).map((g) => g.grain))].sort();
      throw new BundleError(`grain(s) ${users.join(", ")} run code '${r}' but neither ${r}.py nor ${r}/__init__.py was chosen`);
    }
  }
  const taken = new Set([...own.values()].flat());
  const shared = all.filter((p) => !taken.has(p));
  const uploads = resources.map((r) => {
    const paths = own.get(r).concat(r === entry ? shared : []);
    if (paths.length === 1 && paths[0].endsWith(".py") && !paths[0].includes("/")) {
      return { grain: r, contentType: PYTHON, body: byPath.get(paths[0]).data, files: paths };
    }
    return { grain: r, contentType: ZIP, body: zipFiles(paths.map((p) => ({ path: p, data: byPath.get(p).data }))), files: paths };
  });
  return { workflow, settings, entry, uploads };
}
