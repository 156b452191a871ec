// Rebuilds into a temporary directory and fails when the result differs from dist/ (the
// committed files the daemon embeds), or when dist/ holds anything else.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const dist = join(root, "dist");
const temp = mkdtempSync(join(tmpdir(), "pi-web-check-"));
try {
  execFileSync(process.execPath, [join(root, "scripts/build.mjs"), temp], { stdio: "inherit" });
  const expected = ["app.css", "app.js", "index.html", "render.js"];
  const problems = [];
  const have = readdirSync(dist).sort();
  if (JSON.stringify(have) !== JSON.stringify(expected)) {
    problems.push(`dist/ holds ${have.join(", ")}; expected exactly ${expected.join(", ")}`);
  }
  for (const name of expected) {
    let committed;
    try {
      committed = readFileSync(join(dist, name));
    } catch {
      problems.push(`dist/${name} is missing`);
      continue;
    }
    if (!committed.equals(readFileSync(join(temp, name)))) {
      problems.push(`dist/${name} differs from a fresh build`);
    }
  }
  // The page's CSP allows no inline script or style and no eval.
  for (const name of ["app.js", "render.js"]) {
    const js = readFileSync(join(temp, name), "utf8");
    for (const bad of ["new Function(", "eval("]) {
      if (js.includes(bad)) problems.push(`${name} contains ${bad}`);
    }
  }
  const html = readFileSync(join(temp, "index.html"), "utf8");
  if (/<script(?![^>]*\bsrc=)/i.test(html) || /<style|\sstyle=/i.test(html)) {
    problems.push("index.html has inline script or style");
  }
  if (/(?:src|href)="(?:https?:)?\/\//i.test(html)) problems.push("index.html loads an external URL");
  if (problems.length) {
    console.error(`${problems.join("\n")}\nRun \`npm run build\` in clients/web and commit dist/.`);
    process.exit(1);
  }
  console.log("dist/ is up to date");
} finally {
  rmSync(temp, { recursive: true, force: true });
}
