// What the ACP drivers share: the official ACP TypeScript SDK (@agentclientprotocol/sdk, from
// npm, installed by tests/install-peers), `pictl acp` started as an editor starts its agent,
// and polling for a condition to a deadline.
//
// Environment: PICTL (the pictl binary), PI_PEERS_DIR (where the npm peers are), PI_HOME (the
// daemon's, passed on to pictl).

import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";
import path from "node:path";

const sdkPath = path.join(
  process.env.PI_PEERS_DIR,
  "node_modules/@agentclientprotocol/sdk/dist/v1/stable/acp.js",
);
export const acp = await import(pathToFileURL(sdkPath).href);

/** `pictl acp` as a child, and the SDK's stream over its stdio. */
export function start() {
  const child = spawn(process.env.PICTL, ["acp"], {
    stdio: ["pipe", "pipe", "inherit"],
    env: process.env,
  });
  const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  return { child, stream };
}

/** Resolves with `predicate()`'s first truthy value; rejects after `timeoutMs`. */
export function waitFor(predicate, what, timeoutMs = 20000) {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const tick = () => {
      const found = predicate();
      if (found) return resolve(found);
      if (Date.now() - started > timeoutMs) return reject(new Error(`timed out waiting for ${what}`));
      setTimeout(tick, 10);
    };
    tick();
  });
}
