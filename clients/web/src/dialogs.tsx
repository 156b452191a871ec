// Questions (`ui/request`): the first pending one as a modal; the others wait in a queue.
// Closed when answered here or resolved elsewhere (`ui/resolved`).

import { useEffect, useState } from "preact/hooks";
import type { UiAnswer, UiRequestParams } from "../../typescript/src/generated/protocol";
import { app } from "./app";

export function UiRequestDialog() {
  const request = app.uiRequests[0];
  if (!request) return null;
  return <Dialog key={request.requestId} request={request} pending={app.uiRequests.length - 1} />;
}

function Dialog({ request, pending }: { request: UiRequestParams; pending: number }) {
  const r = request.request;
  const [text, setText] = useState(r.method === "editor" ? r.prefill ?? "" : "");
  const [picked, setPicked] = useState<string[]>([]);
  const answer = async (value: UiAnswer) => {
    const client = app.client;
    app.dropRequest(request.requestId);
    if (!client) return;
    const result = await app.call(() => client.respond(request, value));
    if (result && !result.accepted) app.notify("info", "Another client answered first.");
  };
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Escape") {
        e.stopPropagation();
        void answer({ cancelled: true });
      }
    };
    window.addEventListener("keydown", onKey, true);
    return () => window.removeEventListener("keydown", onKey, true);
  }, [request.requestId]);
  const session = app.sessions.get(request.sessionId);
  return (
    <div class="modal-backdrop">
      <div class="modal" role="dialog" aria-modal="true" data-testid="ui-request" data-request-id={request.requestId}>
        <div class="modal-title">{r.title}</div>
        {session && <div class="muted small">{session.name || session.cwd}</div>}
        {r.method === "confirm" && <div class="modal-message">{r.message}</div>}
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
        <div class="modal-footer">
          <button class="link" data-testid="ui-cancel" onClick={() => void answer({ cancelled: true })}>
            Dismiss
          </button>
          {pending > 0 && <span class="muted small">{pending} more waiting</span>}
        </div>
      </div>
    </div>
  );
}
