// Zips as lists of files, never as objects keyed by path: fflate's zipSync and unzipSync keep files in plain
// objects, where a file named __proto__ sets the object's prototype (its zip gets entries "0" and "1" instead).
// fflate's streaming classes (Zip with ZipDeflate, Unzip with UnzipInflate) take and give one file at a time, by
// name, and run synchronously with these (non-async) codecs. Pure logic, no page: tested by console/test/zip.test.mjs.
import { Unzip, UnzipInflate, Zip, ZipDeflate } from "fflate";

export class ZipError extends Error {}

function concat(parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * A zip of [{path, data}] in the list's order (a path given twice: its last data, at its first place), deflated,
 * every entry with the time mtime and the Unix mode attrs (e.g. 0o644), made by Unix.
 */
export function zip(files, { mtime, attrs = 0o644 } = {}) {
  const byPath = new Map();
  for (const f of files) byPath.set(f.path, f.data);
  const parts = [];
  let failed = null;
  const z = new Zip((err, data) => {
    if (err) failed = err;
    else parts.push(data);
  });
  for (const [path, data] of byPath) {
    const f = new ZipDeflate(path, { level: 6 });
    f.mtime = mtime || new Date();
    f.os = 3; // Unix: the external attributes' high half is the file's mode
    f.attrs = (attrs << 16) >>> 0;
    z.add(f);
    f.push(data, true);
  }
  z.end();
  if (failed) throw new ZipError(`could not zip: ${failed.message || failed}`);
  return concat(parts);
}

/** A zip's entries [{path, data}] in their order in the zip, folders' own entries included. */
export function unzip(bytes) {
  const b = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  const out = [];
  let failed = null;
  const u = new Unzip((file) => {
    const parts = [];
    file.ondata = (err, data, final) => {
      if (err) {
        failed = failed || new ZipError(`${file.name}: ${err.message || err}`);
        return;
      }
      parts.push(data);
      if (final) out.push({ path: file.name, data: concat(parts) });
    };
    if (file.compression !== 0 && file.compression !== 8) {
      failed = failed || new ZipError(`${file.name}: compression method ${file.compression} is not read here`);
      return;
    }
    file.start();
  });
  u.register(UnzipInflate);
  try {
    u.push(b, true);
  } catch (err) {
    throw new ZipError(`not a zip: ${err.message || err}`);
  }
  if (failed) throw failed;
  if (out.length === 0 && !(b.length >= 4 && b[0] === 0x50 && b[1] === 0x4b)) throw new ZipError("not a zip");
  return out;
}
