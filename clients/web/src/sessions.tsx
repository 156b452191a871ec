// The left pane: every session (stored ones too), running first then newest; search and
// filters; subagents nested under their parent; a new session.

import { useEffect, useMemo, useState } from "preact/hooks";
import type { SessionInfo } from "../../typescript/src/generated/protocol";
import { app } from "./app";
import { renderer } from "./renderer";
import { plural } from "./format";
import { useEmitter } from "./store";

/** How many sessions the list shows in its first frame (more than fill a tall screen). */
const FIRST_ITEMS = 40;

function modelKey(info: SessionInfo): string {
  return info.model ? `${info.model.provider}/${info.model.id}` : "";
}

export function title(info: SessionInfo): string {
  return info.name || info.taskName || info.firstMessage?.split("\n")[0]?.slice(0, 120) || "(empty session)";
}

function ago(ms: number): string {
  const s = Math.max(0, (Date.now() - ms) / 1000);
  if (s < 60) return "now";
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

function shortCwd(cwd: string): string {
  const parts = cwd.split("/").filter(Boolean);
  return parts.length > 2 ? `…/${parts.slice(-2).join("/")}` : cwd;
}

const byActivity = (a: SessionInfo, b: SessionInfo) =>
  (a.status === "running" ? 0 : 1) - (b.status === "running" ? 0 : 1) || b.updatedAt - a.updatedAt;

export function SessionList() {
  const [query, setQuery] = useState("");
  const [cwd, setCwd] = useState("");
  const [state, setState] = useState("");
  const [model, setModel] = useState("");
  const [creating, setCreating] = useState(false);
  const [newCwd, setNewCwd] = useState("");
  const [createError, setCreateError] = useState<string>();
  const all = [...app.sessions.values()];
  // The first meaningful paint: the first frame with sessions in the list (read by the web
  // bench as `performance.getEntriesByName("pi:sessions-painted")`).
  useEffect(() => {
    if (all.length > 0 && performance.getEntriesByName("pi:sessions-painted").length === 0) {
      requestAnimationFrame(() => {
        if (performance.getEntriesByName("pi:sessions-painted").length === 0) {
          performance.mark("pi:sessions-painted");
        }
        // Now the renderer a transcript needs.
        renderer();
      });
    }
  }, [all.length]);

  const cwds = useMemo(() => [...new Set(all.map((s) => s.cwd))].sort(), [app.sessions, all.length]);
  const models = useMemo(() => [...new Set(all.map(modelKey).filter(Boolean))].sort(), [app.sessions, all.length]);

  const q = query.trim().toLowerCase();
  const matches = (info: SessionInfo) =>
    (!q ||
      [info.name, info.firstMessage, info.cwd, info.id, info.taskName].some((field) =>
        field?.toLowerCase().includes(q),
      )) &&
    (!cwd || info.cwd === cwd) &&
    (!state || info.status === state) &&
    (!model || modelKey(info) === model);

  // Subagents under their parent (when the parent is listed).
  const children = new Map<string, SessionInfo[]>();
  const top: SessionInfo[] = [];
  for (const info of all) {
    if (info.parentSessionId && info.taskName && app.sessions.has(info.parentSessionId)) {
      const list = children.get(info.parentSessionId) ?? [];
      list.push(info);
      children.set(info.parentSessionId, list);
    } else {
      top.push(info);
    }
  }
  const filtering = Boolean(q || cwd || state || model);
  // A parent is shown when it or one of its descendants matches.
  const shown = (info: SessionInfo, depth = 0): boolean =>
    matches(info) || (depth < 8 && (children.get(info.id) ?? []).some((child) => shown(child, depth + 1)));

  const render = (info: SessionInfo, depth: number): preact.JSX.Element[] => {
    const kids = (children.get(info.id) ?? []).sort(byActivity);
    const out = [<SessionItem key={info.id} info={info} depth={depth} dim={filtering && !matches(info)} />];
    if (depth < 8) for (const kid of kids) if (!filtering || shown(kid)) out.push(...render(kid, depth + 1));
    return out;
  };

  const items = top
    .sort(byActivity)
    .filter((info) => !filtering || shown(info))
    .flatMap((info) => render(info, 0));
  // The first screenfuls at once, the rest once that frame is out: a long list shows sooner.
  const [everything, setEverything] = useState(false);
  const more = items.length > FIRST_ITEMS;
  useEffect(() => {
    if (everything || !more) return;
    let timer = 0;
    const frame = requestAnimationFrame(() => {
      timer = window.setTimeout(() => setEverything(true), 0);
    });
    return () => {
      cancelAnimationFrame(frame);
      clearTimeout(timer);
    };
  }, [everything, more]);
  const listed = everything ? items : items.slice(0, FIRST_ITEMS);

  const create = async () => {
    const dir = newCwd.trim();
    if (!dir) {
      setCreateError("Give the project's directory (an absolute path on the daemon's machine).");
      return;
    }
    if (!app.client) {
      setCreateError("Not connected to the daemon.");
      return;
    }
    setCreateError(undefined);
    const client = app.client;
    const info = await app.call(() => client.call("session/create", { cwd: dir }));
    if (info) {
      for (const warning of info.warnings ?? []) app.notify("warning", warning);
      app.updateInfo(info as SessionInfo);
      setCreating(false);
      setNewCwd("");
      app.go(`#/s/${encodeURIComponent(info.id)}`);
    }
  };

  return (
    <aside class="sidebar">
      <div class="sidebar-tools">
        <input
          type="search"
          placeholder="Search sessions"
          data-testid="search"
          value={query}
          onInput={(e) => setQuery((e.target as HTMLInputElement).value)}
        />
        <button data-testid="new-session" onClick={() => setCreating(!creating)} title="New session">
          + New
        </button>
      </div>
      {creating && (
        <form
          class="new-session"
          onSubmit={(e) => {
            e.preventDefault();
            void create();
          }}
        >
          <input
            data-testid="new-session-cwd"
            placeholder="/absolute/project/directory"
            value={newCwd}
            list="known-cwds"
            onInput={(e) => {
              setNewCwd((e.target as HTMLInputElement).value);
              setCreateError(undefined);
            }}
            title="The project's directory: an absolute path on the daemon's machine"
            autoFocus
          />
          <datalist id="known-cwds">
            {cwds.map((dir) => (
              <option key={dir} value={dir} />
            ))}
          </datalist>
          <button type="submit" data-testid="new-session-create">
            Create
          </button>
          {createError && (
            <div class="error small new-session-error" data-testid="new-session-error">
              {createError}
            </div>
          )}
        </form>
      )}
      <div class="filters">
        <select
          data-testid="filter-cwd"
          title="Filter by directory"
          value={cwd}
          onChange={(e) => setCwd((e.target as HTMLSelectElement).value)}
        >
          <option value="">Dir</option>
          {cwds.map((dir) => (
            <option key={dir} value={dir}>
              {shortCwd(dir)}
            </option>
          ))}
        </select>
        <select
          data-testid="filter-state"
          title="Filter by state (running or idle)"
          value={state}
          onChange={(e) => setState((e.target as HTMLSelectElement).value)}
        >
          <option value="">State</option>
          <option value="running">Running</option>
          <option value="idle">Idle</option>
        </select>
        <select
          data-testid="filter-model"
          title="Filter by model"
          value={model}
          onChange={(e) => setModel((e.target as HTMLSelectElement).value)}
        >
          <option value="">Model</option>
          {models.map((m) => (
            <option key={m} value={m}>
              {m}
            </option>
          ))}
        </select>
      </div>
      <div class="session-list" data-testid="session-list">
        {!app.sessionsLoaded && <div class="muted pad">Loading…</div>}
        {listed}
        {app.sessionsLoaded && !all.length && <div class="muted pad">No sessions yet.</div>}
        {filtering && all.length > 0 && !items.length && (
          <div class="muted pad" data-testid="no-match">
            No sessions match.{" "}
            <button
              class="link"
              data-testid="clear-filters"
              onClick={() => {
                setQuery("");
                setCwd("");
                setState("");
                setModel("");
              }}
            >
              Clear filters
            </button>
          </div>
        )}
      </div>
    </aside>
  );
}

function SessionItem({ info, depth, dim }: { info: SessionInfo; depth: number; dim: boolean }) {
  const session = app.current?.id === info.id ? app.current : undefined;
  // The open session's item follows its live events (title, status) without a poll.
  useEmitter(session);
  const selected = Boolean(session);
  const status = session?.info ? session.status : info.status;
  const shownTitle = title(session && !info.firstMessage ? { ...info, firstMessage: session.firstUserText() } : info);
  const fork = info.parentSessionId && !info.taskName ? app.sessions.get(info.parentSessionId) : undefined;
  const forkOf = info.parentSessionId && !info.taskName ? (fork ? title(fork) : info.parentSessionId.slice(0, 8)) : undefined;
  // Questions arrive live for the session this tab is attached to (the open one); the list's
  // own answer (polled) counts those of the others.
  const live = app.uiRequests.filter((r) => r.sessionId === info.id).length;
  const questions = selected ? live : Math.max(live, info.questions ?? 0);
  return (
    <a
      class={`session-item${selected ? " selected" : ""}${dim ? " dim" : ""}`}
      data-testid="session-item"
      data-session-id={info.id}
      data-status={status}
      href={`#/s/${encodeURIComponent(info.id)}`}
      style={{ paddingLeft: `${10 + depth * 14}px` }}
    >
      <div class="session-title">
        <span class={`dot ${status}`} title={status} />
        {depth > 0 && <span class="tag">task</span>}
        {forkOf && <span class="tag">fork</span>}
        <span class="ellipsis">{shownTitle}</span>
        {questions > 0 && (
          <span class="tag question" data-testid="session-questions" title={`${plural(questions, "question")} waiting for an answer`}>
            ? {questions}
          </span>
        )}
      </div>
      {forkOf && (
        <div class="session-meta">
          <span class="ellipsis" title={`Forked from ${forkOf}`}>
            fork of {forkOf}
          </span>
        </div>
      )}
      <div class="session-meta">
        <span class="ellipsis" title={info.cwd}>
          {shortCwd(info.cwd)}
        </span>
        <span>{info.model?.id ?? ""}</span>
        <span>{ago(info.updatedAt)}</span>
      </div>
    </a>
  );
}
