// A folder as `sand deploy <folder>` uploads it (console/src/bundle.js against sandclient/_bundle.py's rules).
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, sep } from "node:path";
import { test } from "node:test";
import { unzipSync } from "fflate";
import {
  BundleError,
  bundle,
  PYTHON,
  relativePath,
  replaceInZip,
  requirementsOf,
  resourcesOf,
  skipped,
  text,
  unzipFiles,
  wanted,
  ZIP,
  zipFiles,
} from "../src/bundle.js";

const examples = new URL("../../examples/", import.meta.url).pathname;

/** Every file under dir as the page has it: [{path, data}] (the page reads only what wanted() keeps). */
function folder(dir) {
  const out = [];
  const walk = (d) => {
    for (const n of readdirSync(d)) {
      const p = join(d, n);
      if (statSync(p).isDirectory()) walk(p);
      else out.push({ path: relative(dir, p).split(sep).join("/"), data: new Uint8Array(readFileSync(p)) });
    }
  };
  walk(dir);
  return out.filter((f) => wanted(f.path));
}

const shape = (b) => b.uploads.map((u) => [u.grain, u.contentType, u.files]);

test("only .py grains: each its own text/x-python upload, the entry grain first; the workflow renamed", () => {
  const b = bundle(folder(join(examples, "hello")), { name: "hello-alice" });
  assert.equal(b.workflow.name, "hello-alice");
  assert.equal(b.workflow.entry, "greet");
  assert.equal(b.settings, null);
  assert.ok(!("settings" in b.workflow));
  assert.deepEqual(shape(b), [
    ["greet", PYTHON, ["greet.py"]],
    ["shout", PYTHON, ["shout.py"]],
  ]);
  assert.equal(text(b.uploads[0].body), readFileSync(join(examples, "hello/greet.py"), "utf8"));
});

// what sandclient's load_folder(...).uploads lists for these examples (resource, content type, files)
test("requirements.txt and the shared files ride in the entry grain's zip, as the CLI sends them", () => {
  const b = bundle(folder(join(examples, "image-pipeline")), { name: "img" });
  assert.deepEqual(shape(b), [
    ["extract_metadata", ZIP, ["extract_metadata.py", "fetch.sh", "mobilenet.py", "pipeline.py", "pth.py", "requirements.txt"]],
    ["make_thumbnail", PYTHON, ["make_thumbnail.py"]],
    ["recognize_objects", PYTHON, ["recognize_objects.py"]],
    ["verify_metadata", PYTHON, ["verify_metadata.py"]],
  ]);
  // the zip unzips back to the very files, at the top level, with requirements.txt among them
  const zip = b.uploads[0].body;
  const back = unzipSync(zip);
  assert.deepEqual(Object.keys(back).sort(), b.uploads[0].files.slice().sort());
  for (const f of b.uploads[0].files) {
    assert.deepEqual(Buffer.from(back[f]), readFileSync(join(examples, "image-pipeline", f)), f);
  }
  assert.equal(requirementsOf(unzipFiles(zip)), readFileSync(join(examples, "image-pipeline/requirements.txt"), "utf8"));
  assert.notEqual(requirementsOf(unzipFiles(zip)), "");
  // the same files make the same bytes (fixed times), so the same sha256
  assert.deepEqual(bundle(folder(join(examples, "image-pipeline"))).uploads[0].body, zip);
});

test("a sub-folder of shared files (webserver/site) and a shared helper module (wordcount)", () => {
  assert.deepEqual(shape(bundle(folder(join(examples, "webserver")))), [
    ["parse", ZIP, ["parse.py", "site/index.html", "site/logo.png", "site/style.css"]],
    ["not_found", PYTHON, ["not_found.py"]],
    ["serve_binary", PYTHON, ["serve_binary.py"]],
    ["serve_text", PYTHON, ["serve_text.py"]],
  ]);
  const zip = bundle(folder(join(examples, "webserver"))).uploads[0].body;
  assert.deepEqual(Buffer.from(unzipSync(zip)["site/logo.png"]), readFileSync(join(examples, "webserver/site/logo.png")));
  assert.deepEqual(shape(bundle(folder(join(examples, "wordcount")))), [
    ["identify_language", ZIP, ["identify_language.py", "stopwords.py"]],
    ["clean", PYTHON, ["clean.py"]],
    ["count", PYTHON, ["count.py"]],
  ]);
});

test("ASL: the Tasks' Resources, nested ones too; the entry is the first Task when StartAt is no Task", () => {
  const wf = JSON.parse(readFileSync(join(examples, "asl-orders/workflow.json"), "utf8"));
  assert.deepEqual(resourcesOf(wf).slice().sort(), ["charge", "price", "reserve", "total"]);
  assert.deepEqual(shape(bundle(folder(join(examples, "asl-orders")), { name: "orders" })), [
    ["total", PYTHON, ["total.py"]],
    ["charge", PYTHON, ["charge.py"]],
    ["price", PYTHON, ["price.py"]],
    ["reserve", PYTHON, ["reserve.py"]],
  ]);
});

test("settings.json becomes the workflow's settings; typed settings are merged over it (as --settings)", () => {
  const files = folder(join(examples, "hello"));
  files.push({ path: "settings.json", data: new TextEncoder().encode('{"timeout_s": 5, "env": {"A": "1"}}') });
  let b = bundle(files);
  assert.deepEqual(b.workflow.settings, { timeout_s: 5, env: { A: "1" } });
  b = bundle(files, { extraSettings: '{"env": {"B": "2"}, "concurrency": 4}' });
  assert.deepEqual(b.settings, { timeout_s: 5, env: { B: "2" }, concurrency: 4 });
  assert.deepEqual(b.workflow.settings, b.settings);
  assert.ok(!b.uploads.some((u) => u.files.includes("settings.json")));
  assert.throws(() => bundle(files, { extraSettings: "{nope" }), /the settings typed in is not valid JSON/);
  assert.throws(() => bundle(files, { extraSettings: "[1]" }), /not a JSON object/);
  // without settings.json, typed settings alone
  assert.deepEqual(bundle(folder(join(examples, "hello")), { extraSettings: '{"hosts": ["vm"]}' }).workflow.settings, { hosts: ["vm"] });
});

test("what is never uploaded: dot files and folders, __pycache__, node_modules, .pyc, the top-level README", () => {
  for (const p of [".git/config", "a/.hidden", "__pycache__/x.pyc", "pkg/node_modules/y.js", "g.pyc", "README.md", "readme.txt", "workflow.json", "settings.json"]) {
    assert.ok(skipped(p), p);
  }
  for (const p of ["g.py", "requirements.txt", "docs/README.md", "site/index.html", "pkg/__init__.py"]) assert.ok(!skipped(p), p);
  assert.ok(wanted("workflow.json") && wanted("settings.json") && !wanted(".git/HEAD"));
});

test("a package folder is its own zip; a grain without code is an error naming it", () => {
  const d = mkdtempSync(join(tmpdir(), "bundle-"));
  writeFileSync(join(d, "workflow.json"), JSON.stringify({ name: "p", entry: "a", functions: [{ name: "a", next: ["b"] }, { name: "b", next: ["end"], resource: "lib" }] }));
  writeFileSync(join(d, "a.py"), "def handle(e, c):\n    return e\n");
  mkdirSync(join(d, "lib"));
  writeFileSync(join(d, "lib/__init__.py"), "def handle(e, c):\n    return e\n");
  writeFileSync(join(d, "lib/util.py"), "X = 1\n");
  mkdirSync(join(d, "__pycache__"));
  writeFileSync(join(d, "__pycache__/a.cpython-312.pyc"), "junk");
  writeFileSync(join(d, "README.md"), "about");
  writeFileSync(join(d, "requirements.txt"), "requests==2.32.3\n");
  const b = bundle(folder(d));
  assert.deepEqual(shape(b), [
    ["a", ZIP, ["a.py", "requirements.txt"]],
    ["lib", ZIP, ["lib/__init__.py", "lib/util.py"]],
  ]);
  const files = folder(d).filter((f) => f.path !== "a.py");
  assert.throws(() => bundle(files), (e) => e instanceof BundleError && /grain\(s\) a run code 'a' but neither a\.py nor a\/__init__\.py/.test(e.message));
  assert.throws(() => bundle(files.filter((f) => f.path !== "workflow.json")), /workflow\.json is missing/);
});

test("loose files: paths from webkitRelativePath without the folder's name, else the name", () => {
  assert.equal(relativePath({ name: "greet.py", webkitRelativePath: "hello/greet.py" }), "greet.py");
  assert.equal(relativePath({ name: "index.html", webkitRelativePath: "web/site/index.html" }), "site/index.html");
  assert.equal(relativePath({ name: "greet.py", webkitRelativePath: "" }), "greet.py");
  assert.equal(relativePath({ name: "greet.py" }), "greet.py");
});

test("a file replaced in a zip leaves the others as they were, in their order", () => {
  const enc = (s) => new TextEncoder().encode(s);
  const zip = zipFiles([
    { path: "g.py", data: enc("old") },
    { path: "requirements.txt", data: enc("six==1.16.0\n") },
    { path: "site/a.bin", data: new Uint8Array([0, 1, 2, 255]) },
  ]);
  const after = unzipFiles(replaceInZip(zip, new Map([["g.py", enc("new")], ["site/b.py", enc("B = 2")]])));
  assert.deepEqual(after.map((f) => f.path), ["g.py", "requirements.txt", "site/a.bin", "site/b.py"]);
  assert.equal(text(after[3].data), "B = 2");
  assert.equal(text(after[0].data), "new");
  assert.equal(requirementsOf(after), "six==1.16.0\n");
  assert.deepEqual([...after[2].data], [0, 1, 2, 255]);
});
