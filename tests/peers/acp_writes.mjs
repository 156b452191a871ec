// Sessions whose models `write` many files at once, side by side over one `pictl acp`, as an
// editor shows them: prints every `session/update` (and the prompts' answers) as one JSON
// object on stdout for the Rust test to check each write's diff.
//
// Environment: as acp_client.mjs, plus PROJECTS (the sessions' directories, separated by
// ":"; one session each). Each session is prompted "write the files" at the same time.

import { acp, start } from "./acp_client.mjs";

const seen = { updates: [], sessions: [] };
const { child, stream } = start();
const app = acp
  .client({ name: "pi-acp-writes" })
  .onNotification("session/update", ({ params }) => {
    seen.updates.push(params);
  });
await app.connectWith(stream, async (agent) => {
  await agent.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
  for (const cwd of process.env.PROJECTS.split(":")) {
    const session = await agent.request("session/new", { cwd, mcpServers: [] });
    await agent.request("session/set_mode", { sessionId: session.sessionId, modeId: "yolo" });
    seen.sessions.push({ sessionId: session.sessionId, cwd });
  }
  seen.prompts = await Promise.all(
    seen.sessions.map(({ sessionId }) =>
      agent.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: "write the files" }],
      }),
    ),
  );
});
child.kill();
process.stdout.write(JSON.stringify(seen) + "\n");
