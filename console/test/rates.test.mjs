// Requests per minute and errors over the last 5 minutes (console/src/rates.js).
import assert from "node:assert/strict";
import { test } from "node:test";
import { errorsText, perMinuteText, rates, ratesQuery } from "../src/rates.js";

const ex = (...statuses) => statuses.map((status, i) => ({ execution_id: String(i), status }));

test("the page asked for: since five minutes ago, the largest page", () => {
  assert.equal(ratesQuery(1_000_000), "since=700000&limit=100");
});

test("per minute over five minutes; errors are failed and timeout over the finished", () => {
  const r = rates({ executions: ex("succeeded", "failed", "timeout", "succeeded", "running", "succeeded", "succeeded", "succeeded", "succeeded", "succeeded", "succeeded"), next: null });
  assert.deepEqual(r, { count: 11, full: false, perMinute: 2.2, finished: 10, errors: 2, errorPercent: 20 });
  assert.equal(perMinuteText(r), "2.2");
  assert.equal(errorsText(r), "20 %");
});

test("a full page is a lower bound: ≥ N", () => {
  const list = ex(...Array.from({ length: 100 }, (_, i) => (i % 40 === 0 ? "failed" : "succeeded")));
  const r = rates({ executions: list, next: "cursor" });
  assert.equal(r.full, true);
  assert.equal(perMinuteText(r), "≥ 20");
  assert.equal(errorsText(r), "3.0 % of the newest 100");
  // a whole page without a next (as an API that says nothing more) is taken as full too
  assert.equal(rates({ executions: list, next: null }).full, true);
});

test("nothing in the window: 0 per minute, no error rate; only running ones: no error rate either", () => {
  const none = rates({ executions: [], next: null });
  assert.equal(perMinuteText(none), "0");
  assert.equal(errorsText(none), "—");
  const running = rates({ executions: ex("running", "running"), next: null });
  assert.equal(perMinuteText(running), "0.4");
  assert.equal(errorsText(running), "—");
  assert.equal(errorsText(rates({ executions: ex("succeeded") })), "0 %");
  assert.equal(errorsText(rates({ executions: ex("failed") })), "100 %");
  assert.equal(perMinuteText(rates({ executions: ex(...Array(60).fill("succeeded")) })), "12");
  assert.equal(perMinuteText(rates(null)), "0");
});
