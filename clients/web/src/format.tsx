// Small text helpers.

/** `1 tool call`, `2 tool calls`. */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** Text with `backticks` as inline code (as Preact children: no HTML is parsed). */
export function inlineCode(text: string): (string | preact.JSX.Element)[] {
  return text.split(/`([^`\n]+)`/).map((part, i) => (i % 2 ? <code key={i}>{part}</code> : part));
}

export function formatTokens(n: number): string {
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)}M`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)}k`;
  return String(n);
}

/** `1 token`, `12.3k tokens`. */
export function tokenCount(n: number): string {
  return `${formatTokens(n)} ${n === 1 ? "token" : "tokens"}`;
}
