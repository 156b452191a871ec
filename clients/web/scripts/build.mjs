// Builds dist/index.html, dist/app.js, dist/render.js and dist/app.css (fixed names, minified, no source
// maps, deterministic). `node scripts/build.mjs [OUTDIR]`.
import { build } from "esbuild";
import { copyFileSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const out = resolve(process.argv[2] ?? join(root, "dist"));
mkdirSync(out, { recursive: true });
for (const name of readdirSync(out)) rmSync(join(out, name), { recursive: true, force: true });

const common = {
  bundle: true,
  minify: true,
  sourcemap: false,
  legalComments: "none",
  logLevel: "warning",
  absWorkingDir: root,
  charset: "utf8",
};
await build({
  ...common,
  entryPoints: { app: join(root, "src/main.tsx") },
  outdir: out,
  format: "esm",
  target: ["es2020", "chrome100", "firefox100", "safari15"],
  jsx: "automatic",
  jsxImportSource: "preact",
  define: { "process.env.NODE_ENV": '"production"' },
});
// The renderer (markdown, highlighting, diffs), loaded once the session list is shown.
await build({
  ...common,
  entryPoints: { render: join(root, "src/render.ts") },
  outdir: out,
  format: "esm",
  target: ["es2020", "chrome100", "firefox100", "safari15"],
});
await build({
  ...common,
  entryPoints: { app: join(root, "src/app.css") },
  outdir: out,
  target: ["chrome100", "firefox100", "safari15"],
});
copyFileSync(join(root, "src/index.html"), join(out, "index.html"));
