// Builds the console into dist/: assets/main-<hash>.js and .css (bundled by esbuild, minified, with source maps) and
// index.html naming them. `npm run build`; `npm run build -- --dev` skips minifying.
import { build } from "esbuild";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const dist = join(here, "dist");
const dev = process.argv.includes("--dev");

await rm(dist, { recursive: true, force: true });
await mkdir(join(dist, "assets"), { recursive: true });
const result = await build({
  entryPoints: [join(here, "src/main.js")],
  bundle: true,
  format: "esm",
  target: ["es2022"],
  minify: !dev,
  sourcemap: true,
  outdir: join(dist, "assets"),
  entryNames: "[name]-[hash]",
  metafile: true,
  legalComments: "linked",
  logLevel: "warning",
});
const outputs = Object.keys(result.metafile.outputs).map((p) => basename(p));
const js = outputs.find((f) => f.endsWith(".js"));
const css = outputs.find((f) => f.endsWith(".css"));
if (!js || !css) throw new Error(`esbuild made no main .js and .css: ${outputs.join(", ")}`);
const html = (await readFile(join(here, "src/index.html"), "utf8")).replace("@JS@", `assets/${js}`).replace("@CSS@", `assets/${css}`);
await writeFile(join(dist, "index.html"), html);
console.log(`console built: dist/index.html, dist/assets/${js}, dist/assets/${css}`);
