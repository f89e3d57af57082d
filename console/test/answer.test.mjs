// An answer's body is JSON only when its Content-Type says so (console/src/answer.js, used by api.js).
import assert from "node:assert/strict";
import { test } from "node:test";
import { isJson, parseAnswer } from "../src/answer.js";

test("JSON types: application/json and +json, with parameters, in any case", () => {
  for (const t of ["application/json", "application/json; charset=utf-8", "Application/JSON", "application/problem+json"]) {
    assert.equal(isJson(t), true, t);
  }
  for (const t of [null, "", "text/x-python; charset=utf-8", "text/plain; version=0.0.4", "application/zip", "text/json+x", "text/html"]) {
    assert.equal(isJson(t), false, String(t));
  }
});

test("a grain's code that is valid JSON stays the text it is", () => {
  assert.equal(parseAnswer('"x"', "text/x-python; charset=utf-8"), '"x"');
  assert.equal(parseAnswer("42", "text/x-python"), "42");
  assert.equal(parseAnswer("# metrics\nup 1\n", "text/plain; version=0.0.4; charset=utf-8"), "# metrics\nup 1\n");
});

test("a JSON answer is parsed, an error body included; a JSON type that does not parse stays text", () => {
  assert.deepEqual(parseAnswer('{"error":{"code":"not_found","message":"no"}}', "application/json"), { error: { code: "not_found", message: "no" } });
  assert.deepEqual(parseAnswer('{"title":"x"}', "application/problem+json"), { title: "x" });
  assert.equal(parseAnswer("42", "application/json"), 42);
  assert.equal(parseAnswer("<html>", "application/json"), "<html>");
  assert.equal(parseAnswer("", "application/json"), null);
  assert.equal(parseAnswer("", null), null);
});
