// How the console reads an answer's body: as JSON only when its Content-Type says JSON (application/json, or a
// +json type such as application/problem+json); anything else (a grain's .py, Prometheus text) stays text as it
// came, even when the text happens to parse as JSON ("x", 42). Pure logic, no page: tested by test/answer.test.mjs.

/** Whether a Content-Type header names JSON: application/json or application/<anything>+json, any parameters. */
export function isJson(contentType) {
  const type = String(contentType || "").split(";")[0].trim().toLowerCase();
  return type === "application/json" || (type.startsWith("application/") && type.endsWith("+json"));
}

/** An answer's body: parsed when its type is JSON and it parses, else the text; null for an empty body. */
export function parseAnswer(text, contentType) {
  if (!text) return null;
  if (!isJson(contentType)) return text;
  try {
    return JSON.parse(text);
  } catch {
    return text; // said JSON but is not: the text, for the error message
  }
}
