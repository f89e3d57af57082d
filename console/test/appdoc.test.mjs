// The Overview's workflow-and-settings document (console/src/appdoc.js): what the GET answers, saved unchanged, is
// what the PUT accepts.
import assert from "node:assert/strict";
import { test } from "node:test";
import { editableDoc, editableSettings } from "../src/appdoc.js";

const wf = { name: "hello", entry: "greet", functions: [{ name: "greet", next: ["end"] }] };

test("never-set request_timeout_s (0) and hosts ([]) are left out: the PUT refuses request_timeout_s=0", () => {
  // as docs/api.md shows a new application's answer
  const app = { name: "hello-alice", status: "undeployed", version: 0, workflow: wf, settings: { request_timeout_s: 0, hosts: [] } };
  assert.deepEqual(editableDoc(app), { ...wf, settings: {} });
  assert.deepEqual(editableSettings({ request_timeout_s: null, hosts: null }), {});
});

test("set values stay as they are", () => {
  const settings = { timeout_s: 10, request_timeout_s: 5, hosts: ["vm", "vm2"], env: { A: "1" }, triggers: [{ name: "t", cron: "* * * * *" }] };
  assert.deepEqual(editableDoc({ workflow: wf, settings }), { ...wf, settings });
  assert.deepEqual(editableSettings({ timeout_s: 10, request_timeout_s: 0, hosts: [] }), { timeout_s: 10 });
});

test("the answer is not changed; odd answers give an empty document", () => {
  const settings = { request_timeout_s: 0, hosts: [] };
  editableSettings(settings);
  assert.deepEqual(settings, { request_timeout_s: 0, hosts: [] });
  assert.deepEqual(editableDoc({}), { settings: {} });
  assert.deepEqual(editableDoc({ workflow: "not json", settings: "x" }), { settings: {} });
  assert.deepEqual(editableDoc(null), { settings: {} });
});

test("an ASL workflow keeps its members", () => {
  const asl = { Comment: "orders", StartAt: "A", States: { A: { Type: "Task", Resource: "a", End: true } } };
  assert.deepEqual(editableDoc({ workflow: asl, settings: { request_timeout_s: 30, hosts: [] } }), { ...asl, settings: { request_timeout_s: 30 } });
});
