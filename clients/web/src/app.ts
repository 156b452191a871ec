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

export type ConnState = "connecting" | "connected" | "reconnecting";
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
  /** Text for the composer of a session (a message navigated away from, or forked). */
  composerPrefill?: { sessionId: string; text: string };
  notices: Notice[] = [];
  /** Bumped on `mcp/changed` / `lsp/changed`. */
  readonly statusChanged = new Emitter();
  private backoff = 250;
  private listTimer?: ReturnType<typeof setTimeout>;
  private connectedOnce = false;

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
          url: `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/`,
          clientInfo: { name: "web", version: VERSION },
        });
      } catch (error) {
        this.lastError = message(error);
      }
      if (client) {
        this.backoff = 250;
        this.connectedOnce = true;
        this.lastError = undefined;
        await this.connected(client);
        await client.closed;
        this.client = undefined;
        if (this.current) this.current.attached = false;
        this.clients_closed();
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
    void this.refreshSessions();
    void this.loadModels();
    if (this.current) await this.attachCurrent();
  }

  notify(level: Notice["level"], text: string) {
    const notice = { id: ++noticeIds, level, text };
    this.notices = [...this.notices, notice].slice(-5);
    this.changed();
    setTimeout(() => {
      this.notices = this.notices.filter((n) => n !== notice);
      this.changed();
    }, level === "error" ? 10000 : 5000);
  }

  dropRequest(requestId: string) {
    const before = this.uiRequests.length;
    this.uiRequests = this.uiRequests.filter((r) => r.requestId !== requestId);
    if (this.uiRequests.length !== before) this.changed();
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
    this.sessions.set(info.id, info);
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
        if (current && all.has(current.id)) all.set(current.id, current);
        this.sessions = all;
        this.sessionsLoaded = true;
        this.changed();
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

function sleep(ms: number) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export const app = new App();
