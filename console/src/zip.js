// Zips as lists of files, never as objects keyed by path: fflate's zipSync and unzipSync keep files in plain
// objects, where a file named __proto__ sets the object's prototype (its zip gets entries "0" and "1" instead).
// The bytes are what zipSync makes (deflate level 6, sizes in the local headers, UTF-8 names flagged), fflate
// doing the (in|de)flating; reading follows the central directory, as unzipSync does. Pure logic, no page: tested
// by console/test/bundle.test.mjs.
import { deflateSync, inflateSync, strFromU8, strToU8 } from "fflate";

export class ZipError extends Error {}

const CRC_TABLE = (() => {
  const t = new Int32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c;
  }
  return t;
})();

function crc32(data) {
  let c = -1;
  for (let i = 0; i < data.length; i++) c = CRC_TABLE[(c ^ data[i]) & 255] ^ (c >>> 8);
  return ~c >>> 0;
}

/** A DOS date and time (local time, 2-second steps), as a zip stores them. */
function dosTime(d) {
  return (((d.getFullYear() - 1980) << 25) | ((d.getMonth() + 1) << 21) | (d.getDate() << 16) | (d.getHours() << 11) | (d.getMinutes() << 5) | (d.getSeconds() >> 1)) >>> 0;
}

/**
 * A zip of [{path, data}] in the list's order (a path given twice: its last data, at its first place), deflated,
 * every entry with the time mtime and the Unix mode attrs (e.g. 0o644), made by Unix (os 3).
 */
export function zip(files, { mtime, attrs = 0o644 } = {}) {
  const byPath = new Map();
  for (const f of files) byPath.set(f.path, f.data);
  const time = dosTime(mtime || new Date());
  const locals = [];
  const centrals = [];
  let offset = 0;
  for (const [path, data] of byPath) {
    const name = strToU8(path);
    const utf8 = name.length !== path.length; // a non-ASCII name: flag 11 says UTF-8
    const packed = deflateSync(data, { level: 6 });
    const head = (size, sig) => {
      const b = new Uint8Array(size + name.length);
      const v = new DataView(b.buffer);
      v.setUint32(0, sig, true);
      return { b, v };
    };
    const fields = (v, at) => {
      v.setUint16(at, 20, true); // version needed: 2.0
      v.setUint16(at + 2, utf8 ? 0x800 : 0, true);
      v.setUint16(at + 4, 8, true); // deflate
      v.setUint32(at + 6, time, true);
      v.setUint32(at + 10, crc32(data), true);
      v.setUint32(at + 14, packed.length, true);
      v.setUint32(at + 18, data.length, true);
      v.setUint16(at + 22, name.length, true);
    };
    const local = head(30, 0x04034b50);
    fields(local.v, 4);
    local.b.set(name, 30);
    const central = head(46, 0x02014b50);
    central.v.setUint16(4, 20 | (3 << 8), true); // made by 2.0, on Unix
    fields(central.v, 6);
    central.v.setUint32(38, (attrs << 16) >>> 0, true);
    central.v.setUint32(42, offset, true);
    central.b.set(name, 46);
    locals.push(local.b, packed);
    centrals.push(central.b);
    offset += local.b.length + packed.length;
  }
  const dirSize = centrals.reduce((n, c) => n + c.length, 0);
  const end = new Uint8Array(22);
  const ev = new DataView(end.buffer);
  ev.setUint32(0, 0x06054b50, true);
  ev.setUint16(8, byPath.size, true);
  ev.setUint16(10, byPath.size, true);
  ev.setUint32(12, dirSize, true);
  ev.setUint32(16, offset, true);
  const out = new Uint8Array(offset + dirSize + 22);
  let at = 0;
  for (const part of [...locals, ...centrals, end]) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** A zip's entries [{path, data}] in its central directory's order, folders' own entries included. */
export function unzip(bytes) {
  const b = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  let e = b.length - 22;
  while (e >= 0 && b.length - e <= 65557 && v.getUint32(e, true) !== 0x06054b50) e--;
  if (e < 0 || b.length - e > 65557) throw new ZipError("not a zip: no end of its central directory");
  const count = v.getUint16(e + 10, true);
  let o = v.getUint32(e + 16, true);
  if (count === 0xffff || o === 0xffffffff) throw new ZipError("a zip64 archive: not read here");
  const out = [];
  try {
    for (let i = 0; i < count; i++) {
      if (v.getUint32(o, true) !== 0x02014b50) throw new ZipError(`not a zip: entry ${i} of its central directory is damaged`);
      const flags = v.getUint16(o + 8, true);
      const method = v.getUint16(o + 10, true);
      const packed = v.getUint32(o + 20, true);
      const size = v.getUint32(o + 24, true);
      const nameLen = v.getUint16(o + 28, true);
      const local = v.getUint32(o + 42, true);
      if (packed === 0xffffffff || size === 0xffffffff || local === 0xffffffff) throw new ZipError("a zip64 archive: not read here");
      const path = strFromU8(b.subarray(o + 46, o + 46 + nameLen), !(flags & 0x800));
      const start = local + 30 + v.getUint16(local + 26, true) + v.getUint16(local + 28, true);
      const raw = b.subarray(start, start + packed);
      if (raw.length !== packed) throw new ZipError(`not a zip: ${path} runs past its end`);
      let data;
      if (method === 0) data = raw.slice();
      else if (method === 8) data = inflateSync(raw, { out: new Uint8Array(size) });
      else throw new ZipError(`${path}: compression method ${method} is not read here`);
      out.push({ path, data });
      o += 46 + nameLen + v.getUint16(o + 30, true) + v.getUint16(o + 32, true);
    }
  } catch (err) {
    if (err instanceof RangeError) throw new ZipError("not a zip: it ends too early");
    throw err;
  }
  return out;
}
