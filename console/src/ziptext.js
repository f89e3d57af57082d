// The text files of a zip grain, as the editor shows them and as they are written back. CodeMirror holds a document
// with "\n" line breaks (a file's "\r\n" and "\r" become "\n"), and a lenient UTF-8 decoding replaces invalid bytes
// with U+FFFD: an unchanged CRLF file would count as changed, and a file that is not UTF-8 would be written back
// corrupted. So: a file is compared with its original with line breaks made "\n"; written back with "\r\n" when most of
// the original's breaks were; a file that is not valid UTF-8 is shown but never edited nor written (kept byte for
// byte). Pure logic: tested by console/test/ziptext.test.mjs.

/** {text, editable, crlf}: the file's text (lossy when not UTF-8: then editable is false) and its line breaks. */
export function decodeFile(data) {
  const bytes = data instanceof Uint8Array ? data : new Uint8Array(data || []);
  let text;
  let editable = true;
  try {
    // ignoreBOM: a byte order mark stays in the text, so it is written back
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    text = new TextDecoder("utf-8", { ignoreBOM: true }).decode(bytes);
    editable = false;
  }
  const crlf = (text.match(/\r\n/g) || []).length;
  const lf = (text.match(/(^|[^\r])\n/g) || []).length;
  return { text, editable, crlf: crlf > 0 && crlf >= lf };
}

/** The text as the editor holds it: every line break "\n". */
export function asEdited(text) {
  return String(text).replace(/\r\n?/g, "\n");
}

/**
 * The files to write (Map path -> bytes): those edited (Map path -> the editor's text) whose text differs from their
 * original's (Map path -> decodeFile()), with the original's line breaks; a file that is not editable never.
 */
export function changedFiles(originals, edits) {
  const out = new Map();
  const enc = new TextEncoder();
  for (const [path, edited] of edits) {
    const o = originals.get(path);
    if (!o || !o.editable || edited === asEdited(o.text)) continue;
    out.set(path, enc.encode(o.crlf ? asEdited(edited).replace(/\n/g, "\r\n") : edited));
  }
  return out;
}
