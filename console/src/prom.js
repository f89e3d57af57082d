// A strict parser of Prometheus' text exposition format 0.0.4 (what GET /metrics answers: the Prometheus Java
// client's PrometheusTextFormatWriter). A line it does not understand is an error naming the line, not skipped: the
// Platform view shows that error rather than charts made from half a scrape.
//
//   # HELP <name> <text with \\ and \n escaped>
//   # TYPE <name> counter|gauge|histogram|summary|untyped
//   <name>[{<label>="<value with \\ \" \n escaped>",...}] <value> [<timestamp ms>]
//
// Other # lines are comments. Values: Go's floats, NaN, +Inf, -Inf. No npm package was used: the one parser of
// this format on the registry has had no release since 2019.

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*/;
const TYPES = new Set(["counter", "gauge", "histogram", "summary", "untyped"]);
const FLOAT = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

export class ParseError extends Error {
  constructor(line, message) {
    super(`/metrics line ${line}: ${message}`);
    this.line = line;
  }
}

/** A sample's value: a float, NaN or ±Inf (as the format writes them). */
export function parseValue(s) {
  if (s === "NaN") return NaN;
  if (s === "+Inf" || s === "Inf") return Infinity;
  if (s === "-Inf") return -Infinity;
  if (!FLOAT.test(s)) return undefined;
  return Number(s);
}

function unescape(s, n, quotes) {
  let out = "";
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c !== "\\") {
      out += c;
      continue;
    }
    const d = s[++i];
    if (d === "\\") out += "\\";
    else if (d === "n") out += "\n";
    else if (d === '"' && quotes) out += '"';
    else throw new ParseError(n, `unknown escape \\${d ?? ""}`);
  }
  return out;
}

/** The labels of `{...}` starting at s[0] === "{": [labels, the rest of the line after "}"]. */
function parseLabels(s, n) {
  const labels = {};
  let i = 1;
  for (;;) {
    while (s[i] === " " || s[i] === "\t") i++;
    if (s[i] === "}") return [labels, s.slice(i + 1)];
    const m = LABEL.exec(s.slice(i));
    if (!m) throw new ParseError(n, `a label name was expected at column ${i + 1}`);
    const name = m[0];
    i += name.length;
    while (s[i] === " " || s[i] === "\t") i++;
    if (s[i] !== "=") throw new ParseError(n, `"=" was expected after label ${name}`);
    i++;
    while (s[i] === " " || s[i] === "\t") i++;
    if (s[i] !== '"') throw new ParseError(n, `the value of label ${name} is not quoted`);
    let j = i + 1;
    let raw = "";
    for (; j < s.length && s[j] !== '"'; j++) {
      if (s[j] === "\\") raw += s[j++];
      raw += s[j] ?? "";
    }
    if (j >= s.length) throw new ParseError(n, `the value of label ${name} is not closed`);
    if (Object.hasOwn(labels, name)) throw new ParseError(n, `label ${name} is given twice`);
    labels[name] = unescape(raw, n, true);
    i = j + 1;
    while (s[i] === " " || s[i] === "\t") i++;
    if (s[i] === ",") i++;
    else if (s[i] !== "}") throw new ParseError(n, `"," or "}" was expected after label ${name}`);
  }
}

/** The family a sample named `name` belongs to, given the TYPEs seen: x_bucket/_sum/_count of histogram x, etc. */
function familyOf(name, types) {
  if (types.has(name)) return name;
  for (const [suffix, kinds] of [
    ["_bucket", ["histogram"]],
    ["_sum", ["histogram", "summary"]],
    ["_count", ["histogram", "summary"]],
  ]) {
    if (name.endsWith(suffix)) {
      const base = name.slice(0, -suffix.length);
      if (kinds.includes(types.get(base))) return base;
    }
  }
  return name;
}

/**
 * The scrape: { samples: [{name, labels, value, timestamp}], families: Map(name → {type, help}) } in the order
 * written. Throws ParseError on the first line that is not in the format.
 */
export function parse(text) {
  const samples = [];
  const families = new Map();
  const types = new Map();
  const lines = text.split("\n");
  lines.forEach((raw, k) => {
    const n = k + 1;
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (line.trim() === "") return;
    if (line.startsWith("#")) {
      const m = /^#\s+(HELP|TYPE)\s+(\S+)(?:\s(.*))?$/.exec(line);
      if (!m) return; // a comment
      const [, what, name, rest = ""] = m;
      if (!NAME.test(name) || NAME.exec(name)[0] !== name) throw new ParseError(n, `bad metric name ${name}`);
      const f = families.get(name) || { type: "untyped", help: "" };
      if (what === "TYPE") {
        const t = rest.trim();
        if (!TYPES.has(t)) throw new ParseError(n, `unknown type ${JSON.stringify(t)} of ${name}`);
        if (types.has(name)) throw new ParseError(n, `a second TYPE for ${name}`);
        if (samples.some((x) => x.family === name)) throw new ParseError(n, `the TYPE of ${name} comes after its samples`);
        types.set(name, t);
        f.type = t;
      } else {
        f.help = unescape(rest, n, false);
      }
      families.set(name, f);
      return;
    }
    const m = NAME.exec(line);
    if (!m) throw new ParseError(n, "a metric name was expected");
    const name = m[0];
    let rest = line.slice(name.length);
    let labels = {};
    if (rest.startsWith("{")) [labels, rest] = parseLabels(rest, n);
    const parts = rest.trim().split(/[ \t]+/);
    if (!/^[ \t]/.test(rest) || parts.length < 1 || parts.length > 2 || parts[0] === "") {
      throw new ParseError(n, `a value was expected after ${name}`);
    }
    const value = parseValue(parts[0]);
    if (value === undefined) throw new ParseError(n, `${JSON.stringify(parts[0])} is not a value`);
    let timestamp = null;
    if (parts.length === 2) {
      if (!/^-?\d+$/.test(parts[1])) throw new ParseError(n, `${JSON.stringify(parts[1])} is not a timestamp`);
      timestamp = Number(parts[1]);
    }
    const family = familyOf(name, types);
    if (!families.has(family)) families.set(family, { type: "untyped", help: "" });
    samples.push({ name, family, labels, value, timestamp });
  });
  return { samples, families };
}

/** The samples named `name` (exactly: a histogram's buckets are `<name>_bucket`). */
export function series(scrape, name) {
  return scrape.samples.filter((x) => x.name === name);
}

/** The value of the one sample named `name` whose labels include `match`, or null. */
export function value(scrape, name, match = {}) {
  const x = scrape.samples.find((s) => s.name === name && Object.entries(match).every(([k, v]) => s.labels[k] === v));
  return x ? x.value : null;
}
