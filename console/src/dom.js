// Building the page without innerHTML: text is always text, and nothing sets a style attribute
// (the Content-Security-Policy has no 'unsafe-inline'; positions are set through element.style).
const SVG_NS = "http://www.w3.org/2000/svg";

function fill(el, attrs, children) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
    else if (k === "class") el.setAttribute("class", v);
    else if (k === "dataset") Object.assign(el.dataset, v);
    else if (k === "value" && "value" in el) el.value = v;
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : String(c));
  }
  return el;
}

/** An HTML element: h("button", {class: "x", onclick: f}, "text", child, ...). */
export function h(tag, attrs, ...children) {
  return fill(document.createElement(tag), attrs, children);
}

/** An SVG element, the same way. */
export function s(tag, attrs, ...children) {
  return fill(document.createElementNS(SVG_NS, tag), attrs, children);
}

export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}

/** A table from column titles and rows of cells. */
export function table(columns, rows, attrs = {}) {
  return h(
    "table",
    attrs,
    h("thead", {}, h("tr", {}, columns.map((c) => h("th", { scope: "col" }, c)))),
    h(
      "tbody",
      {},
      rows.length === 0
        ? h("tr", {}, h("td", { colspan: columns.length, class: "empty" }, "nothing yet"))
        : rows.map((r) => (r instanceof Node ? r : h("tr", {}, r.map((c) => h("td", {}, c))))),
    ),
  );
}

/** A word from the platform (a status, a log level) as a class name: lower-case letters, _ and - only. */
export function classToken(word) {
  return String(word ?? "").toLowerCase().replace(/[^a-z_-]/g, "");
}

/** The class of a log line's level: lv-error, lv-warning, ... */
export function levelClass(level) {
  return `lv-${classToken(level)}`;
}

export function badge(status) {
  return h("span", { class: `badge st-${classToken(status || "none")}` }, status || "—");
}

export function link(href, text, attrs = {}) {
  return h("a", { href, ...attrs }, text);
}

export function when(iso) {
  if (!iso) return "—";
  const d = new Date(iso);
  return isNaN(d) ? String(iso) : d.toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z");
}

export function ms(v) {
  if (v === null || v === undefined) return "—";
  return v >= 1000 ? `${(v / 1000).toFixed(2)} s` : `${Number(v).toFixed(1)} ms`;
}

export function pretty(v) {
  return typeof v === "string" ? v : JSON.stringify(v, null, 2);
}

/** A message line: kind "error" is announced to screen readers. */
export function notice(kind, text) {
  return h("p", { class: `notice ${kind}`, role: kind === "error" ? "alert" : "status" }, text);
}

/** A labelled form field. */
export function field(label, input) {
  const id = input.id || `f-${Math.random().toString(36).slice(2, 9)}`;
  input.id = id;
  return h("div", { class: "field" }, h("label", { for: id }, label), input);
}
