// A typed client for the pi daemon's JSON-RPC protocol over its loopback WebSocket (Node:
// reads the port and token from the daemon's runtime directory). The connection itself is
// core.ts, which browsers use directly.

import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import {
  DaemonClient as CoreDaemonClient,
  openSocket,
  type WebSocketConstructor,
  type WebSocketLike,
} from "./core.js";

export type * from "./generated/protocol.js";
export {
  DaemonError,
  PROTOCOL_VERSION,
  openSocket,
  type OpenOptions,
  type WebSocketConstructor,
  type WebSocketLike,
} from "./core.js";

export interface ConnectOptions {
  /** `ws://127.0.0.1:PORT/`; default: from `ws.port` in the daemon's runtime directory. */
  url?: string;
  /** The token; default: `ws.token` in the runtime directory. */
  token?: string;
  /** The daemon's runtime directory; default: `$PI_HOME/run`, `$XDG_RUNTIME_DIR/pi-daemon`,
   * else `<tmp>/pi-daemon-<uid>` (as the daemon resolves it). */
  runtimeDir?: string;
  /** Sent with `initialize`. */
  clientInfo?: { name: string; version: string };
  /** The WebSocket implementation; default: the global `WebSocket`. */
  WebSocket?: WebSocketConstructor;
}

/** The daemon's runtime directory, as `pid` resolves it. */
export function runtimeDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.PI_HOME) return join(env.PI_HOME, "run");
  if (env.XDG_RUNTIME_DIR) return join(env.XDG_RUNTIME_DIR, "pi-daemon");
  return join(tmpdir(), `pi-daemon-${process.getuid?.() ?? 0}`);
}

/** One connection to the daemon. */
export class DaemonClient extends CoreDaemonClient {
  protected constructor(socket: WebSocketLike) {
    super(socket);
  }

  /** Connects and sends `initialize`; the port and token default to the files in the
   * daemon's runtime directory. */
  static async connect(options: ConnectOptions = {}): Promise<DaemonClient> {
    const dir = options.runtimeDir ?? runtimeDir();
    const url =
      options.url ?? `ws://127.0.0.1:${readFileSync(join(dir, "ws.port"), "utf8").trim()}/`;
    const token = options.token ?? readFileSync(join(dir, "ws.token"), "utf8").trim();
    const socket = await openSocket(url, token, options.WebSocket);
    const client = new DaemonClient(socket);
    await client.handshake(options.clientInfo);
    return client;
  }
}
