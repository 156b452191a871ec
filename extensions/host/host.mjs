// pid's extension host: runs pi's TypeScript extensions, unmodified, through the loader and
// runner of the pinned `@mariozechner/pi-coding-agent` package (decision 0017), for many
// sessions at once, each with its own extension instances, as each pi process would have.
//
// It speaks JSON-RPC 2.0 with pid over stdin and stdout, one message per line. Everything
// an extension prints goes to stderr (pid's log of the host); stdout carries only messages.
//
// pid → host requests: initialize, discover, session/open, session/close, tool_call,
// tool_result, tool/execute, input, before_agent_start, context, before_provider_request,
// after_provider_response,
// session_before_compact, session_before_fork, session_before_tree, session_before_switch,
// user_bash, command,
// packages, provider/stream
// (a model of an extension's provider, its events as `provider/event`); notifications:
// event, compaction/abort, bash/abort, tree/abort, provider/cancel
// (observe-only events), session/state (the mirror behind pi's synchronous getters),
// session/entry and session/leaf (the session manager's copy of the session), tool/cancel.
// host → pid requests: ui/ask (pid's `ui/ask` params: select, confirm, input, editor);
// notifications: packages/progress, ui/notify,
// ui/status, ui/widget, ui/title, action (sendMessage, sendUserMessage, appendEntry,
// setActiveTools, setSessionName, setLabel, setThinkingLevel), tools/changed,
// providers/changed, provider/event, extension/error.

import { format } from "node:util";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { createInterface } from "node:readline";

// --- stdout belongs to the protocol -------------------------------------------------------

const writeOut = process.stdout.write.bind(process.stdout);
const toLog = (...args) => process.stderr.write(format(...args) + "\n");
console.log = toLog;
console.info = toLog;
console.warn = toLog;
console.error = toLog;
console.debug = toLog;
process.stdout.write = (chunk, ...rest) => process.stderr.write(chunk, ...rest);

function send(message) {
  writeOut(JSON.stringify({ jsonrpc: "2.0", ...message }) + "\n");
}

// --- the pinned package ---------------------------------------------------------------------

const modules = process.env.PI_EXTENSION_HOST_MODULES;
const pi = modules
  ? await import(pathToFileURL(join(modules, "@mariozechner/pi-coding-agent/dist/index.js")).href)
  : await import("@mariozechner/pi-coding-agent");
// pi's model API, the same module its registry registers extensions' providers in.
const ai = modules
  ? await import(pathToFileURL(join(modules, "@mariozechner/pi-ai/dist/index.js")).href)
  : await import("@mariozechner/pi-ai");
// pi's own implementations of the built-in APIs, as they were before any extension
// registered one under the same name (pi's API registry is one for the whole process).
const builtinApis = new Map(ai.getApiProviders().map((provider) => [provider.api, provider]));
const {
  AuthStorage,
  DefaultPackageManager,
  DefaultResourceLoader,
  ExtensionRunner,
  ModelRegistry,
  SessionManager,
  SettingsManager,
  initTheme,
  truncateTail,
} = pi;
// `ctx.ui.theme` throws until a theme is set; extensions style their status texts with it.
initTheme("dark");

// --- requests to pid ------------------------------------------------------------------------

let nextId = 1;
const waiting = new Map();

function request(method, params) {
  const id = nextId++;
  return new Promise((resolve, reject) => {
    waiting.set(id, { resolve, reject });
    send({ id, method, params });
  });
}

function notify(method, params) {
  send({ method, params });
}

// --- sessions -------------------------------------------------------------------------------

/** Open sessions by id: their runner, their mirror of pid's state, their running tools. */
const sessions = new Map();

function session(sessionId) {
  const open = sessions.get(sessionId);
  if (!open) throw rpcError(-32602, `session ${sessionId} has no extensions open in the host`);
  enter(open);
  return open;
}

/** The session's directory as the process's, as in pi, where each session is a process of
 * its own: extensions that read `process.cwd()` (while loading, or in a handler before its
 * first await) see their session's. */
function enter(open) {
  try {
    if (process.cwd() !== open.cwd) process.chdir(open.cwd);
  } catch {
    // A directory that is gone: the host's own stays.
  }
}

function rpcError(code, message) {
  const error = new Error(message);
  error.code = code;
  return error;
}

const errorText = (error) => (error instanceof Error ? error.message : String(error));

/** The UI an extension sees: dialogs asked of pid's clients, the rest sent as notices;
 * `themed.theme` is pi's theme. */
function uiContext(sessionId, open, themed) {
  const state = open.state;
  // pid answers with pi's dialog answer: `value`, `confirmed`, or `cancelled`.
  const ask = async (dialog, opts) => {
    if (!open.hasUI || opts?.signal?.aborted) return { cancelled: true };
    const answer = request("ui/ask", { sessionId, request: dialog, timeoutMs: opts?.timeout });
    if (!opts?.signal) return answer;
    return Promise.race([
      answer,
      new Promise((resolve) =>
        opts.signal.addEventListener("abort", () => resolve({ cancelled: true })),
      ),
    ]);
  };
  const refused = (what) => () => {
    notify("ui/notify", {
      sessionId,
      level: "warning",
      message: `${what} needs pi's own terminal; pid's clients do not show it`,
    });
    return undefined;
  };
  return {
    select: async (title, options, opts) =>
      (await ask({ method: "select", title, options }, opts))?.value ?? undefined,
    confirm: async (title, message, opts) =>
      (await ask({ method: "confirm", title, message: message ?? "" }, opts))?.confirmed === true,
    input: async (title, placeholder, opts) =>
      (await ask({ method: "input", title, placeholder }, opts))?.value ?? undefined,
    editor: async (title, prefill) =>
      (await ask({ method: "editor", title, prefill }))?.value ?? undefined,
    notify: (message, level = "info") => notify("ui/notify", { sessionId, message, level }),
    setStatus: (key, text) => notify("ui/status", { sessionId, key, text: text ?? null }),
    setWidget: (key, content, options) =>
      Array.isArray(content) || content === undefined
        ? notify("ui/widget", {
            sessionId,
            key,
            lines: content ?? null,
            placement: options?.placement ?? "aboveEditor",
          })
        : refused(`the widget "${key}" (a component)`)(),
    setTitle: (title) => notify("ui/title", { sessionId, title }),
    setWorkingMessage: (message) =>
      notify("ui/status", { sessionId, key: "working", text: message ?? null }),
    setWorkingVisible: () => {},
    setWorkingIndicator: () => {},
    setHiddenThinkingLabel: () => {},
    onTerminalInput: () => () => {},
    setFooter: (factory) => (factory ? refused("a custom footer")() : undefined),
    setHeader: (factory) => (factory ? refused("a custom header")() : undefined),
    custom: async () => refused("a custom component (ctx.ui.custom)")(),
    pasteToEditor: (text) => notify("ui/editorText", { sessionId, text, paste: true }),
    setEditorText: (text) => {
      state.editorText = text;
      notify("ui/editorText", { sessionId, text, paste: false });
    },
    getEditorText: () => state.editorText ?? "",
    addAutocompleteProvider: () => {},
    setEditorComponent: (component) =>
      component ? refused("a custom editor")() : undefined,
    getEditorComponent: () => undefined,
    get theme() {
      return themed.theme;
    },
    getAllThemes: () => [],
    getTheme: () => undefined,
    setTheme: () => ({ success: false, error: "themes are chosen in pid's clients" }),
    getToolsExpanded: () => false,
    setToolsExpanded: () => {},
  };
}

/** The actions extensions call on `pi`, answered from the mirror or sent to pid. */
function coreActions(sessionId, state) {
  const action = (name, params) => notify("action", { sessionId, action: name, ...params });
  return {
    sendMessage: (message, options) => action("sendMessage", { message, options: options ?? {} }),
    sendUserMessage: (content, options) =>
      action("sendUserMessage", { content, options: options ?? {} }),
    appendEntry: (customType, data) => action("appendEntry", { customType, data: data ?? null }),
    setSessionName: (name) => {
      state.sessionName = name;
      action("setSessionName", { name });
    },
    getSessionName: () => state.sessionName ?? undefined,
    setLabel: (entryId, label) => action("setLabel", { entryId, label: label ?? null }),
    // pi's registry: the session's tools, with the ones extensions register (an
    // extension's tool under a built-in's name replaces it; new ones are active).
    getActiveTools: () =>
      state.chosenTools
        ? [...state.chosenTools]
        : [...new Set([...state.activeTools, ...registered(sessionId).map((tool) => tool.name)])],
    getAllTools: () => {
      const own = registered(sessionId);
      const names = new Set(own.map((tool) => tool.name));
      return [...state.allTools.filter((tool) => !names.has(tool.name)), ...own];
    },
    setActiveTools: (names) => {
      state.chosenTools = [...names];
      action("setActiveTools", { names: [...names] });
    },
    refreshTools: () => {
      const open = sessions.get(sessionId);
      if (open) notify("tools/changed", { sessionId, tools: toolsOf(open.runner) });
    },
    getCommands: () => state.commands,
    setModel: async (model) => {
      action("setModel", { provider: model?.provider, id: model?.id });
      return true;
    },
    getThinkingLevel: () => state.thinkingLevel,
    setThinkingLevel: (level) => {
      state.thinkingLevel = level;
      action("setThinkingLevel", { level });
    },
  };
}

function contextActions(sessionId, state) {
  return {
    getModel: () => state.model ?? undefined,
    isIdle: () => state.idle,
    getSignal: () => undefined,
    abort: () => notify("action", { sessionId, action: "abort" }),
    hasPendingMessages: () => false,
    shutdown: () => notify("action", { sessionId, action: "shutdown" }),
    getContextUsage: () => state.contextUsage ?? undefined,
    compact: (options) =>
      notify("action", {
        sessionId,
        action: "compact",
        customInstructions: options?.customInstructions ?? null,
      }),
    getSystemPrompt: () => state.systemPrompt ?? "",
  };
}

/** The tools session `sessionId`'s extensions registered, as pi's `getAllTools` shows them. */
function registered(sessionId) {
  const open = sessions.get(sessionId);
  if (!open) return [];
  return open.runner.getAllRegisteredTools().map(({ definition, sourceInfo }) => ({
    name: definition.name,
    description: definition.description ?? "",
    parameters: definition.parameters,
    sourceInfo,
  }));
}

function toolsOf(runner) {
  return runner.getAllRegisteredTools().map(({ definition, sourceInfo }) => ({
    name: definition.name,
    label: definition.label ?? definition.name,
    description: definition.description ?? "",
    parameters: JSON.parse(JSON.stringify(definition.parameters ?? { type: "object" })),
    extension: sourceInfo?.path ?? null,
    // As pi's session normalizes them for its system prompt.
    promptSnippet:
      typeof definition.promptSnippet === "string"
        ? definition.promptSnippet.replace(/[\r\n]+/g, " ").replace(/\s+/g, " ").trim() || null
        : null,
    promptGuidelines: [
      ...new Set(
        (definition.promptGuidelines ?? [])
          .filter((guideline) => typeof guideline === "string")
          .map((guideline) => guideline.trim())
          .filter((guideline) => guideline.length > 0),
      ),
    ],
  }));
}

/** The shortcuts the session's extensions registered, by pi's key id (lower-case; a later
 * extension's wins, as in pi). */
function shortcutsOf(runner) {
  const found = new Map();
  for (const extension of runner.extensions) {
    for (const [key, shortcut] of extension.shortcuts) {
      found.set(key.toLowerCase(), {
        key: key.toLowerCase(),
        description: shortcut.description ?? "",
        extension: extension.path,
        handler: shortcut.handler,
      });
    }
  }
  return found;
}

async function runShortcut({ sessionId, key, hasUI }) {
  const open = session(sessionId);
  withUI(open, sessionId, hasUI);
  const shortcut = shortcutsOf(open.runner).get(String(key).toLowerCase());
  if (!shortcut) throw rpcError(-32602, `no extension of this session registers the shortcut ${key}`);
  try {
    await shortcut.handler(open.runner.createContext());
  } catch (error) {
    throw rpcError(-32000, `the shortcut ${key} failed: ${errorText(error)}`);
  }
  return {};
}

function commandsOf(runner) {
  return runner.getRegisteredCommands().map((command) => ({
    name: command.invocationName,
    description: command.description ?? "",
    extension: command.sourceInfo?.path ?? null,
  }));
}

function describe(extension) {
  return {
    path: extension.path,
    handlers: [...extension.handlers.keys()],
    tools: [...extension.tools.keys()],
    commands: [...extension.commands.keys()],
    flags: [...extension.flags.keys()],
    shortcuts: [...extension.shortcuts.keys()],
  };
}

async function discover({ cwd, agentDir, extensionPaths = [], noExtensions = false }) {
  const settingsManager = SettingsManager.create(cwd, agentDir);
  const packages = new DefaultPackageManager({ cwd, agentDir, settingsManager });
  const found = [];
  const errors = [];
  const take = (resolved) => {
    for (const resource of resolved.extensions) {
      if (!resource.enabled) continue;
      found.push({
        path: resource.path,
        scope: resource.metadata?.scope ?? "user",
        source: resource.metadata?.source ?? "local",
        origin: resource.metadata?.origin ?? "top-level",
      });
    }
  };
  try {
    take(await packages.resolveExtensionSources(extensionPaths, { temporary: true }));
  } catch (error) {
    errors.push({ path: extensionPaths.join(", "), error: errorText(error) });
  }
  if (!noExtensions) {
    const missing = [];
    try {
      take(
        await packages.resolve((source) => {
          missing.push(source);
          return "skip";
        }),
      );
    } catch (error) {
      errors.push({ path: join(cwd, ".pi", "settings.json"), error: errorText(error) });
    }
    for (const source of missing) {
      errors.push({
        path: source,
        error: `the package ${source} is not installed: pid installs packages only when asked (a package's install scripts are code); \`pictl install ${source}\` installs it (\`-l\` in the project for a project's package)`,
      });
    }
  }
  const seen = new Set();
  return {
    extensions: found.filter(({ path }) => !seen.has(path) && seen.add(path)),
    errors,
  };
}

/** The session's values for the flags its extensions register, as pi's command line gives
 * them (a boolean flag given at all is true); what no extension registers, or a string flag
 * without a value, is an error as pi reports it. */
function applyFlags(extensions, runtime, values) {
  const registered = new Map();
  for (const extension of extensions) {
    for (const [name, flag] of extension.flags) registered.set(name, flag);
  }
  const errors = [];
  for (const [name, value] of Object.entries(values)) {
    const flag = registered.get(name);
    if (!flag) {
      errors.push({ path: `--${name}`, error: `Unknown option: --${name} (no extension of this session registers it)` });
    } else if (flag.type === "boolean") {
      runtime.flagValues.set(name, true);
    } else if (typeof value === "string") {
      runtime.flagValues.set(name, value);
    } else {
      errors.push({ path: flag.extensionPath ?? `--${name}`, error: `Extension flag "--${name}" requires a value` });
    }
  }
  return errors;
}

/** pi's model registry as a pi process starting now reads it: the user's `models.json` and
 * `auth.json` as they are (each session opening reads them again). */
function models(agentDir) {
  return ModelRegistry.create(
    AuthStorage.create(join(agentDir, "auth.json")),
    join(agentDir, "models.json"),
  );
}

/** pi's package manager, as `pi install|remove|update|list` run it in `cwd`; its steps go
 * to pid as `packages/progress` with the operation's token. */
async function packages({ op, cwd, agentDir, source, local = false, token }) {
  const settingsManager = SettingsManager.create(cwd, agentDir);
  const manager = new DefaultPackageManager({ cwd, agentDir, settingsManager });
  manager.setProgressCallback((event) =>
    notify("packages/progress", {
      token,
      kind: event.type,
      action: event.action,
      source: event.source,
      message: event.message ?? null,
    }),
  );
  try {
    switch (op) {
      case "install":
        await manager.installAndPersist(source, { local });
        return {
          source,
          installedPath: manager.getInstalledPath(source, local ? "project" : "user") ?? null,
        };
      case "remove":
        return { removed: await manager.removeAndPersist(source, { local }) };
      case "update":
        await manager.update(source ?? undefined);
        return {};
      case "list":
        return {
          packages: manager.listConfiguredPackages().map((configured) => ({
            source: configured.source,
            scope: configured.scope,
            filtered: configured.filtered === true,
            installedPath: configured.installedPath ?? null,
          })),
        };
      default:
        throw rpcError(-32602, `no package operation ${op}`);
    }
  } finally {
    await settingsManager.flush();
    for (const { scope, error } of settingsManager.drainErrors()) {
      console.error(`settings (${scope}): ${errorText(error)}`);
    }
  }
}

/** Openings in progress, by session: a session's openings (and closings) run one after
 * another, so two that overlap (a warm-up and a restart's, an approval's) never leave a
 * runner behind that nobody closes. */
const openings = new Map();

function inTurn(sessionId, work) {
  const previous = openings.get(sessionId) ?? Promise.resolve();
  const next = previous.catch(() => {}).then(work);
  openings.set(sessionId, next);
  const forget = () => {
    if (openings.get(sessionId) === next) openings.delete(sessionId);
  };
  next.then(forget, forget);
  return next;
}

function openSession(params) {
  return inTurn(params.sessionId, () => openSessionNow(params));
}

async function openSessionNow(params) {
  const { sessionId, cwd, agentDir, paths, hasUI, state: initial = {} } = params;
  if (sessions.has(sessionId)) await closeSessionNow({ sessionId, reason: "reload" });
  // Exactly `paths` (pid chose them from `discover`): empty settings, so that pi's package
  // manager installs nothing and reads no project settings here — a project's packages are
  // code it brings, and a package that fails to install must not take the user's own
  // extensions down with it.
  enter({ cwd });
  const loader = new DefaultResourceLoader({
    cwd,
    agentDir,
    settingsManager: SettingsManager.inMemory({}),
    noExtensions: true,
    additionalExtensionPaths: paths,
    noSkills: true,
    noPromptTemplates: true,
    noThemes: true,
    noContextFiles: true,
  });
  await loader.reload();
  const { extensions, errors, runtime } = loader.getExtensions();
  errors.push(...applyFlags(extensions, runtime, params.flags ?? {}));
  // pid's session as pi's session manager reads it (`ctx.sessionManager`): its entries in
  // pi's session-file format, kept current by `session/entry` and `session/leaf`.
  const sessionManager = SessionManager.inMemory(cwd);
  sessionManager.sessionId = sessionId;
  if (sessionManager.fileEntries[0]) sessionManager.fileEntries[0].id = sessionId;
  sessionManager.fileEntries.push(...(params.entries ?? []));
  sessionManager._buildIndex();
  if (params.leafId !== undefined && params.leafId !== null && sessionManager.byId.has(params.leafId)) {
    sessionManager.leafId = params.leafId;
  }
  // pi's own registry of the user's models and logins (`models.json`, `auth.json`), as
  // `ctx.modelRegistry` reads them in pi: an extension that summarizes with a model of its
  // choice finds it and its key.
  const modelRegistry = models(agentDir);
  const runner = new ExtensionRunner(extensions, runtime, cwd, sessionManager, modelRegistry);
  const state = {
    activeTools: initial.activeTools ?? [],
    allTools: initial.allTools ?? [],
    commands: [],
    model: initial.model ?? undefined,
    thinkingLevel: initial.thinkingLevel ?? "off",
    systemPrompt: initial.systemPrompt ?? "",
    sessionName: initial.sessionName ?? undefined,
    idle: true,
  };
  Object.assign(state, initial);
  const open = {
    runner,
    state,
    cwd,
    running: new Map(),
    sessionManager,
    hasUI: false,
    ui: null,
    events: Promise.resolve(),
    turnIndex: 0,
    runMessages: [],
    modelRegistry,
    providers: new Set(),
    streamers: new Map(),
    keyNames: new Map(),
    announced: false,
  };
  sessions.set(sessionId, open);
  // Before `bindCore`: a provider registration it flushes may fail.
  // Errors while the session opens (a provider registration pi refuses) come back with the
  // opening; later ones as they happen.
  runner.onError((error) => {
    if (!open.announced) {
      errors.push({
        path: error.extensionPath,
        error: `${error.event}: ${error.error}`,
      });
      return;
    }
    notify("extension/error", {
      sessionId,
      extensionPath: error.extensionPath,
      event: error.event,
      error: error.error,
    });
  });
  // pi's `registerProvider`: into the session's own registry (pi's validation and
  // merging); pid hears the models, and streams them through `provider/stream`. A
  // provider's own `streamSimple` is kept by the session: pi's API registry is one for the
  // whole process, where two sessions' extensions may register the same API.
  const providerChanged = () => {
    if (open.announced) notify("providers/changed", { sessionId, models: providerModels(open) });
  };
  runner.bindCore(coreActions(sessionId, state), contextActions(sessionId, state), {
    registerProvider: (name, config) => {
      modelRegistry.registerProvider(name, config);
      open.providers.add(name);
      if (config.streamSimple) {
        open.streamers.set(config.api, { provider: name, streamSimple: config.streamSimple });
      }
      if (typeof config.apiKey === "string" && /^[A-Z_][A-Z0-9_]*$/.test(config.apiKey)) {
        open.keyNames.set(name, config.apiKey);
      }
      providerChanged();
    },
    unregisterProvider: (name) => {
      modelRegistry.unregisterProvider(name);
      open.providers.delete(name);
      for (const [api, streamer] of open.streamers) {
        if (streamer.provider === name) open.streamers.delete(api);
      }
      providerChanged();
    },
  });
  runner.bindCommandContext();
  // pi's own theme, as its no-op UI context has it (`initTheme` above).
  open.ui = uiContext(sessionId, open, runner.getUIContext());
  open.hasUI = hasUI === true;
  runner.setUIContext(open.ui);
  runner.hasUI = () => open.hasUI;
  state.commands = runner
    .getRegisteredCommands()
    .map((command) => ({
      name: command.invocationName,
      description: command.description,
      source: "extension",
      sourceInfo: command.sourceInfo ?? { path: "" },
    }));
  await runner.emit({ type: "session_start", reason: params.reason ?? "startup" });
  open.announced = true;
  return {
    models: providerModels(open),
    extensions: extensions.map(describe),
    tools: toolsOf(runner),
    commands: commandsOf(runner),
    shortcuts: [...shortcutsOf(runner).values()].map(({ key, description, extension }) => ({
      key,
      description,
      extension,
    })),
    errors: errors.map(({ path, error }) => ({ path, error })),
  };
}

// --- providers extensions register -----------------------------------------------------------

/** The models of the providers the session's extensions registered (new providers, or
 * built-in ones they changed), as pid's catalog takes them. */
function providerModels(open) {
  return open.modelRegistry
    .getAll()
    .filter((model) => open.providers.has(model.provider))
    .map((model) => ({
      id: model.id,
      name: model.name ?? model.id,
      api: model.api,
      provider: model.provider,
      baseUrl: model.baseUrl ?? "",
      reasoning: model.reasoning === true,
      input: model.input ?? ["text"],
      cost: {
        input: model.cost?.input ?? 0,
        output: model.cost?.output ?? 0,
        cacheRead: model.cost?.cacheRead ?? 0,
        cacheWrite: model.cost?.cacheWrite ?? 0,
      },
      contextWindow: model.contextWindow ?? 128000,
      maxTokens: model.maxTokens ?? 16384,
      hasKey: open.modelRegistry.hasConfiguredAuth(model),
    }));
}

/** Streams in flight, by pid's id: their abort. */
const streams = new Map();

/** One event of a response as pid takes it: pi's event without its `partial` (pid keeps its
 * own), with what only the partial carries (a tool call's id and name, a block's
 * signature). */
function streamEvent(event) {
  const block = event.partial?.content?.[event.contentIndex];
  switch (event.type) {
    case "start":
      return { type: "start" };
    case "text_start":
    case "thinking_start":
      return { type: event.type, contentIndex: event.contentIndex };
    case "text_delta":
    case "thinking_delta":
    case "toolcall_delta":
      return { type: event.type, contentIndex: event.contentIndex, delta: event.delta ?? "" };
    case "text_end":
      return {
        type: "text_end",
        contentIndex: event.contentIndex,
        content: event.content ?? block?.text ?? "",
        signature: block?.textSignature ?? null,
      };
    case "thinking_end":
      return {
        type: "thinking_end",
        contentIndex: event.contentIndex,
        content: event.content ?? block?.thinking ?? "",
        signature: block?.thinkingSignature || null,
        redacted: block?.redacted === true,
      };
    case "toolcall_start":
      return { type: "toolcall_start", contentIndex: event.contentIndex, id: block?.id ?? "", name: block?.name ?? "" };
    case "toolcall_end":
      return { type: "toolcall_end", contentIndex: event.contentIndex, toolCall: event.toolCall };
    case "done":
      return { type: "done", reason: event.reason, message: event.message };
    case "error":
      return { type: "error", reason: event.reason, error: event.error };
    default:
      return null;
  }
}

/** A model of an extension's provider, streamed as pi streams it: the key and headers from
 * the session's registry (pi's `getApiKeyAndHeaders`), the provider's `streamSimple` (or
 * pi's own for a built-in API), `before_provider_request` handlers on the payload. Each
 * event goes to pid as `provider/event`; the answer comes once the stream ended. */
/** The key a variable of the session's environment gives `provider` (the client's, as pid
 * reads built-in providers' keys): when its `apiKey` names a variable the client set and
 * no login or key of `auth.json` comes first (pi's order). */
async function sessionKey(open, provider, env) {
  const named = open.keyNames.get(provider);
  if (!named || !env?.[named]) return undefined;
  const stored = await open.modelRegistry.authStorage.getApiKey(provider, { includeFallback: false });
  return stored ? undefined : env[named];
}

async function providerStream({ sessionId, streamId, provider, modelId, context, options = {}, env }) {
  const open = session(sessionId);
  const controller = new AbortController();
  streams.set(streamId, { controller, sessionId });
  const fail = (message) =>
    notify("provider/event", {
      streamId,
      event: { type: "error", reason: controller.signal.aborted ? "aborted" : "error", error: { errorMessage: message } },
    });
  try {
    // A custom id of the provider: its first model's settings with that id, as pi makes a
    // custom model id of a known provider.
    const template = open.modelRegistry.getAll().find((model) => model.provider === provider);
    const model =
      open.modelRegistry.find(provider, modelId) ??
      (template ? { ...template, id: modelId, name: modelId } : undefined);
    if (!model || !open.providers.has(model.provider)) {
      fail(`no extension of this session provides the model ${provider}/${modelId}`);
      return {};
    }
    const auth = await open.modelRegistry.getApiKeyAndHeaders(model);
    if (!auth.ok) {
      fail(auth.error);
      return {};
    }
    const own = open.streamers.get(model.api)?.streamSimple;
    const streamSimple = own ?? builtinApis.get(model.api)?.streamSimple;
    if (!streamSimple) {
      fail(`no extension of this session streams the API ${model.api} of ${provider}/${modelId}`);
      return {};
    }
    const runner = open.runner;
    const stream = streamSimple(model, context, {
      reasoning: options.reasoning ?? undefined,
      maxTokens: options.maxTokens ?? undefined,
      sessionId: options.sessionId ?? undefined,
      signal: controller.signal,
      apiKey: (await sessionKey(open, model.provider, env)) ?? auth.apiKey,
      headers: auth.headers,
      onPayload: runner.hasHandlers("before_provider_request")
        ? (payload) => runner.emitBeforeProviderRequest(payload)
        : undefined,
      onResponse: runner.hasHandlers("after_provider_response")
        ? (response) =>
            runner.emit({ type: "after_provider_response", status: response.status, headers: response.headers })
        : undefined,
    });
    let ended = false;
    for await (const event of stream) {
      const sent = streamEvent(event);
      if (!sent) continue;
      notify("provider/event", { streamId, event: sent });
      if (sent.type === "done" || sent.type === "error") {
        ended = true;
        break;
      }
    }
    if (!ended) fail("the extension's provider ended its stream without a result");
  } catch (error) {
    fail(errorText(error));
  } finally {
    streams.delete(streamId);
  }
  return {};
}

function closeSession(params) {
  return inTurn(params.sessionId, () => closeSessionNow(params));
}

async function closeSessionNow({ sessionId, reason = "quit" }) {
  const open = sessions.get(sessionId);
  if (!open) return { closed: false };
  sessions.delete(sessionId);
  for (const controller of open.running.values()) controller.abort();
  for (const stream of streams.values()) {
    if (stream.sessionId === sessionId) stream.controller.abort();
  }
  try {
    await open.runner.emit({ type: "session_shutdown", reason });
  } finally {
    open.runner.invalidate?.("the session was closed");
  }
  return { closed: true };
}

async function executeTool({ sessionId, toolCallId, name, params, hasUI }) {
  const open = session(sessionId);
  withUI(open, sessionId, hasUI);
  const definition = open.runner.getToolDefinition(name);
  if (!definition) throw rpcError(-32602, `no extension of this session registers the tool ${name}`);
  const controller = new AbortController();
  open.running.set(toolCallId, controller);
  try {
    const prepared = definition.prepareArguments ? definition.prepareArguments(params) : params;
    const result = await definition.execute(
      toolCallId,
      prepared,
      controller.signal,
      (partial) => notify("tool/update", { sessionId, toolCallId, partial }),
      open.runner.createContext(),
    );
    return {
      content: result?.content ?? [],
      details: result?.details ?? null,
      isError: false,
      terminate: result?.terminate === true,
    };
  } catch (error) {
    return { content: [{ type: "text", text: errorText(error) }], details: null, isError: true };
  } finally {
    open.running.delete(toolCallId);
  }
}

/** pi's `ctx.hasUI`: whether a client that answers dialogs is attached now (pid says so
 * with each hook); without one, dialogs answer at once as pi's no-op ones do and
 * extensions see `hasUI` false, as in pi's print mode. What extensions show outside dialogs
 * (notices, statuses, widgets) goes to pid either way: clients that attach later see it. */
function withUI(open, _sessionId, hasUI) {
  if (hasUI !== undefined) open.hasUI = hasUI;
}

async function toolCall({ sessionId, toolCallId, toolName, input, hasUI }) {
  const open = session(sessionId);
  withUI(open, sessionId, hasUI);
  const event = { type: "tool_call", toolCallId, toolName, input };
  try {
    const result = await open.runner.emitToolCall(event);
    return { block: result?.block === true, reason: result?.reason ?? null, input: event.input };
  } catch (error) {
    // pi turns a throwing handler into a failed call.
    return { block: true, reason: errorText(error), input: event.input };
  }
}

async function toolResult({ sessionId, toolCallId, toolName, input, content, details, isError, hasUI }) {
  const open = session(sessionId);
  withUI(open, sessionId, hasUI);
  const result = await open.runner.emitToolResult({
    type: "tool_result",
    toolCallId,
    toolName,
    input,
    content,
    details: details ?? undefined,
    isError,
  });
  if (!result) return null;
  return {
    content: result.content ?? null,
    details: result.details ?? null,
    isError: result.isError ?? null,
  };
}

async function input({ sessionId, text, images, source, hasUI }) {
  const open = session(sessionId);
  withUI(open, sessionId, hasUI);
  const images_ = images?.length ? images : undefined;
  return open.runner.emitInput(text, images_, source ?? "rpc");
}

async function beforeAgentStart({ sessionId, prompt, images, systemPrompt, hasUI }) {
  const open = session(sessionId);
  withUI(open, sessionId, hasUI);
  const result = await open.runner.emitBeforeAgentStart(
    prompt,
    images?.length ? images : undefined,
    systemPrompt,
    { cwd: open.cwd },
  );
  open.state.systemPrompt = result?.systemPrompt ?? systemPrompt;
  return result ?? null;
}

/** pi's `session_before_compact`: the preparation's file operations as pi's sets; the
 * handlers' `signal` aborts when pid abandons the compaction (`compaction/abort`). */
async function beforeCompact({ sessionId, preparation, branchEntries, customInstructions, hasUI }) {
  const open = session(sessionId);
  withUI(open, sessionId, hasUI);
  const controller = new AbortController();
  open.compaction?.abort();
  open.compaction = controller;
  const fileOps = preparation.fileOps ?? {};
  try {
    const result = await open.runner.emit({
      type: "session_before_compact",
      preparation: {
        ...preparation,
        previousSummary: preparation.previousSummary ?? undefined,
        fileOps: {
          read: new Set(fileOps.read ?? []),
          written: new Set(fileOps.written ?? []),
          edited: new Set(fileOps.edited ?? []),
        },
      },
      branchEntries,
      customInstructions: customInstructions ?? undefined,
      signal: controller.signal,
    });
    return result ?? null;
  } finally {
    if (open.compaction === controller) open.compaction = null;
  }
}

/** pi's `after_provider_response`: awaited before the response's body is read. */
async function afterProviderResponse({ sessionId, status, headers, hasUI }) {
  const open = session(sessionId);
  withUI(open, sessionId, hasUI);
  await open.runner.emit({ type: "after_provider_response", status, headers: headers ?? {} });
  return null;
}

/** pi's `session_before_tree`: the handlers' `signal` aborts when pid abandons the move
 * (`tree/abort`). */
async function beforeTree({ sessionId, preparation, hasUI }) {
  const open = session(sessionId);
  withUI(open, sessionId, hasUI);
  const controller = new AbortController();
  open.tree_abort?.abort();
  open.tree_abort = controller;
  try {
    const result = await open.runner.emit({
      type: "session_before_tree",
      preparation: {
        ...preparation,
        customInstructions: preparation.customInstructions ?? undefined,
      },
      signal: controller.signal,
    });
    return result ?? null;
  } finally {
    if (open.tree_abort === controller) open.tree_abort = null;
  }
}

/** pi's `session_before_switch`: a client leaves the session (`new` or `resume`); pid's
 * sessions have no file, the other session's id comes as `targetSessionId`. */
async function beforeSwitch({ sessionId, reason, targetSessionId, hasUI }) {
  const open = session(sessionId);
  withUI(open, sessionId, hasUI);
  const result = await open.runner.emit({
    type: "session_before_switch",
    reason,
    targetSessionFile: undefined,
    targetSessionId: targetSessionId ?? undefined,
  });
  return result ?? null;
}

/** pi's `session_before_fork` (a fork from a user message: `position` "before"). */
async function beforeFork({ sessionId, entryId, hasUI }) {
  const open = session(sessionId);
  withUI(open, sessionId, hasUI);
  const result = await open.runner.emit({ type: "session_before_fork", entryId, position: "before" });
  return result ?? null;
}

/** pi's `user_bash`: a handler's `result` stands for the command's; one that gives
 * `operations` has the command run through them here (pi's remote shells: ssh, containers),
 * the output kept as pi keeps it (its tail). `null`: pid runs the command itself. */
async function userBash({ sessionId, command, excludeFromContext, cwd, hasUI }) {
  const open = session(sessionId);
  withUI(open, sessionId, hasUI);
  const answer = await open.runner.emitUserBash({ type: "user_bash", command, excludeFromContext, cwd });
  if (answer?.result) return { result: answer.result };
  if (!answer?.operations?.exec) return null;
  const chunks = [];
  const controller = new AbortController();
  open.bash = controller;
  try {
    const { exitCode } = await answer.operations.exec(command, cwd, {
      onData: (data) => chunks.push(Buffer.from(data)),
      signal: controller.signal,
    });
    const truncation = truncateTail(Buffer.concat(chunks).toString("utf8"));
    return {
      result: {
        output: truncation.content,
        exitCode: controller.signal.aborted ? undefined : (exitCode ?? undefined),
        cancelled: controller.signal.aborted,
        truncated: truncation.truncated,
      },
    };
  } finally {
    if (open.bash === controller) open.bash = null;
  }
}

function onAbortCompaction({ sessionId }) {
  sessions.get(sessionId)?.compaction?.abort();
}

async function context({ sessionId, messages, hasUI }) {
  const open = session(sessionId);
  withUI(open, sessionId, hasUI);
  return open.runner.emitContext(messages);
}

async function beforeProviderRequest({ sessionId, payload, hasUI }) {
  const open = session(sessionId);
  withUI(open, sessionId, hasUI);
  return (await open.runner.emitBeforeProviderRequest(payload)) ?? null;
}

async function command({ sessionId, name, args, hasUI }) {
  const open = session(sessionId);
  withUI(open, sessionId, hasUI);
  const found = open.runner.getCommand(name);
  if (!found) throw rpcError(-32602, `no extension of this session registers the command /${name}`);
  try {
    await found.handler(args ?? "", open.runner.createCommandContext());
    return { ran: true };
  } catch (error) {
    throw rpcError(-32000, `the command /${name} failed: ${errorText(error)}`);
  }
}

/** pid's event (pi's RPC shape) as pi's extension event: turn numbers, timestamps and the
 * run's messages are the host's to add, as pi's agent session does. */
function piEvent(open, event) {
  switch (event.type) {
    case "agent_start":
      open.turnIndex = 0;
      open.runMessages = [];
      return event;
    case "turn_start":
      return { ...event, turnIndex: open.turnIndex, timestamp: Date.now() };
    case "turn_end":
      return { ...event, turnIndex: open.turnIndex++ };
    case "message_end":
      open.runMessages?.push(event.message);
      return event;
    case "agent_end": {
      const messages = open.runMessages ?? [];
      open.runMessages = [];
      return { type: "agent_end", messages };
    }
    default:
      return event;
  }
}

function onEvent({ sessionId, event: received }) {
  const open = sessions.get(sessionId);
  if (!open) return;
  enter(open);
  const event = piEvent(open, received);
  if (event.type === "agent_start") open.state.idle = false;
  if (event.type === "agent_end") open.state.idle = true;
  emitInOrder(sessionId, open, event);
}

/** Runs the handlers of an observed event after those of the events before it, one at a
 * time, as pi's agent session awaits each. */
function emitInOrder(sessionId, open, event) {
  open.events = open.events
    .then(() => {
      enter(open);
      return open.runner.emit(event);
    })
    .catch((error) =>
      notify("extension/error", {
        sessionId,
        extensionPath: null,
        event: event.type,
        error: errorText(error),
      }),
    );
}

function onState({ sessionId, ...changes }) {
  const open = sessions.get(sessionId);
  if (!open) return;
  const previousLevel = open.state.thinkingLevel;
  Object.assign(open.state, changes);
  // pi's `thinking_level_select` when the level changed after the session started.
  if (
    changes.thinkingLevel !== undefined &&
    previousLevel !== undefined &&
    changes.thinkingLevel !== previousLevel &&
    open.runner.hasHandlers("thinking_level_select")
  ) {
    emitInOrder(sessionId, open, {
      type: "thinking_level_select",
      level: changes.thinkingLevel,
      previousLevel,
    });
  }
}

const requests = {
  initialize: async () => ({ piVersion: pi.VERSION, node: process.version }),
  discover,
  "session/open": openSession,
  "session/close": closeSession,
  "tool/execute": executeTool,
  tool_call: toolCall,
  tool_result: toolResult,
  input,
  before_agent_start: beforeAgentStart,
  context,
  before_provider_request: beforeProviderRequest,
  session_before_compact: beforeCompact,
  session_before_fork: beforeFork,
  session_before_tree: beforeTree,
  session_before_switch: beforeSwitch,
  after_provider_response: afterProviderResponse,
  user_bash: userBash,
  shortcut: runShortcut,
  command,
  packages,
  "provider/stream": providerStream,
};

function onEntry({ sessionId, entry }) {
  const open = sessions.get(sessionId);
  const manager = open?.sessionManager;
  if (!manager || !entry?.id || manager.byId.has(entry.id)) return;
  if (entry.parentId === null || entry.parentId === undefined) entry.parentId = manager.leafId;
  // A navigation's branch summary is stored just before the leaf moves onto it: the move
  // (`session_tree`) started from the leaf before it.
  if (entry.type === "branch_summary") open.tree = { from: manager.leafId, summary: entry };
  manager._appendEntry(entry);
}

/** The leaf moved (pid's navigation): the session manager follows, and extensions hear pi's
 * `session_tree` (`todo` rebuilds its list from the new branch). */
function onLeaf({ sessionId, leafId }) {
  const open = sessions.get(sessionId);
  const manager = open?.sessionManager;
  if (!manager) return;
  const oldLeafId = open.tree ? open.tree.from : manager.leafId;
  const summaryEntry = open.tree?.summary;
  open.tree = null;
  if (leafId === null || leafId === undefined) manager.resetLeaf();
  else if (manager.byId.has(leafId)) manager.branch(leafId);
  if (open.runner.hasHandlers("session_tree")) {
    emitInOrder(sessionId, open, {
      type: "session_tree",
      newLeafId: leafId ?? null,
      oldLeafId: oldLeafId ?? null,
      summaryEntry,
      fromExtension: summaryEntry?.fromHook === true,
    });
  }
}

const notifications = {
  event: onEvent,
  "session/state": onState,
  "session/entry": onEntry,
  "session/leaf": onLeaf,
  "compaction/abort": onAbortCompaction,
  "bash/abort": ({ sessionId }) => sessions.get(sessionId)?.bash?.abort(),
  "tree/abort": ({ sessionId }) => sessions.get(sessionId)?.tree_abort?.abort(),
  "provider/cancel": ({ streamId }) => streams.get(streamId)?.controller.abort(),
  "tool/cancel": ({ sessionId, toolCallId }) =>
    sessions.get(sessionId)?.running.get(toolCallId)?.abort(),
};

// --- the loop -------------------------------------------------------------------------------

async function answer(message) {
  const handler = requests[message.method];
  if (!handler) {
    send({ id: message.id, error: { code: -32601, message: `the host has no method ${message.method}` } });
    return;
  }
  try {
    const result = await handler(message.params ?? {});
    send({ id: message.id, result: result ?? null });
  } catch (error) {
    send({
      id: message.id,
      error: { code: typeof error?.code === "number" ? error.code : -32000, message: errorText(error) },
    });
  }
}

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
lines.on("line", (line) => {
  if (!line.trim()) return;
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    toLog(`host: skipped a line that is not JSON: ${line.slice(0, 200)}`);
    return;
  }
  if (message.method !== undefined && message.id !== undefined) {
    answer(message);
  } else if (message.method !== undefined) {
    try {
      notifications[message.method]?.(message.params ?? {});
    } catch (error) {
      toLog(`host: ${message.method}: ${errorText(error)}`);
    }
  } else if (message.id !== undefined) {
    const pending = waiting.get(message.id);
    waiting.delete(message.id);
    if (!pending) return;
    if (message.error) pending.reject(new Error(message.error.message));
    else pending.resolve(message.result);
  }
});
// pid went away: so does the host (and every extension with it).
lines.on("close", () => process.exit(0));
process.on("unhandledRejection", (error) => toLog(`host: unhandled rejection: ${errorText(error)}`));
process.on("uncaughtException", (error) => toLog(`host: uncaught exception: ${errorText(error)}`));
