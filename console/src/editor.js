// CodeMirror 6, set up by hand rather than with basicSetup: no autocompletion pop-up and no auto-closed brackets,
// so what a person (or a test) types is what the editor holds.
//
// The Content-Security-Policy (style-src 'self', no 'unsafe-inline', no nonce: the frontend serves static files
// with one fixed header) refuses the <style> element CodeMirror adds to a document's head. Mounted in a shadow
// root, CodeMirror (style-mod) puts its styles into a constructable stylesheet (adoptedStyleSheets) instead, which
// the policy allows; its inline positions are set through element.style (CSSOM), which the policy allows too.
import { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
import { json } from "@codemirror/lang-json";
import { python } from "@codemirror/lang-python";
import { bracketMatching, defaultHighlightStyle, indentOnInput, indentUnit, syntaxHighlighting } from "@codemirror/language";
import { EditorState } from "@codemirror/state";
import { drawSelection, EditorView, highlightActiveLine, keymap, lineNumbers } from "@codemirror/view";
import { onLeave } from "./main.js";

/**
 * An editor in parent: language "python" or "json"; label names it for screen readers. Answers {view, get, set}.
 */
export function editor(parent, { doc = "", language = "python", label = "code", readOnly = false, minLines = 6 } = {}) {
  const shadow = parent.attachShadow({ mode: "open" });
  const view = new EditorView({
    root: shadow,
    parent: shadow,
    state: EditorState.create({
      doc,
      extensions: [
        lineNumbers(),
        history(),
        drawSelection(),
        indentOnInput(),
        bracketMatching(),
        highlightActiveLine(),
        syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
        keymap.of([...defaultKeymap, ...historyKeymap, indentWithTab]),
        language === "json" ? json() : python(),
        indentUnit.of(language === "json" ? "  " : "    "),
        EditorState.readOnly.of(readOnly),
        EditorView.contentAttributes.of({ "aria-label": label }),
        // long lines wrap and the editor grows with its text: no scrolling region inside the page, which a keyboard
        // user could not reach (axe: scrollable-region-focusable)
        EditorView.lineWrapping,
        EditorView.theme({
          "&": { fontSize: "13px", backgroundColor: "#fff" },
          ".cm-scroller": { fontFamily: "ui-monospace, 'DejaVu Sans Mono', Menlo, monospace" },
          ".cm-content, .cm-gutter": { minHeight: `${minLines * 1.4}em` },
        }),
      ],
    }),
  });
  parent.classList.add("editor", `lang-${language}`);
  // CodeMirror listens on the window and the document: an editor not destroyed is never freed
  let destroyed = false;
  const destroy = () => {
    if (!destroyed) view.destroy();
    destroyed = true;
  };
  onLeave(destroy);
  return {
    destroy,
    /** The cursor on line n (1-based), the line highlighted and scrolled into view: an error's place. */
    goToLine: (n) => {
      const line = view.state.doc.line(Math.max(1, Math.min(Number(n) || 1, view.state.doc.lines)));
      view.dispatch({ selection: { anchor: line.from }, effects: EditorView.scrollIntoView(line.from, { y: "center" }) });
      view.focus();
    },
    view,
    get: () => view.state.doc.toString(),
    set: (text) => view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } }),
  };
}
