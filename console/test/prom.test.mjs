import assert from "node:assert/strict";
import { test } from "node:test";
import { parse, parseValue, series, value } from "../src/prom.js";

// as the Prometheus Java client writes a frontend's scrape (text format 0.0.4)
const SCRAPE = `# HELP process_start_time_seconds Start time of the process since unix epoch in seconds.
# TYPE process_start_time_seconds gauge
process_start_time_seconds{frontend="fe-8081"} 1.795755219176E9
# HELP sand_build_info the build this process runs (always 1)
# TYPE sand_build_info gauge
sand_build_info{component="frontend",frontend="fe-8081",java_version="17.0.15",version="0.1.0-SNAPSHOT"} 1
# HELP sand_frontend_invocations_total application invocations by outcome (ok, error, timeout, async, rejected, replayed, unauthorized)
# TYPE sand_frontend_invocations_total counter
sand_frontend_invocations_total{account="alice",app="hello",frontend="fe-8081",outcome="ok"} 5.0
sand_frontend_invocations_total{account="alice",app="hello",frontend="fe-8081",outcome="error"} 1.0
# HELP sand_frontend_request_duration_seconds time to answer an HTTP request, by method and route
# TYPE sand_frontend_request_duration_seconds histogram
sand_frontend_request_duration_seconds_bucket{frontend="fe-8081",method="POST",route="/app/{app}",le="0.005"} 2
sand_frontend_request_duration_seconds_bucket{frontend="fe-8081",method="POST",route="/app/{app}",le="+Inf"} 6
sand_frontend_request_duration_seconds_count{frontend="fe-8081",method="POST",route="/app/{app}"} 6
sand_frontend_request_duration_seconds_sum{frontend="fe-8081",method="POST",route="/app/{app}"} 0.0412
# a comment
sand_cassandra_up{frontend="fe-8081",store="cluster_state"} 1.0 1795755219176
`;

test("a frontend's scrape: families with their type and help, samples with their labels and values", () => {
  const p = parse(SCRAPE);
  assert.equal(p.samples.length, 9);
  assert.deepEqual(p.families.get("sand_frontend_request_duration_seconds"), {
    type: "histogram",
    help: "time to answer an HTTP request, by method and route",
  });
  assert.equal(p.families.get("sand_frontend_invocations_total").type, "counter");
  assert.equal(p.families.get("sand_cassandra_up").type, "untyped"); // no TYPE line
  const b = series(p, "sand_frontend_request_duration_seconds_bucket");
  assert.deepEqual(b.map((x) => [x.family, x.labels.le, x.value]), [
    ["sand_frontend_request_duration_seconds", "0.005", 2],
    ["sand_frontend_request_duration_seconds", "+Inf", 6],
  ]);
  assert.equal(value(p, "process_start_time_seconds"), 1795755219.176);
  assert.equal(value(p, "sand_frontend_invocations_total", { outcome: "error" }), 1);
  assert.equal(value(p, "sand_frontend_invocations_total", { outcome: "timeout" }), null);
  assert.equal(value(p, "sand_build_info"), 1);
  assert.equal(series(p, "sand_build_info")[0].labels.version, "0.1.0-SNAPSHOT");
  assert.equal(series(p, "sand_cassandra_up")[0].timestamp, 1795755219176);
});

test("escapes in label values and HELP, NaN and infinities, CRLF, spaces around labels", () => {
  const p = parse(
    '# HELP x a \\\\ b\\nc\r\n# TYPE x gauge\r\nx{ a = "q\\"uo\\\\te\\n" , b="}{,=" } NaN\r\nx{a="2",} +Inf\nx -Inf\nx 1e-3\nx .5\n',
  );
  assert.equal(p.families.get("x").help, "a \\ b\nc");
  assert.deepEqual(p.samples[0].labels, { a: 'q"uo\\te\n', b: "}{,=" });
  assert.ok(Number.isNaN(p.samples[0].value));
  assert.deepEqual(p.samples.slice(1).map((x) => x.value), [Infinity, -Infinity, 0.001, 0.5]);
  assert.deepEqual(p.samples[1].labels, { a: "2" });
  assert.equal(parseValue("12abc"), undefined);
  assert.equal(parseValue(""), undefined);
});

test("strict: each malformed line is an error naming its line", () => {
  const bad = [
    ["x{a=\"1\" 2", /line 1: "," or "}" was expected after label a/],
    ['x{a="1} 2', /line 1: the value of label a is not closed/],
    ["x{a=1} 2", /line 1: the value of label a is not quoted/],
    ["x{1a=\"1\"} 2", /line 1: a label name was expected/],
    ['x{a="1",a="2"} 2', /label a is given twice/],
    ["x", /a value was expected after x/],
    ["x 1 2 3", /a value was expected after x/],
    ["x{} abc", /"abc" is not a value/],
    ["x 1 1.5", /"1.5" is not a timestamp/],
    ["3x 1", /a metric name was expected/],
    ["x1", /a value was expected after x1/],
    ["# TYPE x histo", /unknown type "histo" of x/],
    ["# TYPE x gauge\n# TYPE x counter", /line 2: a second TYPE for x/],
    ["x 1\n# TYPE x gauge", /line 2: the TYPE of x comes after its samples/],
    ['x{a="\\t"} 1', /unknown escape \\t/],
    ["# HELP x bad \\q", /unknown escape \\q/],
    ["# TYPE 9x gauge", /bad metric name 9x/],
  ];
  for (const [text, re] of bad) assert.throws(() => parse(text), re, text);
});

test("an empty scrape and comments only", () => {
  assert.equal(parse("").samples.length, 0);
  assert.equal(parse("# just words\n#\n\n").samples.length, 0);
});
