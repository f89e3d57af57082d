import assert from "node:assert/strict";
import { test } from "node:test";
import { errorPlace, grainOf, rows, splitStep } from "../src/timeline.js";

const hops = [
  ["frontend: request received", 0],
  ["host agent: event queued", 0.5],
  ["greet: worker polled", 3.9],
  ["greet: handler ended", 4.8],
  ["greet [Price item 1]: worker polled", 5],
  ["shout: worker polled", 7.4],
  ["shout: outputs published", 16.4],
  ["frontend: reply sent", 21],
].map(([step, at_ms]) => ({ step, at_ms, where: "vm" }));

test("one row per place, in the order first seen, from its first hop to its last", () => {
  const r = rows(hops);
  assert.deepEqual(r.map((x) => x.who), ["frontend", "host agent", "greet", "greet [Price item 1]", "shout"]);
  assert.deepEqual(r.map((x) => x.grain), [null, null, "greet", "greet", "shout"]);
  const shout = r[4];
  assert.equal(shout.from, 7.4);
  assert.equal(shout.to, 16.4);
  assert.equal(shout.waitFrom, 5); // the hop before it: the hand-off
  assert.equal(r[0].to, 21);
  assert.deepEqual(splitStep("a: b: c"), ["a", "b: c"]);
  assert.equal(grainOf("x [Settle branch 0]"), "x");
});

test("an error's grain and line: from the grain's own frame of the traceback it logged", () => {
  const logs = [
    { grain: "greet", level: "INFO", text: "hi" },
    {
      grain: "boom",
      level: "ERROR",
      text: 'Traceback (most recent call last):\n  File "/sand/w/instance.py", line 200, in run\n  File "/sand/app/code/boom.py", line 7, in handle\nValueError: no luck',
    },
  ];
  const p = errorPlace({ type: "ValueError", message: "no luck", grain: "boom" }, logs);
  assert.equal(p.grain, "boom");
  assert.equal(p.line, 7);
  assert.match(p.traceback, /boom\.py/);
  assert.deepEqual(errorPlace({ type: "Timeout", message: "grain g exceeded its timeout of 60s", grain: "g" }), {
    grain: "g",
    line: null,
    traceback: null,
  });
  assert.equal(errorPlace(null).line, null);
});
