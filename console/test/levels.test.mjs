// A log line's level becomes a class name only as letters, _ and - (console/src/timeline.js levelClass).
import assert from "node:assert/strict";
import { test } from "node:test";
import { levelClass } from "../src/timeline.js";

test("a level is lowercased and kept to a-z, _ and -: never a second class or anything else", () => {
  assert.equal(levelClass("ERROR"), "log lv-error");
  assert.equal(levelClass("warning"), "log lv-warning");
  assert.equal(levelClass("ERROR notice ok"), "log lv-errornoticeok");
  assert.equal(levelClass('x" onclick="y'), "log lv-xonclicky");
  assert.equal(levelClass(null), "log lv-");
  assert.equal(levelClass(42), "log lv-");
});
