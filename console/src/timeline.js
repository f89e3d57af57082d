// An execution as a waterfall: one row per place its request went (the frontend, the host agent, each grain
// instance; an ASL branch's or item's instance has its own row), a bar from the row's first hop to its last with a
// tick per hop, the wait before it (a bus hand-off, the queue) in a lighter shade, and each grain's log lines
// beside its bar. Times are timings.hops' at_ms (docs/api.md, "Invoking an application").
import { h, levelClass, ms } from "./dom.js";

/** "greet: worker polled" -> ["greet", "worker polled"]; "greet [Price item 0]: ..." keeps the bracket. */
export function splitStep(step) {
  const i = step.indexOf(": ");
  return i < 0 ? [step, ""] : [step.slice(0, i), step.slice(i + 2)];
}

/** The grain a row's name is about ("shout [Settle branch 1]" -> "shout"); null for frontend and host agent. */
export function grainOf(who) {
  if (who === "frontend" || who === "host agent") return null;
  return who.replace(/ \[.*\]$/, "");
}

/** Rows of the waterfall: [{who, grain, steps: [{what, at, where}], from, to, waitFrom}]. */
export function rows(hops) {
  const byWho = new Map();
  let prev = 0;
  for (const hop of hops || []) {
    const [who, what] = splitStep(hop.step || "");
    const at = Number(hop.at_ms) || 0;
    let r = byWho.get(who);
    if (!r) {
      r = { who, grain: grainOf(who), steps: [], from: at, to: at, waitFrom: prev };
      byWho.set(who, r);
    }
    r.steps.push({ what, at, where: hop.where });
    r.to = Math.max(r.to, at);
    r.from = Math.min(r.from, at);
    prev = at;
  }
  return [...byWho.values()];
}

/** A log line's class: "log lv-<level>", the level lowercased and kept to a-z, _ and - (as dom.js badge() does). */
export function logLineClass(level) {
  return `log ${levelClass(level)}`;
}

function pct(v, total) {
  return `${Math.max(0, Math.min(100, (v / total) * 100)).toFixed(3)}%`;
}

/** The waterfall element; logs: the execution's log lines ([{time, grain, level, text}]). */
export function waterfall(execution, logs) {
  const t = execution.timings || {};
  const rs = rows(t.hops);
  if (rs.length === 0) {
    return h("p", { class: "notice" }, "no timeline: this execution has no per-hop timings (yet)");
  }
  const total = Math.max(Number(t.duration_ms) || 0, ...rs.map((r) => r.to), 0.001);
  const logsOf = new Map();
  for (const l of logs || []) {
    if (!logsOf.has(l.grain)) logsOf.set(l.grain, []);
    logsOf.get(l.grain).push(l);
  }
  const shown = new Set();
  const axis = h(
    "div",
    { class: "wf-row wf-axis", "aria-hidden": "true" },
    h("div", { class: "wf-label" }, ""),
    h("div", { class: "wf-track" }, [0, 0.25, 0.5, 0.75, 1].map((f) => {
      const tick = h("span", { class: "wf-axis-tick" }, ms(total * f));
      tick.style.left = pct(total * f, total);
      return tick;
    })),
    h("div", { class: "wf-logs" }, "log lines"),
  );
  const body = rs.map((r) => {
    const wait = h("div", { class: "wf-wait", title: `waited ${ms(r.from - r.waitFrom)} (queue, bus hand-off)` });
    wait.style.left = pct(r.waitFrom, total);
    wait.style.width = pct(Math.max(0, r.from - r.waitFrom), total);
    const bar = h("div", {
      class: `wf-bar ${r.grain ? "grain" : "platform"}`,
      title: r.steps.map((st) => `${st.what} @ ${ms(st.at)}${st.where ? ` (${st.where})` : ""}`).join("\n"),
    });
    bar.style.left = pct(r.from, total);
    bar.style.width = pct(Math.max(r.to - r.from, total / 400), total);
    const ticks = r.steps.map((st) => {
      const tk = h("span", { class: "wf-tick", title: `${st.what} @ ${ms(st.at)}` });
      tk.style.left = pct(st.at, total);
      return tk;
    });
    // a grain's lines once, beside its first row (an ASL Map's items share the grain's lines)
    let lines = [];
    if (r.grain && !shown.has(r.grain)) {
      shown.add(r.grain);
      lines = logsOf.get(r.grain) || [];
    }
    return h(
      "div",
      { class: "wf-row", "data-row": r.who, "data-grain": r.grain || null },
      h("div", { class: "wf-label" }, h("strong", {}, r.who), h("span", { class: "muted" }, ` ${ms(r.to - r.from)}`)),
      h("div", { class: "wf-track" }, wait, bar, ticks),
      h(
        "div",
        { class: "wf-logs" },
        lines.map((l) => h("div", { class: logLineClass(l.level) }, `${l.level || ""} ${l.text}`)),
      ),
    );
  });
  return h(
    "div",
    { class: "waterfall", role: "group", "aria-label": `timeline of ${rs.length} hops, ${ms(total)} in all` },
    axis,
    body,
    h(
      "details",
      { class: "wf-steps" },
      h("summary", {}, `every hop (${(t.hops || []).length})`),
      h(
        "ol",
        {},
        (t.hops || []).map((hop) => h("li", {}, `${ms(hop.at_ms)} (+${ms(hop.delta_ms)}) ${hop.step} — ${hop.where || ""}`)),
      ),
    ),
  );
}

/**
 * The grain and line an error names, and its traceback: {grain, line, traceback}. A grain's exception is the event
 * {type, message, grain}; the instance logs the whole traceback as an ERROR line of that grain, whose last frame in
 * the grain's own file gives the line.
 */
export function errorPlace(error, logs = []) {
  if (!error || typeof error !== "object") return { grain: null, line: null, traceback: null };
  const grain = error.grain || null;
  const tb = [...logs].reverse().find((l) => l.level === "ERROR" && (!grain || l.grain === grain) && /Traceback|line \d+/.test(l.text));
  const text = [error.message, error.traceback, tb && tb.text].filter(Boolean).join("\n");
  const own = grain ? [...text.matchAll(new RegExp(`${grain.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(?:\\.py|/__init__\\.py)?", line (\\d+)`, "g"))] : [];
  const any = [...text.matchAll(/line (\d+)/g)];
  const hit = own.length ? own[own.length - 1] : any.length ? any[any.length - 1] : null;
  return { grain, line: hit ? Number(hit[1]) : null, traceback: (tb && tb.text) || error.traceback || null };
}
