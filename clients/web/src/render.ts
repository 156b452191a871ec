// The renderer: markdown, highlighting and line diffs — most of the UI's code by size, built as
// its own module (assets/render.js) and loaded after the session list is shown
// (src/renderer.ts), so the first paint does not wait for it.

export { diffLines } from "diff";
export { highlight, renderMarkdown } from "./markdown";
