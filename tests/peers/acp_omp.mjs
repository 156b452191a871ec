// oh-my-pi's tools seen from an editor: a session whose settings turn them on (`ompTools`)
// keeps a todo list (each change arrives as a `plan` update) and asks a question (arriving as
// `session/request_permission`, answered with the option named by ANSWER). Prints every
// `session/update`, the permission requests and the prompts' answers as one JSON object.
//
// Environment: as acp_client.mjs, plus PROJECT (the session's directory), TODO and ASK (the
// prompts), ANSWER (the option to pick).

import { acp, start } from "./acp_client.mjs";

const seen = { updates: [], permissions: [], prompts: [] };
const { child, stream } = start();
const app = acp
  .client({ name: "pi-acp-omp" })
  .onNotification("session/update", ({ params }) => {
    seen.updates.push(params);
  })
  .onRequest("session/request_permission", ({ params }) => {
    seen.permissions.push(params);
    const chosen = params.options.find((option) => option.name === process.env.ANSWER);
    return { outcome: { outcome: "selected", optionId: chosen.optionId } };
  });
await app.connectWith(stream, async (agent) => {
  await agent.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
  const session = await agent.request("session/new", { cwd: process.env.PROJECT, mcpServers: [] });
  seen.sessionId = session.sessionId;
  for (const text of [process.env.TODO, process.env.ASK]) {
    seen.prompts.push(
      await agent.request("session/prompt", {
        sessionId: session.sessionId,
        prompt: [{ type: "text", text }],
      }),
    );
  }
});
child.kill();
process.stdout.write(JSON.stringify(seen) + "\n");
