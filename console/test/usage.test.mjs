// Which applications run each shared grain (console/src/usage.js): the platform's rule, own grains first.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { sharedUsers } from "../src/usage.js";

const hello = { name: "hello", entry: "greet", functions: [{ name: "greet", next: ["shout"] }, { name: "shout", next: ["end"], resource: "loud" }] };
const orders = JSON.parse(readFileSync(new URL("../../examples/asl-orders/workflow.json", import.meta.url)));
const names = (m) => Object.fromEntries([...m].map(([g, users]) => [g, users.map((u) => u.name)]));

test("an application uses a shared grain its workflow runs and it has none of its own by that name", () => {
  const apps = [
    { name: "hello-a", status: "deployed", workflow: hello, own: [] },
    { name: "hello-b", status: "undeployed", workflow: hello, own: ["greet", "loud"] },
    { name: "orders", status: "failed", workflow: orders, own: ["total", "charge", "reserve"] },
  ];
  const used = sharedUsers(["greet", "loud", "shout", "price", "unused"], apps);
  assert.deepEqual(names(used), { greet: ["hello-a"], loud: ["hello-a"], shout: [], price: ["orders"], unused: [] });
  assert.deepEqual(used.get("price"), [{ name: "orders", status: "failed" }]);
});

test("a function's resource is what it runs, not its name; ASL states other than Task run nothing", () => {
  const apps = [{ name: "x", status: "deployed", workflow: orders, own: [] }];
  const used = sharedUsers(["Check", "Price", "PriceItem", "price", "charge"], apps);
  assert.deepEqual(names(used), { Check: [], Price: [], PriceItem: [], price: ["x"], charge: ["x"] });
  assert.deepEqual(names(sharedUsers(["shout", "loud"], [{ name: "h", workflow: hello, own: [] }])), { shout: [], loud: ["h"] });
});

test("users listed by name; a workflow that is not one names nothing", () => {
  const apps = ["b", "a", "c"].map((name) => ({ name, status: "deployed", workflow: hello, own: [] }));
  apps.push({ name: "broken", status: "undeployed", workflow: null, own: [] });
  assert.deepEqual(names(sharedUsers(["greet"], apps)), { greet: ["a", "b", "c"] });
});
