// The TypeScript client against the real daemon (run by tests/e2e/tests/suite/ts_client.rs,
// which compiles src/ with tsc into CLIENT_DIST and starts the daemon and the scripted model).
// Prints what it saw as one JSON object.
//
// 1. create a session, prompt a turn whose model runs a slow `bash`, disconnect right after the
//    tool starts, reconnect and attach with `afterSeq`: every event once, none missing;
// 2. in `ask-writes` mode a command asks: the `ui/request` is answered with "Allow once".

import path from "node:path";
import { pathToFileURL } from "node:url";

const { DaemonClient } = await import(
  pathToFileURL(path.join(process.env.CLIENT_DIST, "index.js")).href
);
const cwd = process.env.PROJECT;
const model = process.env.MODEL;
const seen = { seqs: [], types: [] };

function until(client, sessionId, predicate) {
  return new Promise((resolve) => {
    const stop = client.on("session/event", (params) => {
      if (params.sessionId === sessionId && predicate(params)) {
        stop();
        resolve(params);
      }
    });
  });
}

// 1. Disconnect mid-run and resume.
let client = await DaemonClient.connect({ clientInfo: { name: "ts-client-test", version: "0" } });
const session = await client.call("session/create", { cwd, model });
seen.sessionId = session.id;
const record = (params) => {
  if (params.sessionId === session.id) {
    seen.seqs.push(params.seq);
    seen.types.push(params.event.type);
  }
};
const stopRecording = client.on("session/event", record);
await client.attach(session.id);
const toolStarted = until(client, session.id, (params) => params.event.type === "tool_execution_start");
await client.call("session/prompt", {
  sessionId: session.id,
  text: `call bash ${JSON.stringify({ command: "sleep 1; echo streamed" })}`,
});
await toolStarted;
// Disconnect here: what this connection saw ends at `lastSeq`.
stopRecording();
const lastSeq = client.lastSeq.get(session.id);
await client.close();
seen.disconnectedAt = lastSeq;

client = await DaemonClient.connect({ clientInfo: { name: "ts-client-test", version: "1" } });
client.lastSeq.set(session.id, lastSeq);
client.on("session/event", record);
const ended = until(client, session.id, (params) => params.event.type === "agent_end");
await client.attach(session.id);
await ended;

// 2. A question, answered.
await client.call("session/setPolicy", { sessionId: session.id, mode: "ask-writes" });
const asked = new Promise((resolve) => {
  const stop = client.on("ui/request", async (request) => {
    if (request.sessionId !== session.id) return;
    stop();
    seen.question = request.request;
    seen.answer = await client.respond(request, { value: "Allow once" });
    resolve();
  });
});
const secondEnd = until(client, session.id, (params) => params.event.type === "agent_end");
const results = [];
client.on("session/event", (params) => {
  if (params.sessionId === session.id && params.event.type === "tool_execution_end") {
    results.push({ isError: params.event.isError, content: params.event.result.content });
  }
});
await client.call("session/prompt", {
  sessionId: session.id,
  text: `call bash ${JSON.stringify({ command: "touch made.txt" })}`,
});
await asked;
await secondEnd;
seen.secondToolResult = results[0];

// An error from the daemon arrives as a DaemonError with its kind.
try {
  await client.call("session/prompt", { sessionId: "no-such-session", text: "hi" });
} catch (error) {
  seen.error = { name: error.name, code: error.code, kind: error.data?.kind, message: error.message };
}
await client.close();
process.stdout.write(JSON.stringify(seen) + "\n");
