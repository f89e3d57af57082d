// Zips as lists of files (console/src/zip.js, used by bundle.js): any name is a file's, __proto__ included.
import assert from "node:assert/strict";
import { test } from "node:test";
import { strToU8, unzipSync, zipSync } from "fflate";
import { replaceInZip, text, unzipFiles, zipFiles } from "../src/bundle.js";
import { unzip, ZipError } from "../src/zip.js";

const enc = (s) => new TextEncoder().encode(s);
const shape = (files) => files.map((f) => [f.path, text(f.data)]);

test("a file named __proto__ is a file like any other: zipped and unzipped back to exactly the three", () => {
  const files = [
    { path: "g.py", data: enc("print('g')\n") },
    { path: "__proto__", data: enc("not a prototype") },
    { path: "z.txt", data: enc("zzz") },
  ];
  const back = unzipFiles(zipFiles(files));
  assert.deepEqual(shape(back), [["g.py", "print('g')\n"], ["__proto__", "not a prototype"], ["z.txt", "zzz"]]);
  assert.equal(Object.getPrototypeOf(back), Array.prototype);
  assert.equal({}.__proto__, Object.prototype);
  // replaced in place, the others as they were
  const again = unzipFiles(replaceInZip(zipFiles(files), new Map([["__proto__", enc("still a file")]])));
  assert.deepEqual(shape(again), [["g.py", "print('g')\n"], ["__proto__", "still a file"], ["z.txt", "zzz"]]);
});

test("the list's order, a name that is a number included; a path given twice keeps its first place, its last data", () => {
  const zip = zipFiles([
    { path: "b.py", data: enc("b") },
    { path: "10", data: enc("ten") },
    { path: "a.txt", data: enc("a") },
    { path: "b.py", data: enc("b2") },
  ]);
  assert.deepEqual(shape(unzipFiles(zip)), [["b.py", "b2"], ["10", "ten"], ["a.txt", "a"]]);
});

test("fflate's own unzipSync reads what zip makes (fixed time, mode 644, made by Unix, UTF-8 names)", () => {
  const when = new Date(2020, 0, 1, 0, 0, 0);
  const files = [
    { path: "g.py", data: enc("print('hello')\n".repeat(50)) },
    { path: "site/é.txt", data: enc("accent") },
    { path: "empty", data: new Uint8Array(0) },
    { path: "bin", data: new Uint8Array([0, 1, 2, 255]) },
  ];
  const made = zipFiles(files);
  assert.deepEqual(zipFiles(files), made); // the same files, the same bytes: the same sha256 on the platform
  const back = unzipSync(made);
  assert.deepEqual(Object.keys(back), files.map((f) => f.path));
  assert.equal(text(back["site/é.txt"]), "accent");
  assert.deepEqual([...back.bin], [0, 1, 2, 255]);
});

test("reads another tool's zip: stored entries, folders' own entries (left out by unzipFiles), no UTF-8 flag", () => {
  const other = zipSync({ pkg: {}, "pkg/__init__.py": [strToU8("X = 1"), { level: 0 }], "r.txt": strToU8("six") });
  assert.deepEqual(unzip(other).map((f) => f.path), ["pkg/", "pkg/__init__.py", "r.txt"]);
  assert.deepEqual(shape(unzipFiles(other)), [["pkg/__init__.py", "X = 1"], ["r.txt", "six"]]);
  assert.deepEqual(unzipFiles(zipSync({})), []);
});

test("not a zip, or one cut short: a ZipError", () => {
  assert.throws(() => unzip(enc("print('not a zip')")), ZipError);
  const zip = zipFiles([{ path: "g.py", data: enc("x = 1\n".repeat(100)) }]);
  const cut = new Uint8Array([...zip.subarray(0, 40), ...zip.subarray(zip.length - 22)]);
  assert.throws(() => unzip(cut), ZipError);
});
