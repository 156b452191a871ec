// What an editor plugin does with the client: connect, start (or resume) a session in the
// workspace, send the user's prompt, render the events, and answer the daemon's questions.
//
//   npm run build && node dist-examples/plugin.js "/path/to/workspace" "explain this repo"

import { DaemonClient, type SessionEventParams } from "../src/index.js";

const [workspace = process.cwd(), prompt = "Summarize this project."] = process.argv.slice(2);

const client = await DaemonClient.connect({ clientInfo: { name: "my-editor", version: "1.0.0" } });
const session = await client.call("session/create", { cwd: workspace });

// Render the run as it streams: text deltas, tool calls, the end.
client.on("session/event", ({ sessionId, event }: SessionEventParams) => {
  if (sessionId !== session.id) return;
  if (event.type === "message_update" && event.assistantMessageEvent.type === "text_delta") {
    process.stdout.write(event.assistantMessageEvent.delta);
  } else if (event.type === "tool_execution_start") {
    process.stdout.write(`\n[${event.toolName}] ${JSON.stringify(event.args)}\n`);
  } else if (event.type === "agent_end") {
    process.stdout.write("\n");
    void client.close();
  }
});

// Questions (approvals, extensions' selections): a real plugin shows a dialog; this one
// allows once. Whichever attached client answers first wins.
client.on("ui/request", (request) => {
  if (request.sessionId !== session.id) return;
  if (request.request.method === "select") {
    void client.respond(request, { value: request.request.options[0] });
  } else if (request.request.method === "confirm") {
    void client.respond(request, { confirmed: true });
  } else {
    void client.respond(request, { cancelled: true });
  }
});

await client.attach(session.id);
await client.call("session/prompt", { sessionId: session.id, text: prompt });
await client.closed;
// After a disconnect, a new client resumes without gaps:
//   const again = await DaemonClient.connect();
//   again.lastSeq.set(session.id, client.lastSeq.get(session.id)!);
//   await again.attach(session.id);
