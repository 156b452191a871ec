// One transcript row: user / assistant (text, thinking, tool calls with results) / others.

import { Component } from "preact";
import { useState } from "preact/hooks";
import { tokenCount } from "./format";
import { renderer, rendererLoaded } from "./renderer";
import { useEmitter } from "./store";
import { escapeHtml, languageOf } from "./text";
import type { Row, SessionController } from "./session";
import type { Block, Msg, ToolCallBlock, ToolResultLike, ToolState } from "./types";

export function textOf(content: Msg["content"]): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((block) => block.type === "text")
    .map((block) => (block as { text: string }).text)
    .join("\n");
}

function Markdown({ text }: { text: string }) {
  useEmitter(rendererLoaded);
  const render = renderer();
  if (!render) return <div class="md plain">{text}</div>;
  return <div class="md" dangerouslySetInnerHTML={{ __html: render.renderMarkdown(text) }} />;
}

function Images({ content }: { content: Msg["content"] }) {
  if (!Array.isArray(content)) return null;
  const images = content.filter((block) => block.type === "image") as Extract<Block, { type: "image" }>[];
  if (!images.length) return null;
  return (
    <div class="images">
      {images.map((image, i) =>
        /^image\/(png|jpeg|gif|webp)$/.test(image.mimeType) ? (
          <img key={i} alt="image" src={`data:${image.mimeType};base64,${image.data}`} />
        ) : null,
      )}
    </div>
  );
}

function Thinking({ text, streaming }: { text: string; streaming: boolean }) {
  const [open, setOpen] = useState(false);
  const show = open || streaming;
  return (
    <div class={`thinking${show ? " open" : ""}`}>
      <button class="link" onClick={() => setOpen(!open)}>
        {show ? "▾" : "▸"} Thinking{streaming ? "…" : ""}
      </button>
      {show && <div class="thinking-text">{text}</div>}
    </div>
  );
}

/** Lines of pi's display diff (`+N text`, `-N text`, ` N text`, ` ...`). */
export function DiffText({ diff }: { diff: string }) {
  const lines = diff.split("\n");
  return (
    <pre class="diff">
      {lines.map((line, i) => {
        const cls = line.startsWith("+") ? "diff-add" : line.startsWith("-") ? "diff-del" : "diff-ctx";
        return (
          <div key={i} class={cls}>
            {line || " "}
          </div>
        );
      })}
    </pre>
  );
}

const MAX_DIFF_CHARS = 400_000;

export function WriteDiff({ path, before, after }: { path: string; before: string; after: string }) {
  if (before.length + after.length > MAX_DIFF_CHARS) {
    return <div class="muted">(file too large to diff)</div>;
  }
  useEmitter(rendererLoaded);
  const render = renderer();
  if (!render) return <pre class="diff plain">{after}</pre>;
  const parts = render.diffLines(before, after);
  const out: { cls: string; text: string }[] = [];
  for (const part of parts) {
    const lines = part.value.replace(/\n$/, "").split("\n");
    const cls = part.added ? "diff-add" : part.removed ? "diff-del" : "diff-ctx";
    const mark = part.added ? "+" : part.removed ? "-" : " ";
    if (cls === "diff-ctx" && lines.length > 8) {
      for (const line of lines.slice(0, 3)) out.push({ cls, text: ` ${line}` });
      out.push({ cls, text: " ..." });
      for (const line of lines.slice(-3)) out.push({ cls, text: ` ${line}` });
    } else {
      for (const line of lines) out.push({ cls, text: `${mark}${line}` });
    }
  }
  return (
    <pre class="diff" title={path}>
      {out.map((line, i) => (
        <div key={i} class={line.cls}>
          {line.text || " "}
        </div>
      ))}
    </pre>
  );
}

function Collapsible({ text, lang, limit = 30 }: { text: string; lang?: string; limit?: number }) {
  const lines = text.split("\n");
  const [open, setOpen] = useState(false);
  useEmitter(rendererLoaded);
  const render = renderer();
  const long = lines.length > limit || text.length > 6000;
  const shown = long && !open ? lines.slice(0, limit).join("\n").slice(0, 6000) : text;
  return (
    <div class="output">
      <pre class="code">
        <code class="hljs" dangerouslySetInnerHTML={{ __html: lang && render ? render.highlight(shown, lang) : escapeHtml(shown) }} />
      </pre>
      {long && (
        <button class="link" onClick={() => setOpen(!open)}>
          {open ? "Show less" : `Show all (${lines.length} lines)`}
        </button>
      )}
    </div>
  );
}

function argsSummary(name: string, args: Record<string, unknown>): string {
  const pick = (key: string) => (typeof args[key] === "string" ? (args[key] as string) : undefined);
  if (name === "bash") return pick("command") ?? "";
  return pick("path") ?? pick("file_path") ?? pick("pattern") ?? pick("query") ?? pick("url") ?? "";
}

export function ToolCallView({ call, state }: { call: ToolCallBlock; state?: ToolState }) {
  const name = call.name || state?.toolName || "tool";
  const args = (call.arguments && typeof call.arguments === "object" ? call.arguments : state?.args ?? {}) as Record<
    string,
    unknown
  >;
  const result: ToolResultLike | undefined = state?.result;
  const status = !state ? "pending" : !state.done ? "running" : state.isError ? "error" : "done";
  const [showArgs, setShowArgs] = useState(false);
  const summary = argsSummary(name, args);
  const resultText = result ? textOf(result.content as Block[]) : "";
  const details = result?.details ?? {};
  let body = null;
  if (name === "edit" && typeof details.diff === "string" && !state?.isError) {
    body = <DiffText diff={details.diff} />;
  } else if (name === "write" && typeof args.content === "string" && state?.done && !state.isError) {
    const before = details.created === true ? "" : typeof details.previousText === "string" ? details.previousText : undefined;
    body =
      before !== undefined ? (
        <WriteDiff path={String(args.path ?? "")} before={before} after={args.content} />
      ) : (
        <Collapsible text={args.content} lang={languageOf(String(args.path ?? ""))} limit={20} />
      );
  }
  return (
    <div class={`tool-call tool-${status}`} data-testid="tool-call" data-tool-name={name} data-tool-call-id={call.id}>
      <div class="tool-head">
        <span class={`dot ${status}`} />
        <strong>{name}</strong>
        <span class="tool-summary">{summary}</span>
        <button class="link small" onClick={() => setShowArgs(!showArgs)}>
          {showArgs ? "hide args" : "args"}
        </button>
      </div>
      {(showArgs || (!summary && !state)) && (
        <Collapsible text={call.partialJson && !state ? call.partialJson : JSON.stringify(args, null, 2)} lang="json" limit={15} />
      )}
      {body}
      {resultText && (name !== "edit" || state?.isError || !body) && (
        <div class={state?.isError ? "tool-error" : "tool-result"}>
          <Collapsible text={resultText} limit={name === "write" || name === "edit" ? 4 : 20} />
        </div>
      )}
      {result && <Images content={result.content as Block[]} />}
    </div>
  );
}

/** An assistant message; `row` holds its calls' states (none while it streams: its calls have
 * not run yet, and a reused call id must not show an older call's result). */
function AssistantBody({ msg, row, streaming }: { msg: Msg; row?: Row; streaming: boolean }) {
  const content = Array.isArray(msg.content) ? msg.content : [];
  return (
    <>
      {content.map((block, i) => {
        if (block.type === "text") return block.text ? <Markdown key={i} text={block.text} /> : null;
        if (block.type === "thinking")
          return block.redacted ? (
            <div key={i} class="muted">(thinking redacted)</div>
          ) : block.thinking ? (
            <Thinking key={i} text={block.thinking} streaming={streaming && i === content.length - 1} />
          ) : null;
        if (block.type === "toolCall") {
          return <ToolCallView key={i} call={block} state={row?.calls?.find((slot) => slot.index === i)?.state} />;
        }
        if (block.type === "image") return <Images key={i} content={[block]} />;
        return null;
      })}
      {msg.stopReason === "error" && <div class="error">{msg.errorMessage || "The model failed."}</div>}
      {msg.stopReason === "aborted" && <div class="muted">{msg.errorMessage || "Aborted."}</div>}
    </>
  );
}

function RowBody({ row }: { row: Row }) {
  const msg = row.message;
  const entry = row.entry;
  switch (row.role) {
    case "user":
      return (
        <>
          <Markdown text={textOf(msg?.content)} />
          <Images content={msg?.content} />
        </>
      );
    case "assistant":
      return msg ? <AssistantBody msg={msg} row={row} streaming={false} /> : null;
    case "toolResult": {
      if (row.inCall) {
        return (
          <div class={`meta result-marker${msg?.isError ? " error" : ""}`}>
            ↳ {msg?.toolName ?? "tool"} {msg?.isError ? "failed" : "done"}
          </div>
        );
      }
      // A result without its call in the branch: shown from the message alone.
      return (
        <ToolCallView
          call={{ type: "toolCall", id: msg?.toolCallId ?? "", name: msg?.toolName ?? "", arguments: {} }}
          state={{
            toolCallId: msg?.toolCallId ?? "",
            toolName: msg?.toolName ?? "",
            done: true,
            isError: msg?.isError,
            result: { content: msg?.content as Block[], details: msg?.details },
          }}
        />
      );
    }
    case "bashExecution":
      return (
        <div class="bash">
          <div class="mono">$ {msg?.command}</div>
          <Collapsible text={msg?.output ?? ""} />
          {msg?.exitCode != null && msg.exitCode !== 0 && <div class="error">exit code {msg.exitCode}</div>}
          {msg?.cancelled && <div class="muted">cancelled</div>}
        </div>
      );
    case "custom":
      return (
        <div class="custom">
          <span class="tag">{String(msg?.customType ?? entry?.customType ?? "custom")}</span>
          <Markdown text={textOf((msg?.content ?? entry?.content) as Msg["content"])} />
        </div>
      );
    case "compaction":
    case "compactionSummary":
      return (
        <details class="summary">
          <summary>Compacted{entry?.tokensBefore ? ` (${tokenCount(Number(entry.tokensBefore))} before)` : ""}</summary>
          <Markdown text={String(entry?.summary ?? msg?.summary ?? "")} />
        </details>
      );
    case "branchSummary":
      return (
        <details class="summary">
          <summary>Branch summary</summary>
          <Markdown text={String(entry?.summary ?? msg?.summary ?? "")} />
        </details>
      );
    case "model_change":
      return <div class="meta">Model: {String(entry?.provider)}/{String(entry?.modelId)}</div>;
    case "thinking_level_change":
      return <div class="meta">Thinking: {String(entry?.thinkingLevel)}</div>;
    case "approval": {
      const data = (entry?.data ?? {}) as Record<string, unknown>;
      const call = typeof data.call === "string" ? data.call : JSON.stringify(data.call ?? "");
      return (
        <div class="meta">
          Approval: {call} — {String(data.decision ?? "")}
          {data.answer ? ` (${String(data.answer)})` : ""}
          {data.answeredBy ? ` by ${String(data.answeredBy)}` : ""}
        </div>
      );
    }
    case "error":
      return <div class="error">{row.text}</div>;
    case "notice":
      return <div class="muted">{row.text}</div>;
    default:
      return <div class="muted">{row.role}</div>;
  }
}

const ROLE_LABEL: Record<string, string> = {
  user: "You",
  assistant: "Assistant",
  toolResult: "Tool",
  bashExecution: "Shell",
  custom: "Extension",
};

interface RowProps {
  row: Row;
  session: SessionController;
  version: number;
}

export class RowView extends Component<RowProps> {
  shouldComponentUpdate(next: RowProps) {
    const props = this.props;
    return next.row !== props.row || next.version !== props.version || next.session !== props.session;
  }

  render({ row }: RowProps) {
    const label = row.inCall ? undefined : ROLE_LABEL[row.role];
    return (
      <div class={`entry role-${row.role}${row.inCall ? " in-call" : ""}`} data-testid="entry" data-entry-id={row.entryId} data-role={row.role}>
        {label && <div class="who">{label}</div>}
        <div class="body">
          <RowBody row={row} />
        </div>
      </div>
    );
  }
}

export function StreamingView({ session }: { session: SessionController }) {
  const msg = session.streaming;
  if (!msg) return null;
  return (
    <div class="entry role-assistant streaming" data-testid="streaming" data-role="assistant">
      <div class="who">Assistant</div>
      <div class="body">
        <AssistantBody msg={msg} streaming={true} />
        <span class="cursor" />
      </div>
    </div>
  );
}
