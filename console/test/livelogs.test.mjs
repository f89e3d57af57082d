// Following the logs (console/src/livelogs.js): each line once, by execution id and line index; the memory bounded.
import assert from "node:assert/strict";
import { test } from "node:test";
import { levelClass } from "../src/dom.js";
import { readPage, skippedCount, skippedQuery, skippedText } from "../src/livelogs.js";

const T0 = Date.parse("2026-11-21T21:00:00.000Z");
const iso = (ms) => new Date(ms).toISOString();
const line = (text, level = "INFO") => ({ time: iso(T0), grain: "greet", level, text });
const ex = (id, startMs, logs, next = null) => ({ execution_id: id, started: iso(startMs), logs, logs_next: next });

test("a running execution's later lines come once; the same text twice is two lines", () => {
  const seen = new Map();
  const a = readPage(seen, [ex("e1", T0, [line("hi"), line("hi")])], T0 - 3600_000);
  assert.deepEqual(a.lines.map((l) => [l.execution_id, l.index, l.text]), [["e1", 0, "hi"], ["e1", 1, "hi"]]);
  assert.equal(a.full, false);
  assert.equal(a.since, T0 - 60_000); // a minute before the newest start: it is read again
  const b = readPage(seen, [ex("e1", T0, [line("hi"), line("hi"), line("bye")]), ex("e2", T0 + 1000, [line("x")])], a.since);
  assert.deepEqual(b.lines.map((l) => [l.execution_id, l.index, l.text]), [["e1", 2, "bye"], ["e2", 0, "x"]]);
  assert.equal(readPage(seen, [ex("e1", T0, [line("hi"), line("hi"), line("bye")])], b.since).lines.length, 0);
});

test("an execution with more lines than its page says so once", () => {
  const seen = new Map();
  assert.deepEqual(readPage(seen, [ex("e1", T0, [line("a")], "cursor1")], T0).cut, ["e1"]);
  assert.deepEqual(readPage(seen, [ex("e1", T0, [line("a")], "cursor1")], T0).cut, []);
});

test("a full page moves on to its newest start and tells where the skipped ones end", () => {
  const seen = new Map();
  const page = [ex("e1", T0 + 5000, []), ex("e2", T0 + 9000, [])];
  const r = readPage(seen, page, T0, { limit: 2 });
  assert.equal(r.full, true);
  assert.equal(r.since, T0 + 9000);
  assert.equal(r.oldest, T0 + 5000);
  assert.equal(skippedQuery(T0, r.oldest), `since=${T0}&until=${T0 + 5000}&limit=100`);
  // of those listed before the page's oldest, the ones a previous read showed were not skipped
  assert.equal(skippedCount(seen, [{ execution_id: "e0" }, { execution_id: "e1" }, { execution_id: "e00" }]), 2);
  assert.equal(skippedCount(seen, undefined), 0);
  assert.equal(skippedText(0, false), null);
  assert.match(skippedText(1, false), /^1 execution skipped ahead/);
  assert.match(skippedText(100, true), /^100 or more executions skipped ahead/);
  assert.match(skippedText(null), /some were skipped/);
});

test("memory: executions well behind are forgotten, and never more than max", () => {
  const seen = new Map();
  readPage(seen, [ex("old", T0, [line("a")])], T0);
  readPage(seen, [ex("new", T0 + 600_000, [line("b")])], T0 + 500_000);
  assert.deepEqual([...seen.keys()], ["new"]);
  const many = Array.from({ length: 30 }, (_, i) => ex(`e${i}`, T0 + i, [line("x")]));
  readPage(seen, many, T0, { limit: 50, max: 10 });
  assert.equal(seen.size, 10);
  assert.deepEqual([...seen.keys()], many.slice(20).map((x) => x.execution_id));
});

test("a start that does not parse is taken as since; odd pages are skipped over", () => {
  const seen = new Map();
  const r = readPage(seen, [{ execution_id: "e1", started: "garbage", logs: [line("a")] }, null, { logs: [] }], T0);
  assert.equal(r.lines.length, 1);
  assert.equal(r.since, T0);
  assert.equal(readPage(seen, undefined, T0).lines.length, 0);
});

test("a level is a class name's tail only", () => {
  assert.equal(levelClass("ERROR"), "lv-error");
  assert.equal(levelClass('x" onclick=alert(1) y'), "lv-xonclickalerty");
  assert.equal(levelClass("a b"), "lv-ab");
  assert.equal(levelClass(null), "lv-");
});
