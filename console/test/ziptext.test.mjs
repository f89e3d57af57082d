// A zip grain's files in the editor (console/src/ziptext.js): line breaks kept, files that are not UTF-8 kept as they were.
import assert from "node:assert/strict";
import { test } from "node:test";
import { asEdited, changedFiles, decodeFile } from "../src/ziptext.js";

const enc = (s) => new TextEncoder().encode(s);
const dec = (b) => new TextDecoder().decode(b);

test("an unchanged CRLF file is not changed; an edited one is written with CRLF", () => {
  const o = decodeFile(enc("def f():\r\n    return 1\r\n"));
  assert.deepEqual(o, { text: "def f():\r\n    return 1\r\n", editable: true, crlf: true });
  const originals = new Map([["m.py", o]]);
  // what CodeMirror answers for it: "\n" breaks
  assert.equal(changedFiles(originals, new Map([["m.py", asEdited(o.text)]])).size, 0);
  const w = changedFiles(originals, new Map([["m.py", "def f():\n    return 2\n"]]));
  assert.equal(dec(w.get("m.py")), "def f():\r\n    return 2\r\n");
});

test("an LF file stays LF; a lone CR counts as a break the editor shows", () => {
  const o = decodeFile(enc("a\nb\n"));
  assert.equal(o.crlf, false);
  const originals = new Map([["a.py", o], ["cr.py", decodeFile(enc("x\ry\r"))]]);
  assert.equal(changedFiles(originals, new Map([["a.py", "a\nb\n"], ["cr.py", "x\ny\n"]])).size, 0);
  assert.equal(dec(changedFiles(originals, new Map([["a.py", "a\nc\n"]])).get("a.py")), "a\nc\n");
});

test("mixed breaks: the most of them decide", () => {
  assert.equal(decodeFile(enc("a\r\nb\r\nc\n")).crlf, true);
  assert.equal(decodeFile(enc("a\nb\nc\r\n")).crlf, false);
  assert.equal(decodeFile(enc("\n")).crlf, false);
});

test("a file that is not UTF-8 is shown, never edited nor written", () => {
  const latin1 = new Uint8Array([0x23, 0x20, 0x63, 0x61, 0x66, 0xe9, 0x0a]); // "# café\n" in Latin-1
  const o = decodeFile(latin1);
  assert.equal(o.editable, false);
  assert.match(o.text, /\ufffd/);
  assert.equal(changedFiles(new Map([["l.py", o]]), new Map([["l.py", "# cafe\n"]])).size, 0);
});

test("a byte order mark and non-ASCII text round-trip", () => {
  const bytes = enc("\ufeffprint('é ✓')\n");
  const o = decodeFile(bytes);
  assert.equal(o.editable, true);
  assert.equal(o.text[0], "\ufeff");
  assert.equal(changedFiles(new Map([["b.py", o]]), new Map([["b.py", o.text]])).size, 0);
  assert.deepEqual([...changedFiles(new Map([["b.py", o]]), new Map([["b.py", o.text + "x\n"]])).get("b.py").slice(0, 3)], [0xef, 0xbb, 0xbf]);
});

test("a path not in the zip is not written here", () => {
  assert.equal(changedFiles(new Map(), new Map([["new.py", "x"]])).size, 0);
});
