// A workflow as a graph: SAND's format ({entry, functions: [{name, next, potentialNext}]}) and Amazon States Language
// ({StartAt, States}: Choice branches, Parallel branches, Map iterators, Catch edges), laid out by dagre and drawn as
// SVG here. Errors the API names ("functions[0] (a).next ...", "States.P.Branches[0].States.X.Next: ...", "grain g
// failed to load") are put on the node they name.
import dagre from "@dagrejs/dagre";
import { h, s } from "./dom.js";

const END = "■ end";
const START = "▶ start";

/** The graph of a workflow: {nodes: Map id -> node, edges: [], clusters: Map id -> {label, parent}, asl}. */
export function model(workflow) {
  const m = { nodes: new Map(), edges: [], clusters: new Map(), asl: false };
  const node = (id, label, extra = {}) => m.nodes.set(id, { id, label, kind: "task", ...extra });
  const edge = (from, to, kind = "next", label = "") => m.edges.push({ from, to, kind, label });
  if (!workflow || typeof workflow !== "object") return m;
  node("start", START, { kind: "start" });
  node("end", END, { kind: "end" });
  if (workflow.StartAt && workflow.States) {
    m.asl = true;
    const exits = machine(m, workflow, "", null, node, edge);
    edge("start", exits.start);
    for (const e of exits.ends) edge(e, "end");
    return m;
  }
  for (const f of workflow.functions || []) {
    node(`f:${f.name}`, f.name, { grain: f.resource || f.name, name: f.name });
  }
  if (workflow.entry) edge("start", `f:${workflow.entry}`);
  for (const f of workflow.functions || []) {
    for (const n of f.next || []) edge(`f:${f.name}`, n === "end" ? "end" : `f:${n}`);
    for (const n of f.potentialNext || []) edge(`f:${f.name}`, n === "end" ? "end" : `f:${n}`, "potential", "maybe");
  }
  return m;
}

/** Adds one state machine's states under prefix; answers {start, ends}: its first node and the nodes that end it. */
function machine(m, sm, prefix, cluster, node, edge) {
  const ends = [];
  const id = (name) => `s:${prefix}${name}`;
  const entry = new Map(); // a state's node id where edges into it go (a Parallel's fan-out)
  const exit = new Map(); // where edges out of it leave from (a Parallel's join)
  for (const [name, st] of Object.entries(sm.States || {})) {
    const type = st.Type || "?";
    const base = { name, type, cluster, grain: type === "Task" ? st.Resource || name : null };
    if (type === "Parallel" || type === "Map") {
      const box = `c:${prefix}${name}`;
      m.clusters.set(box, { label: `${name} (${type})`, parent: cluster });
      node(id(name), `${name}`, { ...base, kind: type.toLowerCase() });
      node(`${id(name)}/join`, type === "Map" ? "items joined" : "branches joined", { kind: "join", cluster, name });
      const subs = type === "Map" ? [st.ItemProcessor || st.Iterator || {}] : st.Branches || [];
      subs.forEach((sub, i) => {
        const inner = type === "Map" ? `${prefix}${name}/it/` : `${prefix}${name}/b${i}/`;
        const r = machine(m, sub, inner, box, node, edge);
        if (r.start) edge(id(name), r.start, "fanout", type === "Map" ? "each item" : `branch ${i}`);
        for (const e of r.ends) edge(e, `${id(name)}/join`);
      });
      entry.set(name, id(name));
      exit.set(name, `${id(name)}/join`);
    } else {
      node(id(name), type === "Task" && st.Resource && st.Resource !== name ? `${name} → ${st.Resource}` : name, {
        ...base,
        kind: type.toLowerCase(),
      });
      entry.set(name, id(name));
      exit.set(name, id(name));
    }
  }
  const to = (name) => entry.get(name) || `s:${prefix}${name}`;
  for (const [name, st] of Object.entries(sm.States || {})) {
    const from = exit.get(name);
    if (st.Next) edge(from, to(st.Next));
    if (st.End || st.Type === "Succeed" || st.Type === "Fail") ends.push(from);
    (st.Choices || []).forEach((c, i) => c.Next && edge(from, to(c.Next), "choice", `choice ${i}`));
    if (st.Default) edge(from, to(st.Default), "choice", "default");
    for (const c of st.Catch || []) {
      if (c.Next) edge(from, to(c.Next), "catch", `catch ${(c.ErrorEquals || []).join(", ")}`);
    }
  }
  return { start: sm.StartAt ? to(sm.StartAt) : null, ends };
}

/**
 * Where an error message points in the graph: [{node, field, message}] (empty when it names no node).
 * "functions[1] (shout).next names unknown grain 'x'" -> f:shout; "States.P.Branches[0].States.X.Next: ..." -> the
 * state X in branch 0 of P; "grain g failed to load: ..." -> the nodes that run grain g.
 */
export function locate(m, message) {
  if (!message) return [];
  const out = [];
  const sand = /functions\[\d+\] \(([^)]+)\)((?:\.[A-Za-z_]+)?)/.exec(message);
  if (sand && m.nodes.has(`f:${sand[1]}`)) out.push({ node: `f:${sand[1]}`, field: sand[2].slice(1) || null, message });
  const path = /((?:States\.[^\s:]+))\s*:/.exec(message);
  if (path) {
    const tokens = path[1].split(".");
    let prefix = "";
    let current = null;
    let field = [];
    for (let i = 0; i < tokens.length; i++) {
      const t = tokens[i];
      const br = /^Branches\[(\d+)\]$/.exec(t);
      if (t === "States" && i + 1 < tokens.length) {
        current = `${prefix}${tokens[++i]}`;
        field = [];
      } else if (br && current) {
        prefix = `${current}/b${br[1]}/`;
      } else if ((t === "Iterator" || t === "ItemProcessor") && current) {
        prefix = `${current}/it/`;
      } else {
        field.push(t);
      }
    }
    if (current && m.nodes.has(`s:${current}`)) out.push({ node: `s:${current}`, field: field.join(".") || null, message });
  }
  const grainRe = /grain (?:worker )?([A-Za-z0-9][A-Za-z0-9_.-]*) (?:failed|exited|was killed|exceeded)/g;
  for (let g; (g = grainRe.exec(message)); ) {
    for (const n of m.nodes.values()) {
      if (n.grain === g[1] || n.name === g[1]) out.push({ node: n.id, field: null, message });
    }
  }
  return out;
}

const BOX_H = 34;

/**
 * The graph drawn: a figure with the SVG and, under it, the errors as text. opts: visited (a Set of grain names or
 * state names that ran: their nodes and the edges between them are highlighted), errors ([{node, field, message}]).
 */
export function draw(m, opts = {}) {
  const visited = opts.visited || new Set();
  const errors = opts.errors || [];
  const errorAt = new Map(errors.map((e) => [e.node, e]));
  const g = new dagre.graphlib.Graph({ compound: true, multigraph: true });
  g.setGraph({ rankdir: "TB", nodesep: 28, ranksep: 36, marginx: 16, marginy: 16 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const [id, c] of m.clusters) g.setNode(id, { label: c.label, paddingTop: 26 });
  for (const [id, c] of m.clusters) if (c.parent) g.setParent(id, c.parent);
  for (const n of m.nodes.values()) {
    const w = Math.max(70, n.label.length * 7.4 + 26);
    g.setNode(n.id, { width: w, height: BOX_H });
    if (n.cluster) g.setParent(n.id, n.cluster);
  }
  m.edges.forEach((e, i) => {
    if (g.hasNode(e.from) && g.hasNode(e.to)) {
      g.setEdge(e.from, e.to, { label: e.label, width: e.label ? e.label.length * 6 : 0, height: e.label ? 14 : 0 }, `e${i}`);
    }
  });
  dagre.layout(g);
  const ran = (n) => n && (visited.has(n.name) || visited.has(n.grain) || n.kind === "start" || n.kind === "end");
  const anyVisited = visited.size > 0;
  const gw = Math.ceil(g.graph().width || 200);
  const gh = Math.ceil(g.graph().height || 100);
  const svg = s("svg", {
    class: "graph",
    viewBox: `0 0 ${gw} ${gh}`,
    width: gw,
    height: gh,
    role: "img",
    "aria-label": `workflow graph: ${m.nodes.size - 2} ${m.asl ? "states" : "grains"}`,
  });
  svg.append(
    s(
      "defs",
      {},
      s(
        "marker",
        { id: "arrow", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 8, markerHeight: 8, markerUnits: "userSpaceOnUse", orient: "auto-start-reverse" },
        s("path", { d: "M 0 0 L 10 5 L 0 10 z", class: "arrowhead" }),
      ),
    ),
  );
  for (const [id, c] of m.clusters) {
    const b = g.node(id);
    if (!b) continue;
    svg.append(
      s(
        "g",
        { class: "cluster", "data-cluster": id },
        s("rect", { x: b.x - b.width / 2, y: b.y - b.height / 2, width: b.width, height: b.height, rx: 8 }),
        s("text", { x: b.x - b.width / 2 + 8, y: b.y - b.height / 2 + 15 }, c.label),
      ),
    );
  }
  for (const ge of g.edges()) {
    const e = g.edge(ge);
    const idx = Number(ge.name.slice(1));
    const me = m.edges[idx];
    const hot = anyVisited && ran(m.nodes.get(me.from)) && ran(m.nodes.get(me.to));
    const d = e.points.map((p, i) => `${i ? "L" : "M"}${p.x.toFixed(1)},${p.y.toFixed(1)}`).join(" ");
    const grp = s("g", { class: `edge ${me.kind}${hot ? " visited" : ""}`, "data-from": me.from, "data-to": me.to });
    grp.append(s("path", { d, "marker-end": "url(#arrow)" }));
    if (me.label && e.x !== undefined) grp.append(s("text", { x: e.x, y: e.y + 4, class: "edge-label" }, me.label));
    svg.append(grp);
  }
  for (const n of m.nodes.values()) {
    const b = g.node(n.id);
    const err = errorAt.get(n.id);
    const cls = ["node", `k-${n.kind}`];
    if (anyVisited && ran(n)) cls.push("visited");
    if (err) cls.push("error");
    const grp = s("g", {
      class: cls.join(" "),
      "data-node": n.id,
      "data-grain": n.grain || null,
      "data-name": n.name || null,
    });
    const round = n.kind === "start" || n.kind === "end" || n.kind === "join";
    grp.append(
      s("rect", { x: b.x - b.width / 2, y: b.y - b.height / 2, width: b.width, height: b.height, rx: round ? 17 : 5 }),
      s("text", { x: b.x, y: b.y + 4, "text-anchor": "middle" }, n.label),
    );
    if (n.type && n.kind !== "task") {
      grp.append(s("text", { x: b.x + b.width / 2 - 4, y: b.y - b.height / 2 + 10, "text-anchor": "end", class: "type" }, n.type));
    }
    if (err) {
      grp.append(s("title", {}, `${err.field ? `${err.field}: ` : ""}${err.message}`));
      grp.append(s("text", { x: b.x - b.width / 2, y: b.y + b.height / 2 + 12, class: "error-label" }, "⚠ " + (err.field || "error")));
    }
    svg.append(grp);
  }
  const fig = h("figure", { class: "graph-figure" }, h("div", { class: "graph-scroll" }, svg));
  if (errors.length) {
    fig.append(
      h(
        "figcaption",
        { class: "graph-errors", role: "alert" },
        h(
          "ul",
          {},
          errors.map((e) =>
            h(
              "li",
              { "data-error-node": e.node },
              h("strong", {}, m.nodes.get(e.node)?.name || e.node),
              e.field ? ` (${e.field})` : "",
              `: ${e.message}`,
            ),
          ),
        ),
      ),
    );
  }
  return fig;
}
