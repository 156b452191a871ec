// The connection (with reconnect and backoff), the session list, the open session, questions,
// routing. Components read this object and re-render when it (or the session) changes.

import { DaemonClient } from "../../typescript/src/core";
import type {
  ModelInfo,
  SessionInfo,
  UiRequestParams,
} from "../../typescript/src/generated/protocol";
import { SessionController, message } from "./session";
import { Emitter } from "./store";

export const VERSION = "0.1.0";

/** `loggedOut`: the page answered 401 (the login expired or was revoked); no more retries. */
export type ConnState = "connecting" | "connected" | "reconnecting" | "loggedOut";
export type Route = { page: "sessions"; sessionId?: string } | { page: "status" } | { page: "usage" };

export interface Notice {
  id: number;
  level: "info" | "warning" | "error";
  text: string;
}

let noticeIds = 0;

export class App extends Emitter {
  client?: DaemonClient;
  state: ConnState = "connecting";
  connectionId?: string;
  daemonVersion?: string;
  lastError?: string;
  route: Route = parseRoute();
  sessions = new Map<string, SessionInfo>();
  sessionsLoaded = false;
  models: ModelInfo[] = [];
  current?: SessionController;
  uiRequests: UiRequestParams[] = [];
  /** Questions hidden in this tab ("Later", Escape): still pending, reopened from the badge. */
  hiddenRequests = new Set<string>();
  /** Text for the composer of a session (a message navigated away from, or forked). */
  composerPrefill?: { sessionId: string; text: string };
  notices: Notice[] = [];
  /** Bumped on `mcp/changed` / `lsp/changed`. */
  readonly statusChanged = new Emitter();
  private backoff = 250;
  private listTimer?: ReturnType<typeof setTimeout>;
  /** Whether this tab was connected once (a failure since is a lost connection). */
  connectedOnce = false;
  /** Connection attempts failed in a row. */
  private failures = 0;

  start() {
    window.addEventListener("hashchange", () => this.navigate(parseRoute()));
    void this.connectLoop();
    this.navigate(this.route, true);
  }

  private async connectLoop() {
    for (;;) {
      this.state = this.connectedOnce ? "reconnecting" : "connecting";
      this.changed();
      let client: DaemonClient | undefined;
      try {
        client = await DaemonClient.open({
          // The page lives at /s/LOGIN/ (the cookie's path); its WebSocket is /s/LOGIN/rpc.
          url: `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}${location.pathname.replace(/[^/]*$/, "")}rpc`,
          clientInfo: { name: "web", version: VERSION },
        });
      } catch (error) {
        this.lastError = message(error);
        this.failures++;
      }
      if (client) {
        this.backoff = 250;
        this.failures = 0;
        this.connectedOnce = true;
        this.lastError = undefined;
        await this.connected(client);
        await client.closed;
        this.client = undefined;
        if (this.current) this.current.attached = false;
        this.clients_closed();
      } else if (this.failures >= 2 && (await loggedOut())) {
        // The WebSocket's refusal says nothing about why; the page does: 401 without a
        // valid cookie. Retrying cannot help.
        this.state = "loggedOut";
        clearTimeout(this.listTimer);
        this.changed();
        return;
      }
      this.state = "reconnecting";
      this.changed();
      await sleep(this.backoff);
      this.backoff = Math.min(this.backoff * 2, 5000);
    }
  }

  private clients_closed() {
    // Questions belong to the connection's attachments; they are sent again on attach.
    this.uiRequests = [];
    this.changed();
  }

  private async connected(client: DaemonClient) {
    this.client = client;
    this.connectionId = client.connectionId;
    this.daemonVersion = client.initializeResult?.daemonVersion;
    client.on("session/event", (event) => this.current?.receive(event));
    client.on("session/presence", (presence) => {
      if (this.current && presence.sessionId === this.current.id) {
        this.current.clients = presence.clients;
        this.current.changed();
      }
    });
    client.on("ui/request", (request) => {
      if (this.uiRequests.some((r) => r.requestId === request.requestId)) return;
      this.uiRequests = [...this.uiRequests, request];
      this.changed();
    });
    client.on("ui/resolved", (resolved) => this.dropRequest(resolved.requestId));
    client.on("mcp/changed", () => this.statusChanged.changed());
    client.on("lsp/changed", () => this.statusChanged.changed());
    client.on("extension/ui", (ui) => {
      if (ui.kind === "notify") this.notify(ui.level, ui.message);
    });
    this.state = "connected";
    this.changed();
    // The list first: the models (hundreds) are read once it is shown.
    void this.refreshSessions().then(() => this.loadModels());
    if (this.current) await this.attachCurrent();
  }

  notify(level: Notice["level"], text: string) {
    const notice = { id: ++noticeIds, level, text };
    this.notices = [...this.notices, notice].slice(-5);
    this.changed();
    setTimeout(() => this.dismissNotice(notice.id), level === "error" ? 10000 : 5000);
  }

  dismissNotice(id: number) {
    const before = this.notices.length;
    this.notices = this.notices.filter((n) => n.id !== id);
    if (this.notices.length !== before) this.changed();
  }

  dropRequest(requestId: string) {
    const before = this.uiRequests.length;
    this.uiRequests = this.uiRequests.filter((r) => r.requestId !== requestId);
    this.hiddenRequests.delete(requestId);
    if (this.uiRequests.length !== before) this.changed();
  }

  /** The question shown as a dialog: the first one not hidden in this tab. */
  shownRequest(): UiRequestParams | undefined {
    return this.uiRequests.find((r) => !this.hiddenRequests.has(r.requestId));
  }

  /** Hides the pending questions in this tab only; they stay pending for everyone (nothing is
   * answered). Questions that arrive later show again. */
  hideRequests() {
    for (const request of this.uiRequests) this.hiddenRequests.add(request.requestId);
    this.changed();
  }

  /** Shows the hidden questions again (of one session, or all). */
  showRequests(sessionId?: string) {
    for (const request of this.uiRequests) {
      if (!sessionId || request.sessionId === sessionId) this.hiddenRequests.delete(request.requestId);
    }
    this.changed();
  }

  async call<T>(what: () => Promise<T>): Promise<T | undefined> {
    try {
      return await what();
    } catch (error) {
      this.notify("error", message(error));
      return undefined;
    }
  }

  // Routing ------------------------------------------------------------------------------

  navigate(route: Route, initial = false) {
    this.route = route;
    const sessionId = route.page === "sessions" ? route.sessionId : undefined;
    if (sessionId !== this.current?.id || initial) {
      if (!(initial && !sessionId)) this.openSession(sessionId);
    }
    this.changed();
  }

  go(hash: string) {
    if (location.hash !== hash) location.hash = hash;
    else this.navigate(parseRoute());
  }

  private openSession(sessionId: string | undefined) {
    const previous = this.current;
    if (previous && previous.id === sessionId) return;
    if (previous) {
      previous.dispose();
      if (this.client && previous.attached) {
        void this.client.call("session/detach", { sessionId: previous.id }).catch(() => {});
      }
      this.uiRequests = this.uiRequests.filter((r) => r.sessionId !== previous.id);
    }
    this.current = sessionId
      ? new SessionController(sessionId, (info) => this.updateInfo(info))
      : undefined;
    if (this.current && this.client) void this.attachCurrent();
  }

  private async attachCurrent() {
    const session = this.current;
    const client = this.client;
    if (!session || !client) return;
    session.client = client;
    try {
      await session.attach(client);
    } catch (error) {
      if (session === this.current && client === this.client) {
        session.loadError = message(error);
        session.loading = false;
        session.changed();
      }
    }
  }

  // Sessions -----------------------------------------------------------------------------

  updateInfo(info: SessionInfo) {
    this.sessions.set(info.id, withFirstMessage(info, this.sessions.get(info.id)));
    this.changed();
  }

  async refreshSessions() {
    clearTimeout(this.listTimer);
    const client = this.client;
    if (client) {
      try {
        const all = new Map<string, SessionInfo>();
        let cursor: string | undefined;
        let pages = 0;
        do {
          const page = await client.call("session/list", { limit: 500, cursor: cursor ?? null });
          for (const info of page.sessions) all.set(info.id, info as SessionInfo);
          cursor = page.nextCursor ?? undefined;
        } while (cursor && ++pages < 10);
        // The open session's own view is fresher.
        const current = this.current?.info;
        const polled = current && all.get(current.id);
        // (Its questions are counted by the list only.)
        if (current && polled) all.set(current.id, { ...withFirstMessage(current, polled), questions: polled.questions });
        // Nothing new (the usual answer to a poll): no re-render of everything that shows
        // sessions, which would land in a frame of whatever the user is doing.
        if (!this.sessionsLoaded || !sameSessions(this.sessions, all)) {
          this.sessions = all;
          this.sessionsLoaded = true;
          this.changed();
        }
      } catch {
        // Retried below.
      }
    }
    this.listTimer = setTimeout(() => void this.refreshSessions(), 4000);
  }

  private async loadModels() {
    const client = this.client;
    if (!client) return;
    try {
      const { models } = await client.call("model/list", {});
      this.models = models;
      this.changed();
    } catch {
      // The picker stays empty.
    }
  }
}

function parseRoute(): Route {
  const hash = location.hash.replace(/^#\/?/, "");
  if (hash === "status") return { page: "status" };
  if (hash === "usage") return { page: "usage" };
  const match = /^s\/([^/?#]+)/.exec(hash);
  if (match) return { page: "sessions", sessionId: decodeURIComponent(match[1]!) };
  return { page: "sessions" };
}

/** `info`, keeping the first message an older view of the session knew (not every update
 * carries it). */
function withFirstMessage(info: SessionInfo, older?: SessionInfo): SessionInfo {
  return info.firstMessage || !older?.firstMessage ? info : { ...info, firstMessage: older.firstMessage };
}

/** Whether the page itself is refused: the login cookie expired or was revoked. */
async function loggedOut(): Promise<boolean> {
  try {
    const response = await fetch(location.pathname, { cache: "no-store", credentials: "same-origin" });
    return response.status === 401;
  } catch {
    // The daemon is down: not a verdict on the login.
    return false;
  }
}

function sleep(ms: number) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export const app = new App();

/** Whether two session lists hold the same sessions, in the same order, alike field for field. */
function sameSessions(a: Map<string, SessionInfo>, b: Map<string, SessionInfo>): boolean {
  if (a.size !== b.size) return false;
  const left = [...a.values()];
  const right = [...b.values()];
  return left.every((info, i) => JSON.stringify(info) === JSON.stringify(right[i]));
}
