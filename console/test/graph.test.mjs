// The parts of the console that are logic, not page: workflows to graphs, errors to nodes (node --test).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { locate, model } from "../src/graph.js";

const hello = {
  name: "hello",
  entry: "greet",
  functions: [
    { name: "greet", next: ["shout"], potentialNext: ["end"] },
    { name: "shout", next: ["end"], resource: "loud" },
  ],
};
const orders = JSON.parse(readFileSync(new URL("../../examples/asl-orders/workflow.json", import.meta.url)));
const edges = (m) => m.edges.map((e) => `${e.from}>${e.to}:${e.kind}`);

test("SAND's format: start, one node per function, next and potentialNext, end", () => {
  const m = model(hello);
  assert.deepEqual([...m.nodes.keys()], ["start", "end", "f:greet", "f:shout"]);
  assert.equal(m.nodes.get("f:shout").grain, "loud");
  assert.deepEqual(edges(m), ["start>f:greet:next", "f:greet>f:shout:next", "f:greet>end:potential", "f:shout>end:next"]);
});

test("ASL: Choice, Map iterator, Parallel branches and Catch, each where it belongs", () => {
  const m = model(orders);
  assert.ok(m.asl);
  for (const id of ["s:Check", "s:Price/it/PriceItem", "s:Settle/b0/Charge", "s:Settle/b1/Reserve", "s:Settle/join"]) {
    assert.ok(m.nodes.has(id), id);
  }
  assert.equal(m.nodes.get("s:Price/it/PriceItem").cluster, "c:Price");
  assert.equal(m.nodes.get("s:Price/it/PriceItem").grain, "price");
  const e = edges(m);
  for (const want of [
    "start>s:Check:next",
    "s:Check>s:Empty:choice",
    "s:Check>s:Price:choice",
    "s:Price>s:Price/it/PriceItem:fanout",
    "s:Price/it/PriceItem>s:Price/join:next",
    "s:Price/join>s:Sum:next",
    "s:Settle>s:Settle/b1/Reserve:fanout",
    "s:Settle/join>s:Declined:catch",
    "s:Empty>end:next",
  ]) {
    assert.ok(e.includes(want), `${want} not in ${e.join(" ")}`);
  }
});

test("errors go on the node and field they name", () => {
  const m = model(hello);
  assert.deepEqual(locate(m, "functions[1] (shout).next names unknown grain 'x'"), [
    { node: "f:shout", field: "next", message: "functions[1] (shout).next names unknown grain 'x'" },
  ]);
  const deploy = "vm: grain loud failed to load: SyntaxError: expected ':' (loud.py, line 1) [host vm, attempt 1]";
  assert.deepEqual(locate(m, deploy).map((x) => x.node), ["f:shout"]);
  assert.deepEqual(locate(m, "the application is not deployed"), []);
  const asl = model(orders);
  const msg = 'States.Settle.Branches[0].States.Charge.Next: "Missing" is not a state of this machine';
  assert.deepEqual(locate(asl, msg).map((x) => [x.node, x.field]), [["s:Settle/b0/Charge", "Next"]]);
  const map = 'States.Price.Iterator.States.PriceItem.Resource: "" is empty';
  assert.deepEqual(locate(asl, map).map((x) => [x.node, x.field]), [["s:Price/it/PriceItem", "Resource"]]);
  assert.deepEqual(locate(asl, "States.Check.Default: missing").map((x) => [x.node, x.field]), [["s:Check", "Default"]]);
});
