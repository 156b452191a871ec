// The page: header (nav, connection), the session list and the open session, or the status
// and usage pages; questions as a modal; notices.

import { render } from "preact";
import { app } from "./app";
import { UiRequestDialog } from "./dialogs";
import { StatusPage, UsagePage } from "./pages";
import { SessionView } from "./session-view";
import { SessionList } from "./sessions";
import { useEmitter } from "./store";

function Connection() {
  const label =
    app.state === "connected" ? "connected" : app.state === "connecting" ? "connecting…" : "reconnecting…";
  return (
    <span
      class={`connection ${app.state}`}
      data-testid="connection"
      data-state={app.state}
      title={app.lastError ?? (app.daemonVersion ? `pid ${app.daemonVersion}` : "")}
    >
      <span class={`dot ${app.state}`} /> {label}
    </span>
  );
}

function Root() {
  useEmitter(app);
  const route = app.route;
  return (
    <div class="app">
      <header class="topbar">
        <span class="brand">pi</span>
        <nav>
          <a href="#/" data-testid="nav-sessions" class={route.page === "sessions" ? "active" : ""}>
            Sessions
          </a>
          <a href="#/status" data-testid="nav-status" class={route.page === "status" ? "active" : ""}>
            Status
          </a>
          <a href="#/usage" data-testid="nav-usage" class={route.page === "usage" ? "active" : ""}>
            Usage
          </a>
        </nav>
        <span class="spacer" />
        <Connection />
      </header>
      <main class="content">
        {route.page === "sessions" && (
          <div class="sessions-layout">
            <SessionList />
            {app.current ? (
              <SessionView session={app.current} />
            ) : (
              <div class="empty muted">Pick a session, or start a new one.</div>
            )}
          </div>
        )}
        {route.page === "status" && <StatusPage />}
        {route.page === "usage" && <UsagePage />}
      </main>
      <UiRequestDialog />
      <div class="notices">
        {app.notices.map((notice) => (
          <div key={notice.id} class={`notice ${notice.level}`}>
            {notice.text}
          </div>
        ))}
      </div>
    </div>
  );
}

// Read-only diagnostics for tests: the last seq applied and the number of events applied
// to a session (and the duplicates refused), by the open session's view.
Object.defineProperty(window, "__piWeb", {
  value: Object.freeze({
    lastSeq: (sessionId: string) => (app.current?.id === sessionId ? app.current.lastApplied : undefined),
    appliedEvents: (sessionId: string) => (app.current?.id === sessionId ? app.current.applied : 0),
    duplicateEvents: (sessionId: string) => (app.current?.id === sessionId ? app.current.duplicates : 0),
    connectionId: () => app.connectionId,
    state: () => app.state,
  }),
});

app.start();
render(<Root />, document.getElementById("app")!);
