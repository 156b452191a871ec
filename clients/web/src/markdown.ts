// Markdown to safe HTML: raw HTML is shown as text, links only http(s)/mailto, no images
// (the page loads nothing external), code blocks highlighted by highlight.js.

import hljs from "highlight.js/lib/core";
import bash from "highlight.js/lib/languages/bash";
import css from "highlight.js/lib/languages/css";
import diff from "highlight.js/lib/languages/diff";
import go from "highlight.js/lib/languages/go";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import python from "highlight.js/lib/languages/python";
import rust from "highlight.js/lib/languages/rust";
import typescript from "highlight.js/lib/languages/typescript";
import xml from "highlight.js/lib/languages/xml";
import { Marked, type Tokens } from "marked";
import { escapeHtml } from "./text";

hljs.registerLanguage("bash", bash);
hljs.registerLanguage("css", css);
hljs.registerLanguage("diff", diff);
hljs.registerLanguage("go", go);
hljs.registerLanguage("javascript", javascript);
hljs.registerLanguage("json", json);
hljs.registerLanguage("python", python);
hljs.registerLanguage("rust", rust);
hljs.registerLanguage("typescript", typescript);
hljs.registerLanguage("xml", xml);
hljs.registerAliases(["sh", "shell", "zsh", "console"], { languageName: "bash" });
hljs.registerAliases(["html", "svg"], { languageName: "xml" });
hljs.registerAliases(["tsx", "mts", "cts"], { languageName: "typescript" });
hljs.registerAliases(["jsx", "mjs", "cjs"], { languageName: "javascript" });

/** Highlighted HTML of `code` in `lang` (escaped text when the language is unknown). */
export function highlight(code: string, lang?: string): string {
  const name = lang?.trim().split(/\s+/)[0]?.toLowerCase();
  if (name && hljs.getLanguage(name) && code.length < 200_000) {
    try {
      return hljs.highlight(code, { language: name, ignoreIllegals: true }).value;
    } catch {
      // Fall through to plain text.
    }
  }
  return escapeHtml(code);
}


function safeHref(href: string): string | undefined {
  const trimmed = href.trim();
  return /^(https?:|mailto:)/i.test(trimmed) ? trimmed : undefined;
}

const marked = new Marked({
  gfm: true,
  breaks: false,
  async: false,
  renderer: {
    html({ text }: Tokens.HTML | Tokens.Tag) {
      return escapeHtml(text);
    },
    link({ href, title, tokens }: Tokens.Link) {
      const inner = this.parser.parseInline(tokens);
      const safe = safeHref(href);
      if (!safe) return inner;
      const titleAttr = title ? ` title="${escapeHtml(title)}"` : "";
      return `<a href="${escapeHtml(safe)}"${titleAttr} target="_blank" rel="noopener noreferrer nofollow">${inner}</a>`;
    },
    image({ href, text }: Tokens.Image) {
      return `<span class="md-image">[image: ${escapeHtml(text || href)}]</span>`;
    },
    code({ text, lang }: Tokens.Code) {
      const language = lang ? escapeHtml(lang.split(/\s+/)[0] ?? "") : "";
      return `<pre class="code"${language ? ` data-lang="${language}"` : ""}><code class="hljs">${highlight(text, lang)}</code></pre>`;
    },
  },
});

const cache = new Map<string, string>();

/** Safe HTML for markdown `text` (cached; the cache forgets old texts). */
export function renderMarkdown(text: string): string {
  const hit = cache.get(text);
  if (hit !== undefined) return hit;
  let html: string;
  try {
    html = marked.parse(text, { async: false }) as string;
  } catch {
    html = `<pre>${escapeHtml(text)}</pre>`;
  }
  if (text.length < 100_000) {
    if (cache.size > 2000) cache.delete(cache.keys().next().value as string);
    cache.set(text, html);
  }
  return html;
}
