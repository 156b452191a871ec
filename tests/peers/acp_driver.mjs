// An ACP client built on the official ACP TypeScript SDK (@agentclientprotocol/sdk, from npm,
// installed by tests/install-peers) that drives `pictl acp` the way an editor does, and prints
// what it saw as one JSON object on stdout for the Rust test to check.
//
// Environment: PICTL (the pictl binary), PROJECT (the session's directory), PI_PEERS_DIR (where
// the npm peers are), PI_HOME (the daemon's, passed on to pictl).
//
// Steps: initialize; session/new; set the mode to ask-writes; a prompt whose scripted model
// calls `edit` (the daemon asks; the driver answers session/request_permission with
// "allow once"); a prompt whose model runs a long `bash`, cancelled with session/cancel once
// its tool call shows; then, on a second connection, session/load of the session.

import path from "node:path";

import { acp, start, waitFor } from "./acp_client.mjs";

const seen = { updates: [], permissions: [], loadUpdates: [] };
const cwd = process.env.PROJECT;

// First connection: a live session.
{
  const { child, stream } = start();
  const app = acp
    .client({ name: "pi-acp-test" })
    .onNotification("session/update", ({ params }) => {
      seen.updates.push(params);
    })
    .onRequest("session/request_permission", ({ params }) => {
      seen.permissions.push(params);
      const allow = params.options.find((option) => option.kind === "allow_once");
      return { outcome: { outcome: "selected", optionId: allow.optionId } };
    });
  await app.connectWith(stream, async (agent) => {
    seen.initialize = await agent.request("initialize", {
      protocolVersion: 1,
      clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
    });
    // An MCP server the editor brings (the reference "everything" server, from npm).
    const everything = path.join(process.env.PI_PEERS_DIR, "node_modules/.bin/mcp-server-everything");
    const session = await agent.request("session/new", {
      cwd,
      mcpServers: [{ name: "everything", command: everything, args: [], env: [] }],
    });
    seen.session = session;
    seen.setModel = await agent.request("session/set_config_option", {
      sessionId: session.sessionId,
      configId: "model",
      value: session.configOptions[0].currentValue,
    });
    seen.setMode = await agent.request("session/set_mode", {
      sessionId: session.sessionId,
      modeId: "ask-writes",
    });
    const edit = {
      path: "notes.txt",
      edits: [{ oldText: "old line", newText: "new line" }],
    };
    seen.editPrompt = await agent.request("session/prompt", {
      sessionId: session.sessionId,
      prompt: [
        { type: "text", text: `call edit ${JSON.stringify(edit)}` },
      ],
    });
    await agent.request("session/set_mode", { sessionId: session.sessionId, modeId: "yolo" });
    seen.mcpPrompt = await agent.request("session/prompt", {
      sessionId: session.sessionId,
      prompt: [
        {
          type: "text",
          text: `call mcp__everything__echo ${JSON.stringify({ message: "from the editor" })}`,
        },
      ],
    });
    const before = seen.updates.length;
    const cancelled = agent.request("session/prompt", {
      sessionId: session.sessionId,
      prompt: [{ type: "text", text: `call bash ${JSON.stringify({ command: "sleep 30" })}` }],
    });
    await waitFor(
      () =>
        seen.updates
          .slice(before)
          .find((update) => update.update.sessionUpdate === "tool_call"),
      "the bash tool call",
    );
    const cancelAt = Date.now();
    await agent.notify("session/cancel", { sessionId: session.sessionId });
    seen.cancelPrompt = await cancelled;
    seen.cancelMs = Date.now() - cancelAt;
  });
  child.kill();
}

// Second connection: load the finished session; its history comes back as updates.
{
  const { child, stream } = start();
  const app = acp.client({ name: "pi-acp-test-load" }).onNotification("session/update", ({ params }) => {
    seen.loadUpdates.push(params);
  });
  await app.connectWith(stream, async (agent) => {
    await agent.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
    seen.load = await agent.request("session/load", {
      sessionId: seen.session.sessionId,
      cwd,
      mcpServers: [],
    });
  });
  child.kill();
}

process.stdout.write(JSON.stringify(seen) + "\n");
