// The open session: header (pickers, presence, stats), transcript, composer, side panels
// (tree, subagents).

import { useEffect, useRef, useState } from "preact/hooks";
import type { ModelInfo, SessionInfo } from "../../typescript/src/generated/protocol";
import { app } from "./app";
import { QuestionsBadge } from "./dialogs";
import { plural, tokenCount } from "./format";
import type { SessionController } from "./session";
import { title } from "./sessions";
import { useEmitter } from "./store";
import { Transcript } from "./transcript";
import { TreePanel } from "./tree";

const THINKING_LEVELS = ["off", "minimal", "low", "medium", "high", "xhigh"];

export function SessionView({ session }: { session: SessionController }) {
  useEmitter(session);
  const [showTree, setShowTree] = useState(false);
  const info = session.info ?? app.sessions.get(session.id);
  return (
    <div class="session-view">
      <header class="session-header">
        <div class="session-heading">
          <span class={`dot ${info?.status ?? "idle"}`} />
          <h1 class="ellipsis">
            {info ? title({ ...info, firstMessage: info.firstMessage ?? session.firstUserText() }) : session.id}
          </h1>
          <span class="muted ellipsis small" title={info?.cwd}>
            {info?.cwd}
          </span>
        </div>
        <div class="session-controls">
          <QuestionsBadge sessionId={session.id} />
          <Pickers session={session} info={info} />
          <Presence session={session} />
          <button
            data-testid="tree-toggle"
            class={showTree ? "active" : ""}
            onClick={() => setShowTree(!showTree)}
            title="Session tree"
          >
            Tree
          </button>
        </div>
      </header>
      <Stats session={session} />
      {(info?.warnings ?? []).map((warning) => (
        <div key={warning} class="warning-bar">
          {warning}
        </div>
      ))}
      <div class="session-body">
        <div class="session-main">
          <Transcript key={session.id} session={session} />
          <Todos session={session} />
          <Queue session={session} />
          <Composer session={session} />
        </div>
        <div class="side-panels">
          <Subagents session={session} />
          {showTree && <TreePanel session={session} />}
        </div>
      </div>
    </div>
  );
}

const ALL = ":all";
const KEYED = ":keyed";

function modelValue(m: ModelInfo): string {
  return `${m.provider}/${m.id}`;
}

/** The models to offer: those with a key (or all, or those matching `filter`) and the
 * session's current one, by provider. */
function modelGroups(models: ModelInfo[], current: string, all: boolean, filter: string) {
  const q = filter.trim().toLowerCase();
  const groups = new Map<string, ModelInfo[]>();
  for (const m of models) {
    const value = modelValue(m);
    const shown =
      value === current || (q ? value.toLowerCase().includes(q) || m.name.toLowerCase().includes(q) : all || m.hasKey);
    if (!shown) continue;
    const group = groups.get(m.provider) ?? [];
    group.push(m);
    groups.set(m.provider, group);
  }
  return [...groups].sort(([a], [b]) => a.localeCompare(b));
}

function Pickers({ session, info }: { session: SessionController; info?: SessionInfo }) {
  const current = info?.model ? `${info.model.provider}/${info.model.id}` : "";
  const models = app.models;
  const [all, setAll] = useState(false);
  const [filter, setFilter] = useState("");
  const known = models.some((m) => modelValue(m) === current);
  const groups = modelGroups(models, current, all, filter);
  const hidden = models.length - groups.reduce((n, [, list]) => n + list.length, 0);
  const client = app.client;
  return (
    <>
      <span class="model-picker">
        <select
          data-testid="model-picker"
          value={current}
          title={current ? `Model: ${current}` : "Model"}
          onChange={async (e) => {
            const select = e.target as HTMLSelectElement;
            const value = select.value;
            if (value === ALL || value === KEYED) {
              setAll(value === ALL);
              select.value = current;
              return;
            }
            if (!client || !value) return;
            const result = await app.call(() => client.call("session/setModel", { sessionId: session.id, model: value }));
            for (const warning of result?.warnings ?? []) app.notify("warning", warning);
          }}
        >
          {!current && <option value="">(no model)</option>}
          {current && !known && <option value={current}>✓ {current}</option>}
          {groups.map(([provider, list]) => (
            <optgroup key={provider} label={provider}>
              {list.map((m) => {
                const value = modelValue(m);
                return (
                  <option key={value} value={value} title={m.name}>
                    {value === current ? "✓ " : ""}
                    {m.id}
                    {m.hasKey ? "" : " (no key)"}
                  </option>
                );
              })}
            </optgroup>
          ))}
          {!filter.trim() && hidden > 0 && <option value={ALL}>All models… ({hidden} more without a key)</option>}
          {!filter.trim() && all && <option value={KEYED}>Only models with a key</option>}
        </select>
        <input
          type="search"
          class="model-filter"
          data-testid="model-filter"
          placeholder="filter"
          title="Filter the models (all of them, with a key or not)"
          value={filter}
          onInput={(e) => setFilter((e.target as HTMLInputElement).value)}
        />
      </span>
      <select
        data-testid="thinking-picker"
        value={info?.thinkingLevel ?? "off"}
        title="Thinking level"
        onChange={async (e) => {
          const level = (e.target as HTMLSelectElement).value;
          if (!client) return;
          const result = await app.call(() => client.call("session/setThinking", { sessionId: session.id, level }));
          if (result && result.level !== level) app.notify("info", `Thinking level clamped to ${result.level}`);
        }}
      >
        {THINKING_LEVELS.map((level) => (
          <option key={level} value={level}>
            thinking: {level}
          </option>
        ))}
      </select>
    </>
  );
}

function Presence({ session }: { session: SessionController }) {
  return (
    <div class="presence" data-testid="presence">
      {session.clients.map((client) => {
        const self = client.connectionId === app.connectionId;
        const typing = Boolean(client.draft);
        const label = self ? `${client.name} (this tab)` : `${client.name} · ${client.connectionId.slice(-6)}`;
        return (
          <span
            key={client.connectionId}
            class={`presence-client${self ? " self" : ""}${typing ? " typing" : ""}`}
            data-testid="presence-client"
            data-connection-id={client.connectionId}
            data-self={self ? "true" : undefined}
            data-typing={typing ? "true" : undefined}
            title={`${client.name}, connection ${client.connectionId}${typing ? `, typing: ${client.draft}` : ""}`}
          >
            {label}
            {typing ? " ✎" : ""}
          </span>
        );
      })}
    </div>
  );
}

function Stats({ session }: { session: SessionController }) {
  const stats = session.stats;
  if (!stats) return <div class="stats-strip" data-testid="session-stats" />;
  const t = stats.tokens;
  return (
    <div class="stats-strip" data-testid="session-stats" data-cost={String(stats.cost)}>
      <span>{plural(stats.totalMessages, "message")}</span>
      <span>{plural(stats.toolCalls, "tool call")}</span>
      <span title={`input ${t.input}, output ${t.output}, cache read ${t.cacheRead}, cache write ${t.cacheWrite}`}>
        {tokenCount(t.total)}
      </span>
      <span>${stats.cost.toFixed(4)}</span>
      {session.planMode && <span class="tag">plan mode</span>}
    </div>
  );
}


function Todos({ session }: { session: SessionController }) {
  const todos = session.todos;
  const [open, setOpen] = useState(false);
  if (!todos?.phases.length) return null;
  const tasks = todos.phases.flatMap((phase) => phase.tasks);
  const done = tasks.filter((task) => task.status === "completed").length;
  const active = tasks.find((task) => task.status === "in_progress");
  return (
    <div class="todos">
      <button class="link" onClick={() => setOpen(!open)}>
        {open ? "▾" : "▸"} Todos {done}/{tasks.length}
        {active ? ` — ${active.content}` : ""}
      </button>
      {open &&
        todos.phases.map((phase) => (
          <div key={phase.name}>
            <strong>{phase.name}</strong>
            <ul>
              {phase.tasks.map((task) => (
                <li key={task.id} class={`todo-${task.status}`}>
                  {task.content}
                </li>
              ))}
            </ul>
          </div>
        ))}
    </div>
  );
}

function Queue({ session }: { session: SessionController }) {
  const { steering, followUp } = session.queue;
  if (!steering.length && !followUp.length) return null;
  return (
    <div class="queue">
      {steering.map((text, i) => (
        <div key={`s${i}`}>
          <span class="tag">steer</span> {text}
        </div>
      ))}
      {followUp.map((text, i) => (
        <div key={`f${i}`}>
          <span class="tag">follow-up</span> {text}
        </div>
      ))}
    </div>
  );
}

function Composer({ session }: { session: SessionController }) {
  const [text, setText] = useState("");
  const draftTimer = useRef<ReturnType<typeof setTimeout>>();
  const sentDraft = useRef("");
  const running = session.status === "running";
  const input = useRef<HTMLTextAreaElement>(null);

  useEffect(() => () => clearTimeout(draftTimer.current), []);
  useEmitter(app);
  const online = app.state === "connected" && session.attached;
  const offlineWhy =
    app.state !== "connected"
      ? "Not connected to the daemon: Send, Steer, Follow-up and Abort are off until the connection is back."
      : session.loadError
        ? `This session could not be opened: ${session.loadError}`
        : "Opening the session…";
  const prefill = app.composerPrefill;
  useEffect(() => {
    if (prefill && prefill.sessionId === session.id) {
      app.composerPrefill = undefined;
      setText(prefill.text);
      input.current?.focus();
    }
  }, [prefill, session]);

  const sendDraft = (value: string) => {
    const client = app.client;
    if (!client || !session.attached || value === sentDraft.current) return;
    sentDraft.current = value;
    void client.call("session/setDraft", { sessionId: session.id, text: value }).catch(() => {});
  };

  const onInput = (value: string) => {
    setText(value);
    clearTimeout(draftTimer.current);
    draftTimer.current = setTimeout(() => sendDraft(value), 300);
  };

  const send = async (kind: "prompt" | "steer" | "followUp") => {
    const value = text;
    const client = app.client;
    if (!value.trim() || !client || !online) return;
    clearTimeout(draftTimer.current);
    setText("");
    sendDraft("");
    const method = kind === "prompt" ? "session/prompt" : kind === "steer" ? "session/steer" : "session/followUp";
    const ok = await app.call(() => client.call(method, { sessionId: session.id, text: value }));
    if (ok === undefined) setText((current) => current || value);
    input.current?.focus();
  };

  // As pi's Esc: the queued steering and follow-up messages come back to the editor (not
  // delivered after the abort, nor sent with the next prompt), then the run is aborted.
  const abort = async () => {
    const client = app.client;
    if (!client || !online) return;
    let queued: string[] = [];
    try {
      const queue = await client.call("session/dequeue", { sessionId: session.id });
      queued = [...queue.steering, ...queue.followUp];
    } catch {
      // Nothing to give back.
    }
    await app.call(() => client.call("session/abort", { sessionId: session.id }));
    if (queued.length) {
      setText((current) => [...queued, current].filter((part) => part.trim()).join("\n\n"));
      input.current?.focus();
    }
  };

  return (
    <div class="composer-wrap">
      {!online && (
        <div class="composer-note" data-testid="composer-offline">
          {offlineWhy}
        </div>
      )}
      <div class="composer">
        <textarea
          ref={input}
          data-testid="prompt-input"
          rows={3}
          placeholder={running ? "Steer the agent (Enter), or queue a follow-up…" : "Ask pi… (Enter sends, Shift+Enter for a new line)"}
          value={text}
          onInput={(e) => onInput((e.target as HTMLTextAreaElement).value)}
          onKeyDown={(e) => {
            if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
              e.preventDefault();
              void send(running ? "steer" : "prompt");
            } else if (e.key === "Escape" && running) {
              e.preventDefault();
              void abort();
            }
          }}
        />
        <div class="composer-buttons">
          <button
            data-testid="send"
            class="primary"
            disabled={!online}
            onClick={() => void send(running ? "steer" : "prompt")}
            title={!online ? offlineWhy : running ? "Steer (Enter): delivered after the running tools finish" : "Send (Enter)"}
          >
            {running ? "Steer" : "Send"}
          </button>
          {running && (
            <>
              <button
                data-testid="steer"
                disabled={!online}
                onClick={() => void send("steer")}
                title={online ? "Delivered after the running tools finish" : offlineWhy}
              >
                Steer
              </button>
              <button
                data-testid="follow-up"
                disabled={!online}
                onClick={() => void send("followUp")}
                title={online ? "Delivered when the agent would stop" : offlineWhy}
              >
                Follow-up
              </button>
              <button
                data-testid="abort"
                class="danger"
                disabled={!online}
                onClick={() => void abort()}
                title={online ? "Abort (Esc); queued messages come back here" : offlineWhy}
              >
                Abort
              </button>
            </>
          )}
        </div>
      </div>
    </div>
  );
}

/** Children of the open session started by its `task` calls, as a live nested tree. */
function Subagents({ session }: { session: SessionController }) {
  useEmitter(app);
  const [extra, setExtra] = useState<SessionInfo[]>([]);
  // Ask the daemon directly too (the list may not hold every page).
  useEffect(() => {
    let stop = false;
    let timer: ReturnType<typeof setTimeout>;
    const poll = async () => {
      const client = app.client;
      if (client) {
        try {
          const { sessions } = await client.call("session/list", { parentId: session.id, limit: 500 });
          if (!stop) setExtra(sessions as SessionInfo[]);
        } catch {
          // Retried.
        }
      }
      if (!stop) timer = setTimeout(poll, session.status === "running" ? 1500 : 5000);
    };
    void poll();
    return () => {
      stop = true;
      clearTimeout(timer);
    };
  }, [session]);
  const all = new Map<string, SessionInfo>();
  for (const info of extra) all.set(info.id, app.sessions.get(info.id) ?? info);
  for (const info of app.sessions.values()) if (info.taskName && info.parentSessionId) all.set(info.id, info);
  const childrenOf = (id: string) =>
    [...all.values()].filter((info) => info.parentSessionId === id && info.taskName).sort((a, b) => a.createdAt - b.createdAt);
  const root = childrenOf(session.id);
  if (!root.length) return null;
  const render = (info: SessionInfo, depth: number): preact.JSX.Element => (
    <li key={info.id}>
      <a
        href={`#/s/${encodeURIComponent(info.id)}`}
        data-testid="subagent"
        data-session-id={info.id}
        data-status={info.status}
        class="subagent"
      >
        <span class={`dot ${info.status}`} /> {info.taskName}
        <span class="muted small"> {info.firstMessage?.slice(0, 80) ?? ""}</span>
      </a>
      {depth < 6 && childrenOf(info.id).length > 0 && <ul>{childrenOf(info.id).map((child) => render(child, depth + 1))}</ul>}
    </li>
  );
  return (
    <section class="panel" data-testid="subagents">
      <h2>Subagents</h2>
      <ul class="subagent-tree">{root.map((info) => render(info, 0))}</ul>
    </section>
  );
}
