// A log line's level becomes a class name only as letters, _ and - (console/src/dom.js levelClass).
import assert from "node:assert/strict";
import { test } from "node:test";
import { levelClass } from "../src/dom.js";

test("a level is lowercased and kept to a-z, _ and -: never a second class or anything else", () => {
  assert.equal(levelClass("ERROR"), "lv-error");
  assert.equal(levelClass("warning"), "lv-warning");
  assert.equal(levelClass("ERROR notice ok"), "lv-errornoticeok");
  assert.equal(levelClass('x" onclick="y'), "lv-xonclicky");
  assert.equal(levelClass(null), "lv-");
  assert.equal(levelClass(42), "lv-");
});
