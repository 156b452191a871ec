#!/usr/bin/env node
// Generates the daemon's built-in model catalog (daemon/llm/src/catalog/pi-models.json) from
// the pinned pi packages that tests/install-peers installs.
//
// Usage: node scripts/gen-catalog.mjs [PEERS_DIR] > daemon/llm/src/catalog/pi-models.json
// PEERS_DIR defaults to $PI_PEERS_DIR, else ~/.cache/pi-daemon-peers.
//
// Sources (all from PEERS_DIR/node_modules/@mariozechner):
// - pi-ai/dist/models.generated.js: `MODELS` ({provider: {id: model}}), the models.
// - pi-ai/dist/env-api-keys.js: which environment variables hold each provider's key, in the
//   order pi tries them (read through `findEnvKeys` with every variable set). Providers whose
//   credentials are not a key in one variable (amazon-bedrock: AWS profiles and IAM keys) get
//   an empty list.
// - pi-coding-agent/dist/core/model-resolver.js: `defaultModelPerProvider`, each provider's
//   default model, in the order pi prefers providers. Providers missing there follow in
//   `MODELS` order, with their first model as default.
//
// The output is deterministic: providers in that order, models grouped by provider in
// `MODELS` order, keys in a fixed order, optional fields only when pi has them.

import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const peers =
  process.argv[2] || process.env.PI_PEERS_DIR || join(homedir(), ".cache", "pi-daemon-peers");
const scope = join(peers, "node_modules", "@mariozechner");
const piAi = join(scope, "pi-ai");
const codingAgent = join(scope, "pi-coding-agent");

const load = (path) => import(pathToFileURL(path).href);

let pkg;
try {
  pkg = JSON.parse(readFileSync(join(piAi, "package.json"), "utf8"));
} catch (error) {
  console.error(
    `gen-catalog: @mariozechner/pi-ai is not installed under ${peers} ` +
      `(run tests/install-peers): ${error.message}`,
  );
  process.exit(1);
}
const { MODELS } = await load(join(piAi, "dist", "models.generated.js"));
const { findEnvKeys } = await load(join(piAi, "dist", "env-api-keys.js"));
const { defaultModelPerProvider } = await load(
  join(codingAgent, "dist", "core", "model-resolver.js"),
);

// pi's table of key variables is private; `findEnvKeys` returns the variables it finds set, in
// order, so with every variable "set" it returns the whole list.
function envVars(provider) {
  const saved = process.env;
  process.env = new Proxy(
    {},
    { get: (_target, key) => (typeof key === "string" ? "set" : undefined) },
  );
  try {
    return findEnvKeys(provider) ?? [];
  } finally {
    process.env = saved;
  }
}

const order = [
  ...Object.keys(defaultModelPerProvider).filter((id) => id in MODELS),
  ...Object.keys(MODELS).filter((id) => !(id in defaultModelPerProvider)),
];

const providers = order.map((id) => {
  const ids = Object.keys(MODELS[id]);
  let defaultModel = defaultModelPerProvider[id];
  if (!defaultModel || !ids.includes(defaultModel)) {
    if (defaultModel) {
      console.error(
        `gen-catalog: default model ${id}/${defaultModel} is not in MODELS; using ${ids[0]}`,
      );
    }
    defaultModel = ids[0];
  }
  return { id, envVars: envVars(id), defaultModel };
});

const model = (provider, m) => {
  const out = {
    provider,
    id: m.id,
    name: m.name,
    api: m.api,
    baseUrl: m.baseUrl,
    reasoning: m.reasoning,
    input: m.input,
    cost: {
      input: m.cost.input,
      output: m.cost.output,
      cacheRead: m.cost.cacheRead,
      cacheWrite: m.cost.cacheWrite,
    },
    contextWindow: m.contextWindow,
    maxTokens: m.maxTokens,
  };
  if (m.headers !== undefined) out.headers = m.headers;
  if (m.compat !== undefined) out.compat = m.compat;
  if (m.thinkingLevelMap !== undefined) out.thinkingLevelMap = m.thinkingLevelMap;
  return out;
};

const models = order.flatMap((provider) =>
  Object.values(MODELS[provider]).map((m) => model(provider, m)),
);

const catalog = { source: `${pkg.name} ${pkg.version}`, providers, models };
process.stdout.write(`${JSON.stringify(catalog, null, 2)}\n`);
