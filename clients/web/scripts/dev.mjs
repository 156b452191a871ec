// Development only: serves dist/ at http://127.0.0.1:8765/s/dev/ the way pid serves a login's
// page (index.html at /s/LOGIN/, the assets under its assets/, the same CSP; / redirects there)
// and proxies the WebSocket upgrade (the page's relative `rpc`) to a running daemon, adding its
// token as `Authorization: Bearer` on the way (the page itself never sees a token, as with
// pid's cookie). Rebuild with `npm run build` and reload.
//
//   PI_HOME=... node scripts/dev.mjs [PORT]      (runtime directory as the daemon resolves it)

import { readFileSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const port = Number(process.argv[2] ?? 8765);
const runtime =
  process.env.PI_RUNTIME_DIR ??
  (process.env.PI_HOME
    ? join(process.env.PI_HOME, "run")
    : process.env.XDG_RUNTIME_DIR
      ? join(process.env.XDG_RUNTIME_DIR, "pi-daemon")
      : join(tmpdir(), `pi-daemon-${process.getuid?.() ?? 0}`));
const daemon = () => ({
  port: Number(readFileSync(join(runtime, "ws.port"), "utf8").trim()),
  token: readFileSync(join(runtime, "ws.token"), "utf8").trim(),
});

const files = {
  "/": ["index.html", "text/html; charset=utf-8"],
  "/index.html": ["index.html", "text/html; charset=utf-8"],
  "/assets/app.js": ["app.js", "text/javascript; charset=utf-8"],
  "/assets/app.css": ["app.css", "text/css; charset=utf-8"],
};

const server = http.createServer((req, res) => {
  const url = new URL(req.url ?? "/", "http://x");
  if (url.pathname === "/") {
    res.writeHead(302, { location: "/s/dev/" });
    res.end();
    return;
  }
  if (url.pathname === "/s/dev/logout") {
    res.writeHead(200, { "content-type": "text/plain" });
    res.end("Logged out (nothing to do in development).");
    return;
  }
  // The page lives under /s/LOGIN/, as pid serves it.
  const path = url.pathname.replace(/^\/s\/dev(?=\/)/, "");
  const file = files[path];
  if (!file) {
    res.writeHead(404, { "content-type": "text/plain" });
    res.end("not found");
    return;
  }
  const host = req.headers.host ?? `127.0.0.1:${port}`;
  res.writeHead(200, {
    "content-type": file[1],
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
    "content-security-policy": `default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self' ws://${host}; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
  });
  res.end(readFileSync(join(root, "dist", file[0])));
});

server.on("upgrade", (req, socket, head) => {
  let target;
  try {
    target = daemon();
  } catch (error) {
    socket.end(`HTTP/1.1 502 Bad Gateway\r\n\r\nno daemon: ${error.message}`);
    return;
  }
  const upstream = net.connect(target.port, "127.0.0.1", () => {
    const lines = [`GET / HTTP/1.1`, `Host: 127.0.0.1:${target.port}`, `Authorization: Bearer ${target.token}`];
    for (let i = 0; i < req.rawHeaders.length; i += 2) {
      const name = req.rawHeaders[i];
      if (/^(host|origin|authorization|cookie)$/i.test(name)) continue;
      lines.push(`${name}: ${req.rawHeaders[i + 1]}`);
    }
    upstream.write(`${lines.join("\r\n")}\r\n\r\n`);
    if (head?.length) upstream.write(head);
    upstream.pipe(socket);
    socket.pipe(upstream);
  });
  const end = () => {
    upstream.destroy();
    socket.destroy();
  };
  upstream.on("error", end);
  socket.on("error", end);
  upstream.on("close", end);
  socket.on("close", end);
});

server.listen(port, "127.0.0.1", () => {
  console.log(`http://127.0.0.1:${port}/s/dev/ → daemon in ${runtime}`);
});
