// The page: header (nav, connection), the session list and the open session, or the status
// and usage pages; questions as a modal; notices.

import { render } from "preact";
import { app } from "./app";
import { QuestionsBadge, UiRequestDialog } from "./dialogs";
import { inlineCode } from "./format";
import { StatusPage, UsagePage } from "./pages";
import { SessionView } from "./session-view";
import { SessionList } from "./sessions";
import { useEmitter } from "./store";

const STATE_LABEL = {
  connected: "connected",
  connecting: "connecting…",
  reconnecting: "reconnecting…",
  loggedOut: "logged out",
};

function Connection() {
  const label = STATE_LABEL[app.state];
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

/** Under the top bar while the connection is down. */
function ConnectionBanner() {
  if (app.state === "connected" || app.state === "loggedOut") return null;
  if (app.state === "connecting" && !app.lastError) return null;
  return (
    <div class="banner" data-testid="connection-banner" role="status">
      {app.connectedOnce ? "Connection lost — reconnecting…" : "Cannot reach the daemon — retrying…"}
      {app.lastError && <span class="muted small"> ({app.lastError})</span>}
    </div>
  );
}

/** The whole page once the login is refused. */
function LoggedOut() {
  return (
    <div class="logged-out" data-testid="logged-out">
      <h1>Logged out</h1>
      <p>{inlineCode("This browser is logged out (the login expired or was revoked). Run `pictl web` for a new link.")}</p>
      <p class="muted small">
        <Connection />
      </p>
    </div>
  );
}

function Root() {
  useEmitter(app);
  const route = app.route;
  if (app.state === "loggedOut") return <LoggedOut />;
  return (
    <div class={`app${app.state === "connected" ? "" : " offline"}`}>
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
        <QuestionsBadge />
        <Connection />
        <a href="logout" class="small" data-testid="logout" title="End this browser's login (here and wherever the link was used)">
          Log out
        </a>
      </header>
      <ConnectionBanner />
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
      <div class="notices" aria-live="polite">
        {app.notices.map((notice) => (
          <div key={notice.id} class={`notice ${notice.level}`} data-testid="notice">
            <span>{notice.text}</span>
            <button class="link close" title="Close" aria-label="Close" onClick={() => app.dismissNotice(notice.id)}>
              ×
            </button>
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
