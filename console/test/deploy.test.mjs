// Following a deploy: the progress line and where it ends (console/src/deploy.js).
import assert from "node:assert/strict";
import { test } from "node:test";
import { errorsOf, follow, named, progressOf } from "../src/deploy.js";

const host = (h, status, error = null) => ({ host: h, status, error, alive: true });

test("deploying (k/n hosts), then deployed", () => {
  assert.deepEqual(progressOf({ status: "deploying", version: 2, hosts: [host("a", "deployed"), host("b", "deploying")] }, 2), {
    state: "deploying",
    text: "deploying (1/2 hosts)",
    errors: [],
  });
  assert.equal(progressOf({ status: "deployed", version: 2, hosts: [host("a", "deployed")] }, 2).state, "deployed");
  assert.equal(progressOf({ status: "deploying", version: 1, hosts: [] }, 1).text, "deploying");
});

test("the previous version's state is not this deploy's", () => {
  const p = progressOf({ status: "failed", version: 1, error: "old", hosts: [] }, 2);
  assert.equal(p.state, "waiting");
  assert.equal(p.text, "waiting for version 2");
  assert.equal(progressOf({ status: "deployed", version: 3, hosts: [] }, 2).state, "deployed");
  assert.equal(progressOf({ status: "deployed", hosts: [] }).state, "deployed");
});

test("failed: the whole error, the application's and each host's that adds something", () => {
  const pip =
    "vm: requirements failed to install: ERROR: Could not find a version that satisfies the requirement no-such-package==9.9 (from versions: none)\nERROR: No matching distribution found for no-such-package==9.9";
  const app = { status: "failed", version: 1, error: pip, hosts: [host("vm", "failed", pip.slice(4)), host("vm2", "failed", "killed for memory")] };
  const p = progressOf(app, 1);
  assert.equal(p.state, "failed");
  assert.equal(p.text, "failed (0/2 hosts)");
  assert.deepEqual(p.errors, [pip, "vm2: killed for memory"]);
  assert.deepEqual(errorsOf({ status: "failed", hosts: [host("x", "failed", "boom")] }), ["x: boom"]);
  assert.deepEqual(errorsOf({}), []);
});

test("an undeploy: a failed host is done", () => {
  assert.equal(progressOf({ status: "undeploying", hosts: [host("a", "stopped"), host("b", "failed"), host("c", "deployed")] }, null, "undeployed").text, "undeploying (2/3 hosts)");
});

test("follow: reads until deployed or failed, bounded in time, stopped when the user leaves", async () => {
  const states = [
    { status: "failed", version: 1, error: "old", hosts: [] },
    { status: "deploying", version: 2, hosts: [host("a", "deploying")] },
    { status: "deployed", version: 2, hosts: [host("a", "deployed")] },
  ];
  let i = 0;
  let clock = 0;
  const seen = [];
  const opts = { onProgress: (p) => seen.push(p.text), sleep: async (ms) => (clock += ms), now: () => clock };
  const p = await follow(async () => states[Math.min(i++, states.length - 1)], 2, opts);
  assert.equal(p.state, "deployed");
  assert.deepEqual(seen, ["waiting for version 2", "deploying (0/1 hosts)", "deployed (1/1 hosts)"]);
  clock = 0;
  const slow = await follow(async () => states[1], 2, { ...opts, forMs: 2000 });
  assert.equal(slow.state, "timeout");
  assert.equal(slow.text, "still deploying (0/1 hosts) after 2 s");
  assert.equal(clock, 2000); // read every 500 ms: at 0, 500, ..., 2000
  assert.equal((await follow(async () => states[1], 2, { ...opts, stopped: () => true })).state, "stopped");
  const failed = await follow(async () => ({ status: "failed", version: 2, error: "pip said no", hosts: [] }), 2, opts);
  assert.deepEqual([failed.state, failed.errors], ["failed", ["pip said no"]]);
});

test("errors name the application as its developer named it, not by its internal id", () => {
  const app = { id: "aef1bc7f91bae", name: "my-app", error: "vm: application aef1bc7f91bae: its requirements could not be installed", hosts: [{ host: "vm", error: "application aef1bc7f91bae: pip failed" }, { host: "h2" }] };
  const n = named(app);
  assert.equal(n.error, "vm: application my-app: its requirements could not be installed");
  assert.equal(n.hosts[0].error, "application my-app: pip failed");
  assert.deepEqual(n.hosts[1], { host: "h2" });
  assert.equal(named(null), null);
});
