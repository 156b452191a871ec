// A Playwright servant for the e2e tests (tests/e2e/tests/suite/web.rs): it runs Debian's
// Chromium headless through playwright-core and does what the test asks, one JSON request per
// line on stdin, one JSON answer per line on stdout ({id, value} or {id, error}). Everything
// each page logs, every URL it requests and every WebSocket frame it exchanges is kept, so the
// test can check that no secret went where it must not.
//
// Usage: node tests/web/browser.mjs   (PI_PEERS_DIR: where tests/install-peers put
// playwright-core; PI_CHROMIUM: the browser, default /usr/bin/chromium)

import { createRequire } from "node:module";
import { homedir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";

const peers = process.env.PI_PEERS_DIR || join(homedir(), ".cache", "pi-daemon-peers");
const require = createRequire(join(peers, "node_modules", "noop.js"));
const { chromium } = require("playwright-core");

const browser = await chromium.launch({
  executablePath: process.env.PI_CHROMIUM || "/usr/bin/chromium",
  headless: true,
  // `evil.test` resolves to loopback: a page reaching the daemon through DNS rebinding.
  args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--host-resolver-rules=MAP evil.test 127.0.0.1"],
});

const contexts = [];
const pages = [];
const logs = [];
const requests = [];
const frames = [];

async function newPage(contextIndex) {
  let context = contexts[contextIndex];
  if (!context) {
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    contexts[contextIndex] = context;
    // `PI_WEB_DIST`: the UI's scripts and styles from this directory (`npm run build DIR`)
    // instead of those built into pid, with pid's own headers: measuring a change to the UI
    // without rebuilding the daemon. The tests never set it.
    if (process.env.PI_WEB_DIST) {
      const { readFileSync } = await import("node:fs");
      await context.route(/\/(app\.js|render\.js|app\.css)$/, async (route) => {
        const response = await route.fetch();
        const headers = { ...response.headers() };
        for (const name of ["content-encoding", "content-length", "etag"]) delete headers[name];
        const name = new URL(route.request().url()).pathname.split("/").pop();
        await route.fulfill({ response, headers, body: readFileSync(join(process.env.PI_WEB_DIST, name)) });
      });
    }
  }
  const page = await context.newPage();
  const index = pages.length;
  pages.push(page);
  page.on("console", (message) => logs.push({ page: index, type: message.type(), text: message.text() }));
  page.on("pageerror", (error) => logs.push({ page: index, type: "pageerror", text: String(error) }));
  page.on("request", (request) => requests.push({ page: index, url: request.url() }));
  page.on("websocket", (socket) => {
    requests.push({ page: index, url: socket.url() });
    socket.on("framesent", (frame) => frames.push({ page: index, dir: "sent", data: String(frame.payload) }));
    socket.on("framereceived", (frame) => frames.push({ page: index, dir: "received", data: String(frame.payload) }));
  });
  return index;
}

// A function given as text (`(arg) => …`) made a function again, so Playwright calls it in the
// page (through DevTools, which the page's CSP does not govern) rather than returning it.
function fn(expression) {
  const text = String(expression).trim();
  const isFunction = /^(async\s+)?(function\b|\([^)]*\)\s*=>|[A-Za-z_$][\w$]*\s*=>)/.test(text);
  return isFunction ? new Function(`return (${text});`)() : text;
}

const ops = {
  // A new tab; `context` numbers the browser profile (tabs of one context share cookies).
  newPage: async ({ context = 0 }) => newPage(context),
  goto: async ({ page, url }) => {
    const response = await pages[page].goto(url, { waitUntil: "load" });
    return { status: response ? response.status() : null, url: pages[page].url() };
  },
  url: async ({ page }) => pages[page].url(),
  click: async ({ page, selector }) => {
    await pages[page].locator(selector).first().click({ timeout: 20000 });
    return null;
  },
  hover: async ({ page, selector }) => {
    await pages[page].locator(selector).first().hover({ timeout: 20000 });
    return null;
  },
  fill: async ({ page, selector, text }) => {
    await pages[page].locator(selector).first().fill(text, { timeout: 20000 });
    return null;
  },
  type: async ({ page, selector, text }) => {
    await pages[page].locator(selector).first().pressSequentially(text, { timeout: 20000 });
    return null;
  },
  press: async ({ page, selector, key }) => {
    await pages[page].locator(selector).first().press(key, { timeout: 20000 });
    return null;
  },
  select: async ({ page, selector, value }) => {
    await pages[page].locator(selector).first().selectOption(value, { timeout: 20000 });
    return null;
  },
  // Waits until `selector` matches (and, with `text`, one match contains it).
  waitFor: async ({ page, selector, text, state = "visible", timeout = 30000 }) => {
    let locator = pages[page].locator(selector);
    if (text !== undefined) locator = locator.filter({ hasText: text });
    await locator.first().waitFor({ state, timeout });
    return null;
  },
  // Waits until a function of the page returns something truthy; returns it.
  waitForFunction: async ({ page, expression, arg = null, timeout = 30000 }) => {
    const handle = await pages[page].waitForFunction(fn(expression), arg, { timeout });
    return await handle.jsonValue();
  },
  text: async ({ page, selector }) => pages[page].locator(selector).first().innerText({ timeout: 20000 }),
  texts: async ({ page, selector }) => pages[page].locator(selector).allInnerTexts(),
  attrs: async ({ page, selector, name }) =>
    pages[page].locator(selector).evaluateAll((nodes, name) => nodes.map((node) => node.getAttribute(name)), name),
  count: async ({ page, selector }) => pages[page].locator(selector).count(),
  eval: async ({ page, expression, arg = null }) => pages[page].evaluate(fn(expression), arg),
  // What the page may keep: cookies visible to scripts, both storages, IndexedDB names.
  storage: async ({ page }) =>
    pages[page].evaluate(async () => ({
      cookie: document.cookie,
      local: JSON.stringify(Object.entries(localStorage)),
      session: JSON.stringify(Object.entries(sessionStorage)),
      indexedDb: indexedDB.databases ? JSON.stringify(await indexedDB.databases()) : "",
      history: location.href,
    })),
  cookies: async ({ context = 0 }) => contexts[context].cookies(),
  close: async ({ page }) => {
    await pages[page].close();
    return null;
  },
  reload: async ({ page }) => {
    await pages[page].reload({ waitUntil: "load" });
    return null;
  },
  logs: async () => logs,
  requests: async () => requests,
  frames: async () => frames,
  screenshot: async ({ page, path }) => {
    await pages[page].screenshot({ path, fullPage: true });
    return path;
  },
  // A Chromium performance trace around scrolling the element `selector` by `step` pixels
  // each animation frame, `frames` times. Returns the intervals between frames measured in
  // the page (ms) and the duration of every task the renderer's main thread ran meanwhile
  // (the trace's RunTask events on CrRendererMain, ms): a frame misses its 16 ms when a task
  // does.
  scrollTrace: async ({ page, selector, step = -150, frames: count = 300 }) => {
    const target = pages[page];
    await browser.startTracing(target, {
      categories: [
        "devtools.timeline",
        "disabled-by-default-devtools.timeline",
        "toplevel",
        // `PI_TRACE_PROFILE`: JavaScript samples too (which slow the page a little).
        ...(process.env.PI_TRACE_PROFILE ? ["disabled-by-default-v8.cpu_profiler"] : []),
      ],
    });
    const intervals = await target.evaluate(
      async ({ selector, step, count }) => {
        const element = document.querySelector(selector);
        const times = [];
        await new Promise((resolve) => {
          let left = count;
          let last = performance.now();
          const tick = (now) => {
            times.push(now - last);
            last = now;
            element.scrollTop += step;
            if (--left > 0) requestAnimationFrame(tick);
            else resolve();
          };
          requestAnimationFrame(tick);
        });
        return times.slice(1);
      },
      { selector, step, count },
    );
    const raw = (await browser.stopTracing()).toString("utf8");
    // `PI_TRACE_DIR`: keep each raw trace there (for chrome://tracing or Perfetto).
    if (process.env.PI_TRACE_DIR) {
      const { writeFileSync } = await import("node:fs");
      writeFileSync(`${process.env.PI_TRACE_DIR}/scroll-${Date.now()}.json`, raw);
    }
    const trace = JSON.parse(raw);
    const events = trace.traceEvents || trace;
    const mains = new Set(
      events
        .filter((event) => event.ph === "M" && event.name === "thread_name" && event.args && event.args.name === "CrRendererMain")
        .map((event) => `${event.pid}:${event.tid}`),
    );
    const tasks = events
      .filter((event) => event.name === "RunTask" && event.ph === "X" && typeof event.dur === "number" && mains.has(`${event.pid}:${event.tid}`))
      .map((event) => event.dur / 1000);
    return { intervals, tasks };
  },
};

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  if (!line.trim()) continue;
  let request;
  try {
    request = JSON.parse(line);
  } catch (error) {
    process.stdout.write(JSON.stringify({ id: null, error: `not JSON: ${error}` }) + "\n");
    continue;
  }
  const op = ops[request.op];
  let answer;
  try {
    if (!op) throw new Error(`no op ${request.op}`);
    const value = await op(request);
    answer = { id: request.id, value: value === undefined ? null : value };
  } catch (error) {
    answer = { id: request.id, error: String(error && error.stack ? error.stack : error) };
  }
  process.stdout.write(JSON.stringify(answer) + "\n");
}
await browser.close();
