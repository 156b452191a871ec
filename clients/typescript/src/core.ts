// The browser-safe part of the typed client: one connection to the daemon over a WebSocket,
// typed calls, notifications, session events with resume. No Node modules here (client.ts adds
// reading the port and token files for Node).

import type {
  InitializeResponse,
  MethodMap,
  NotificationMap,
  SessionEventParams,
  UiAnswer,
  UiRequestParams,
} from "./generated/protocol.js";

/** The protocol version this client speaks. */
export const PROTOCOL_VERSION = 1;

/** A minimal WebSocket: the browser's, Node 22's global, or the `ws` package's. */
export interface WebSocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(): void;
  addEventListener(type: "open" | "close" | "error", listener: (event: unknown) => void): void;
  addEventListener(type: "message", listener: (event: { data: unknown }) => void): void;
}

export type WebSocketConstructor = new (url: string) => WebSocketLike;

export interface OpenOptions {
  /** `ws://127.0.0.1:PORT/` (in a page served by `pid`: `ws://${location.host}/`). */
  url: string;
  /** The token, sent as `?token=`; omit it where the connection is authenticated otherwise
   * (a browser page served by `pid` sends its cookie). */
  token?: string;
  /** Sent with `initialize`. */
  clientInfo?: { name: string; version: string };
  /** Notification methods this connection does not want (`initialize`'s
   * `capabilities.optOutNotifications`). */
  optOutNotifications?: string[];
  /** The WebSocket implementation; default: the global `WebSocket`. */
  WebSocket?: WebSocketConstructor;
}

/** A JSON-RPC error from the daemon: `code`, `message`, and `data.kind` when it has one. */
export class DaemonError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: { kind?: string; [key: string]: unknown },
  ) {
    super(message);
    this.name = "DaemonError";
  }
}

/** Opens a WebSocket to `url` (with `?token=` when a token is given) and waits until it is
 * open. */
export async function openSocket(
  url: string,
  token?: string,
  WebSocket?: WebSocketConstructor,
): Promise<WebSocketLike> {
  const Socket = WebSocket ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
  if (!Socket) {
    throw new Error(
      "no WebSocket implementation: pass `WebSocket` (the `ws` package) or use Node 22+",
    );
  }
  let target = url;
  if (token !== undefined) {
    target += `${url.includes("?") ? "&" : "?"}token=${encodeURIComponent(token)}`;
  }
  const socket = new Socket(target);
  await new Promise<void>((resolve, reject) => {
    socket.addEventListener("open", () => resolve());
    socket.addEventListener("error", () =>
      reject(new Error(`cannot connect to the daemon at ${url}`)),
    );
    socket.addEventListener("close", () =>
      reject(new Error(`the daemon at ${url} closed the connection`)),
    );
  });
  return socket;
}

type Pending = { resolve: (value: unknown) => void; reject: (error: Error) => void };
type Listener = (params: unknown) => void;

/** One connection to the daemon. */
export class DaemonClient {
  private nextId = 0;
  private readonly pending = new Map<number, Pending>();
  private readonly listeners = new Map<string, Set<Listener>>();
  /** The last event `seq` delivered per session (for `attach` after a reconnect). */
  readonly lastSeq = new Map<string, number>();
  // Sessions being attached: their live events, held until the replay is delivered.
  private readonly holding = new Map<string, SessionEventParams[]>();
  /** Resolves when the connection has closed. */
  readonly closed: Promise<void>;
  /** `initialize`'s result (set once the handshake is done). */
  initializeResult?: InitializeResponse;

  protected constructor(private readonly socket: WebSocketLike) {
    this.closed = new Promise((resolve) => {
      socket.addEventListener("close", () => {
        for (const { reject } of this.pending.values()) {
          reject(new Error("the connection to the daemon closed"));
        }
        this.pending.clear();
        resolve();
      });
    });
    socket.addEventListener("message", (event) => this.receive(String(event.data)));
  }

  /** Connects to `url` and sends `initialize`. Works in browsers (no token: the page's
   * cookie authenticates) and in Node (pass `token`). */
  static async open(options: OpenOptions): Promise<DaemonClient> {
    const socket = await openSocket(options.url, options.token, options.WebSocket);
    const client = new DaemonClient(socket);
    await client.handshake(options.clientInfo, options.optOutNotifications);
    return client;
  }

  /** The id the daemon gave this connection (`initialize`'s `connectionId`). */
  get connectionId(): string | undefined {
    return this.initializeResult?.connectionId;
  }

  /** Sends `initialize` (once, right after the socket opened). */
  protected async handshake(
    clientInfo: { name: string; version: string } = { name: "pi-daemon-client", version: "0.1.0" },
    optOutNotifications?: string[],
  ): Promise<InitializeResponse> {
    const capabilities = optOutNotifications ? { optOutNotifications } : {};
    try {
      this.initializeResult = await this.call("initialize", {
        protocolVersion: PROTOCOL_VERSION,
        clientInfo,
        capabilities,
      } as MethodMap["initialize"]["params"]);
    } catch (error) {
      this.socket.close();
      throw error;
    }
    return this.initializeResult;
  }

  /** Calls `method`; rejects with a [`DaemonError`] when the daemon answers with an error. */
  call<M extends keyof MethodMap>(
    method: M,
    params: MethodMap[M]["params"],
  ): Promise<MethodMap[M]["result"]> {
    const id = ++this.nextId;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      try {
        this.socket.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
      } catch (error) {
        this.pending.delete(id);
        reject(error instanceof Error ? error : new Error(String(error)));
      }
    });
  }

  /** Listens to notifications of `method`; returns the function that stops listening. */
  on<N extends keyof NotificationMap>(
    method: N,
    listener: (params: NotificationMap[N]["params"]) => void,
  ): () => void {
    const set = this.listeners.get(method) ?? new Set<Listener>();
    set.add(listener as Listener);
    this.listeners.set(method, set);
    return () => set.delete(listener as Listener);
  }

  /** Attaches to a session. With `afterSeq` (default: `lastSeq` of the session, set by this
   * connection or copied from an earlier one) the events after it that the daemon replays are
   * delivered to the `session/event` listeners first, in order, then the live ones: a
   * reconnect misses and repeats nothing (when the response says `gapless`; otherwise take the
   * streaming state from its `snapshot`). */
  async attach(sessionId: string, afterSeq?: number) {
    const after = afterSeq ?? this.lastSeq.get(sessionId);
    // Live events that arrive before the response wait behind the replay.
    this.holding.set(sessionId, []);
    try {
      const response = await this.call("session/attach", {
        sessionId,
        afterSeq: after ?? null,
      } as MethodMap["session/attach"]["params"]);
      const held = this.holding.get(sessionId) ?? [];
      this.holding.delete(sessionId);
      for (const event of [...response.replay, ...held]) {
        this.deliver(event);
      }
      return response;
    } finally {
      this.holding.delete(sessionId);
    }
  }

  /** Answers a question (`ui/request`); the first answer of any client wins. */
  respond(request: Pick<UiRequestParams, "sessionId" | "requestId">, answer: UiAnswer) {
    return this.call("ui/respond", {
      sessionId: request.sessionId,
      requestId: request.requestId,
      answer,
    });
  }

  /** Closes the connection. */
  close(): Promise<void> {
    this.socket.close();
    return this.closed;
  }

  /** Hands one event to the listeners unless it was delivered already (by `seq`). */
  private deliver(event: SessionEventParams) {
    const last = this.lastSeq.get(event.sessionId);
    if (last !== undefined && event.seq <= last) return;
    this.lastSeq.set(event.sessionId, event.seq);
    for (const listener of this.listeners.get("session/event") ?? []) {
      listener(event);
    }
  }

  private receive(text: string) {
    let message: {
      id?: number | null;
      method?: string;
      params?: unknown;
      result?: unknown;
      error?: { code: number; message: string; data?: DaemonError["data"] };
    };
    try {
      message = JSON.parse(text);
    } catch {
      return;
    }
    if (message.method) {
      if (message.method === "session/event") {
        const event = message.params as SessionEventParams;
        const held = this.holding.get(event.sessionId);
        if (held) {
          held.push(event);
        } else {
          this.deliver(event);
        }
        return;
      }
      for (const listener of this.listeners.get(message.method) ?? []) {
        listener(message.params);
      }
      return;
    }
    if (typeof message.id !== "number") return;
    const pending = this.pending.get(message.id);
    if (!pending) return;
    this.pending.delete(message.id);
    if (message.error) {
      pending.reject(new DaemonError(message.error.code, message.error.message, message.error.data));
    } else {
      pending.resolve(message.result);
    }
  }
}
