// Text helpers the main bundle needs without the renderer (src/render.ts).

export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}

/** The language highlight.js knows for a file name, if any. */
export function languageOf(path: string): string | undefined {
  const ext = /\.([a-z0-9]+)$/i.exec(path)?.[1]?.toLowerCase();
  if (!ext) return undefined;
  const map: Record<string, string> = {
    ts: "typescript",
    tsx: "typescript",
    js: "javascript",
    jsx: "javascript",
    mjs: "javascript",
    cjs: "javascript",
    rs: "rust",
    py: "python",
    sh: "bash",
    bash: "bash",
    json: "json",
    go: "go",
    html: "xml",
    xml: "xml",
    svg: "xml",
    css: "css",
    diff: "diff",
    patch: "diff",
  };
  return map[ext];
}
