// Questions (`ui/request`): the first pending one not hidden in this tab as a modal; the others
// wait. Only an explicit answer answers: "Later" and Escape hide the dialog in this tab (the
// questions stay pending for every client; a badge reopens them). Closed when answered here or
// resolved elsewhere (`ui/resolved`).

import { useEffect, useState } from "preact/hooks";
import type { UiAnswer, UiRequestParams } from "../../typescript/src/generated/protocol";
import { app } from "./app";
import { inlineCode, plural } from "./format";
import { WriteDiff } from "./rows";
import type { SessionController } from "./session";
import { useEmitter } from "./store";

export function UiRequestDialog() {
  const request = app.shownRequest();
  if (!request) return null;
  return <Dialog key={request.requestId} request={request} pending={app.uiRequests.length - 1} />;
}

/** "N questions waiting": reopens the hidden ones (of `sessionId`, or all). */
export function QuestionsBadge({ sessionId }: { sessionId?: string }) {
  const count = app.uiRequests.filter((r) => !sessionId || r.sessionId === sessionId).length;
  if (!count) return null;
  return (
    <button
      class="questions-badge"
      data-testid="questions-badge"
      title="Questions for you; click to show them"
      onClick={() => app.showRequests(sessionId)}
    >
      {plural(count, "question")} waiting
    </button>
  );
}

function Dialog({ request, pending }: { request: UiRequestParams; pending: number }) {
  const r = request.request;
  const [text, setText] = useState(r.method === "editor" ? r.prefill ?? "" : "");
  const [picked, setPicked] = useState<string[]>([]);
  const answer = async (value: UiAnswer) => {
    const client = app.client;
    if (!client) return;
    app.dropRequest(request.requestId);
    const result = await app.call(() => client.respond(request, value));
    if (result && !result.accepted) app.notify("info", "Another client answered first.");
  };
  const hide = () => app.hideRequests();
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Escape") {
        e.stopPropagation();
        hide();
      }
    };
    window.addEventListener("keydown", onKey, true);
    return () => window.removeEventListener("keydown", onKey, true);
  }, [request.requestId]);
  const session = app.sessions.get(request.sessionId);
  const controller = app.current?.id === request.sessionId ? app.current : undefined;
  const tool = /^Allow `(write|edit|bash)`/.exec(r.title)?.[1];
  return (
    <div class="modal-backdrop">
      <div class="modal" role="dialog" aria-modal="true" data-testid="ui-request" data-request-id={request.requestId}>
        <div class="modal-title">{inlineCode(r.title)}</div>
        {session && <div class="muted small">{session.name || session.cwd}</div>}
        {tool && controller && <CallPreview session={controller} tool={tool} title={r.title} />}
        {r.method === "confirm" && <div class="modal-message">{inlineCode(r.message)}</div>}
        {r.method === "select" && !r.multiple && (
          <div class="options">
            {r.options.map((option) => (
              <button key={option} data-testid="ui-option" onClick={() => void answer({ value: option })}>
                {option}
              </button>
            ))}
          </div>
        )}
        {r.method === "select" && r.multiple && (
          <div class="options">
            {r.options.map((option) => (
              <button
                key={option}
                data-testid="ui-option"
                class={picked.includes(option) ? "active" : ""}
                aria-pressed={picked.includes(option)}
                onClick={() =>
                  setPicked(picked.includes(option) ? picked.filter((p) => p !== option) : [...picked, option])
                }
              >
                {picked.includes(option) ? "☑ " : "☐ "}
                {option}
              </button>
            ))}
            <button data-testid="ui-submit" class="primary" onClick={() => void answer({ values: picked })}>
              Submit
            </button>
          </div>
        )}
        {r.method === "confirm" && (
          <div class="options">
            <button data-testid="ui-option" class="primary" onClick={() => void answer({ confirmed: true })}>
              Yes
            </button>
            <button data-testid="ui-option" onClick={() => void answer({ confirmed: false })}>
              No
            </button>
          </div>
        )}
        {(r.method === "input" || r.method === "editor") && (
          <form
            class="options column"
            onSubmit={(e) => {
              e.preventDefault();
              void answer({ value: text });
            }}
          >
            {r.method === "input" ? (
              <input
                data-testid="ui-input"
                value={text}
                placeholder={r.placeholder ?? ""}
                onInput={(e) => setText((e.target as HTMLInputElement).value)}
                autoFocus
              />
            ) : (
              <textarea
                data-testid="ui-input"
                rows={10}
                value={text}
                onInput={(e) => setText((e.target as HTMLTextAreaElement).value)}
                autoFocus
              />
            )}
            <button type="submit" data-testid="ui-submit" class="primary">
              Submit
            </button>
          </form>
        )}
        {!app.client && <div class="warning small">Not connected: answers can be given once the connection is back.</div>}
        <div class="modal-footer">
          <button
            class="link"
            data-testid="ui-cancel"
            onClick={hide}
            title="Hide the questions in this tab (Esc). They stay unanswered; the badge at the top shows them again."
          >
            Later
          </button>
          {pending > 0 && <span class="muted small">{pending} more waiting</span>}
        </div>
      </div>
    </div>
  );
}

const PREVIEW_LINES = 20;

/** What an approval is about: the pending call's arguments (path, command, content head, the
 * edit as a diff). */
function CallPreview({ session, tool, title }: { session: SessionController; tool: string; title: string }) {
  useEmitter(session);
  const args = session.pendingArgs(tool, title);
  if (!args) return null;
  const str = (key: string) => (typeof args[key] === "string" ? (args[key] as string) : undefined);
  const path = str("path") ?? str("file_path");
  if (tool === "bash") {
    const command = str("command");
    return command ? (
      <div class="call-preview">
        <pre class="code">
          <code>$ {command}</code>
        </pre>
      </div>
    ) : null;
  }
  if (tool === "write") {
    const content = str("content") ?? "";
    const lines = content.split("\n");
    return (
      <div class="call-preview">
        {path && <div class="mono">{path}</div>}
        <pre class="code">
          <code>{lines.slice(0, PREVIEW_LINES).join("\n")}</code>
        </pre>
        {lines.length > PREVIEW_LINES && (
          <div class="muted small">… {plural(lines.length - PREVIEW_LINES, "more line")}</div>
        )}
      </div>
    );
  }
  // edit: pi's {oldText, newText} or a list of them.
  const edits: { oldText: string; newText: string }[] = [];
  const list = Array.isArray(args.edits) ? (args.edits as Record<string, unknown>[]) : [args];
  for (const edit of list) {
    if (edit && typeof edit.oldText === "string" && typeof edit.newText === "string") {
      edits.push({ oldText: edit.oldText, newText: edit.newText });
    }
  }
  return (
    <div class="call-preview">
      {path && <div class="mono">{path}</div>}
      {edits.slice(0, 5).map((edit, i) => (
        <WriteDiff key={i} path={path ?? ""} before={edit.oldText} after={edit.newText} />
      ))}
      {edits.length > 5 && <div class="muted small">… {plural(edits.length - 5, "more edit")}</div>}
    </div>
  );
}
