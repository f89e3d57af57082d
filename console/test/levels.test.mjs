// A log line's level becomes a class name only as letters, _ and - (console/src/timeline.js logLineClass).
import assert from "node:assert/strict";
import { test } from "node:test";
import { logLineClass } from "../src/timeline.js";

test("a level is lowercased and kept to a-z, _ and -: never a second class or anything else", () => {
  assert.equal(logLineClass("ERROR"), "log lv-error");
  assert.equal(logLineClass("warning"), "log lv-warning");
  assert.equal(logLineClass("ERROR notice ok"), "log lv-errornoticeok");
  assert.equal(logLineClass('x" onclick="y'), "log lv-xonclicky");
  assert.equal(logLineClass(null), "log lv-");
  assert.equal(logLineClass(42), "log lv-");
});
