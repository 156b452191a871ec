// One open session: its transcript (branch rows), the streaming message, tool states, presence,
// queue; fed by `session/read` and `session/event`s, following docs/protocol.md "Attach and
// replay": every event applied once, in `seq` order, nothing missed after a reconnect.

import { DaemonError, type DaemonClient } from "../../typescript/src/core";
import type {
  AttachedClient,
  SessionAttachResponse,
  SessionEventParams,
  SessionInfo,
  SessionStatsResponse,
  TodoList,
} from "../../typescript/src/generated/protocol";
import { Emitter } from "./store";
import type { Block, Entry, Msg, ToolCallBlock, ToolResultLike, ToolState } from "./types";

/** One tool call of an assistant message, with its own execution state: a call id may repeat
 * in a session (providers reuse them across turns), so results and live events belong to the
 * nearest preceding call with that id in branch order, never to every call sharing it. */
export interface CallSlot {
  row: Row;
  /** The index of the `toolCall` block in the message's content. */
  index: number;
  id: string;
  state?: ToolState;
}

export interface Row {
  key: string;
  role: string;
  entryId?: string;
  entry?: Entry;
  message?: Msg;
  /** A tool result shown inside its call (the row itself is a small marker). */
  inCall?: boolean;
  /** Local notices (errors, retries). */
  text?: string;
  /** The tool calls of an assistant message. */
  calls?: CallSlot[];
  /** Bumped when something the row shows (a tool's state) changes. */
  version: number;
}

type Event = SessionEventParams["event"];

let localRows = 0;

export class SessionController extends Emitter {
  info?: SessionInfo;
  rows: Row[] = [];
  readonly entryIds = new Set<string>();
  /** The latest call (in branch order) of each tool call id: where its result and live
   * events go. */
  private readonly latestCall = new Map<string, CallSlot>();
  /** Tool states from live events (or the attach snapshot) not yet superseded by a stored
   * result: they survive a rebuild of the rows and go to the latest call of their id. */
  private readonly liveTools = new Map<string, ToolState>();
  /** True while `readBranch` rebuilds the rows. */
  private rebuilding = false;
  streaming?: Msg;
  streamingVersion = 0;
  queue: { steering: string[]; followUp: string[] } = { steering: [], followUp: [] };
  clients: AttachedClient[] = [];
  todos?: TodoList;
  planMode = false;
  leafId?: string | null;
  lastEntryId?: string;
  retry?: { attempt: number; maxAttempts: number; delayMs: number; errorMessage: string };
  compacting?: string;
  waitingFor?: string[];
  stats?: SessionStatsResponse;
  loading = true;
  loadError?: string;
  attached = false;
  disposed = false;

  /** The last `seq` applied, the number applied and the duplicates refused. */
  lastApplied?: number;
  applied = 0;
  duplicates = 0;
  private buffer: SessionEventParams[] | null = null;
  private statsTimer?: ReturnType<typeof setTimeout>;

  constructor(
    readonly id: string,
    private readonly onInfo: (info: SessionInfo) => void,
  ) {
    super();
  }

  get status(): "idle" | "running" {
    return this.info?.status ?? "idle";
  }

  /** Every `session/event` of the connection goes here (for this session). */
  receive(event: SessionEventParams) {
    if (event.sessionId !== this.id || this.disposed) return;
    if (this.buffer) {
      this.buffer.push(event);
      return;
    }
    this.apply(event);
  }

  /** Attaches on a (new) connection: resumes after the last applied `seq` when there is one,
   * else loads the transcript fresh. */
  async attach(client: DaemonClient) {
    if (this.lastApplied === undefined) {
      await this.openFresh(client);
    } else {
      await this.resume(client);
    }
  }

  /** Attach without a cursor, then read the branch: live events after the snapshot wait
   * until the read is applied; entries both read and announced are kept once (by id). */
  private async openFresh(client: DaemonClient) {
    this.loading = true;
    this.changed();
    this.buffer = [];
    client.lastSeq.delete(this.id);
    try {
      const response = await client.attach(this.id);
      this.attached = true;
      this.lastApplied = response.snapshot.info.lastSeq;
      this.applied = 0;
      this.takeSnapshot(response, true);
      await this.readBranch(client);
      this.flush(Infinity);
      this.loadError = undefined;
    } catch (error) {
      this.buffer = null;
      this.loadError = message(error);
      throw error;
    } finally {
      this.loading = false;
      this.changed();
    }
    this.refreshStats(client);
  }

  private async resume(client: DaemonClient) {
    const after = this.lastApplied!;
    this.buffer = [];
    client.lastSeq.set(this.id, after);
    let response: SessionAttachResponse;
    try {
      response = await client.attach(this.id, after);
    } catch (error) {
      this.buffer = null;
      if (error instanceof DaemonError && error.data?.kind === "resync_required") {
        this.lastApplied = undefined;
        await this.openFresh(client);
        return;
      }
      throw error;
    }
    this.attached = true;
    const snapshotSeq = response.snapshot.info.lastSeq;
    // The replay (seq ≤ the snapshot's), then the snapshot's streaming state when the replay
    // had gaps, then the live events.
    this.flush(snapshotSeq);
    const gapless = response.gapless === true;
    this.takeSnapshot(response, !gapless);
    if (!gapless && (this.lastApplied ?? 0) < snapshotSeq) this.lastApplied = snapshotSeq;
    this.flush(Infinity);
    this.changed();
    this.refreshStats(client);
  }

  /** Applies buffered events up to `limit` (all with `Infinity`, which ends buffering). */
  private flush(limit: number) {
    const buffer = this.buffer ?? [];
    const rest: SessionEventParams[] = [];
    for (const event of buffer) {
      if (event.seq <= limit) this.apply(event);
      else rest.push(event);
    }
    if (limit === Infinity) {
      this.buffer = null;
    } else {
      this.buffer = rest;
    }
  }

  private takeSnapshot(response: SessionAttachResponse, streamingState: boolean) {
    const snapshot = response.snapshot;
    this.setInfo(snapshot.info as SessionInfo);
    this.queue = snapshot.queue;
    this.clients = snapshot.clients ?? [];
    if (streamingState) {
      // Drop the partial message and in-flight tools; take the snapshot's.
      this.streaming = snapshot.streamingMessage
        ? cloneMessage(snapshot.streamingMessage as unknown as Msg)
        : undefined;
      this.streamingVersion++;
      for (const [id, tool] of this.liveTools) {
        if (tool.done) continue;
        this.liveTools.delete(id);
        const slot = this.latestCall.get(id);
        if (slot && slot.state === tool) {
          slot.state = undefined;
          slot.row.version++;
        }
      }
      for (const running of snapshot.runningTools) {
        this.setLive(running.toolCallId, {
          toolCallId: running.toolCallId,
          toolName: running.toolName,
          args: running.args,
          result: (running.partialResult ?? undefined) as ToolResultLike | undefined,
          done: false,
        });
      }
    }
  }

  /** Reads the whole current branch and rebuilds the rows (keeping rows of events newer
   * than the read that are not in it). */
  async readBranch(client: DaemonClient) {
    const { entries, leafId } = await readEntries(client, this.id, "branch", () => this.disposed);
    const later = this.rows.filter((row) => !row.entryId);
    this.rows = [];
    this.entryIds.clear();
    this.latestCall.clear();
    this.lastEntryId = undefined;
    this.rebuilding = true;
    try {
      for (const entry of entries) this.addEntry(entry);
    } finally {
      this.rebuilding = false;
    }
    // Live tool states go to the latest call of their id, unless the branch read already
    // holds that call's stored result.
    for (const [id, tool] of this.liveTools) {
      const slot = this.latestCall.get(id);
      if (!slot) continue;
      if (slot.state) this.liveTools.delete(id);
      else slot.state = tool;
    }
    // Local notices of this view stay at the end.
    for (const row of later) if (row.role === "error" || row.role === "notice") this.rows.push(row);
    this.leafId = leafId;
    this.changed();
  }

  private apply(params: SessionEventParams) {
    if (this.lastApplied !== undefined && params.seq <= this.lastApplied) {
      this.duplicates++;
      return;
    }
    this.lastApplied = params.seq;
    this.applied++;
    this.applyEvent(params.event);
    this.changed();
  }

  private applyEvent(event: Event) {
    switch (event.type) {
      case "agent_start":
        this.setStatus("running");
        break;
      case "agent_end":
        this.setStatus("idle");
        this.retry = undefined;
        this.waitingFor = undefined;
        this.scheduleStats();
        break;
      case "message_start": {
        const msg = event.message as unknown as Msg;
        if (msg.role === "assistant") {
          this.streaming = cloneMessage(msg);
          this.streamingVersion++;
        }
        break;
      }
      case "message_update":
        this.applyDelta(event.assistantMessageEvent as unknown as Delta);
        break;
      case "message_end": {
        const msg = event.message as unknown as Msg;
        if (msg.role === "assistant") {
          this.streaming = undefined;
          this.streamingVersion++;
        }
        const entryId = event.entryId ?? undefined;
        if (entryId && this.entryIds.has(entryId)) break;
        if (entryId) {
          this.addEntry({ type: "message", id: entryId, parentId: this.lastEntryId, message: msg });
          // Every stored entry is appended at the leaf and becomes it.
          this.leafId = entryId;
        } else {
          this.addMessage(msg, `local-${++localRows}`);
        }
        break;
      }
      case "tool_execution_start":
        this.setLive(event.toolCallId, {
          toolCallId: event.toolCallId,
          toolName: event.toolName,
          args: event.args,
          done: false,
        });
        break;
      case "tool_execution_update": {
        const tool = this.liveTools.get(event.toolCallId);
        this.setLive(event.toolCallId, {
          toolCallId: event.toolCallId,
          toolName: event.toolName,
          args: event.args ?? tool?.args,
          result: event.partialResult as ToolResultLike,
          done: false,
        });
        break;
      }
      case "tool_execution_end": {
        const tool = this.liveTools.get(event.toolCallId);
        this.setLive(event.toolCallId, {
          toolCallId: event.toolCallId,
          toolName: event.toolName,
          args: tool?.args,
          result: event.result as ToolResultLike,
          isError: event.isError,
          done: true,
        });
        break;
      }
      case "queue_update":
        this.queue = { steering: event.steering, followUp: event.followUp };
        break;
      case "entry_added": {
        const entry = event.entry as unknown as Entry;
        if (!this.entryIds.has(entry.id)) this.addEntry(entry);
        this.leafId = entry.id;
        break;
      }
      case "leaf_changed":
        this.leafId = event.leafId;
        if ((event.leafId ?? undefined) !== this.lastEntryId) this.reloadSoon();
        break;
      case "session_updated":
        this.setInfo(event.info);
        break;
      case "todos_updated":
        this.todos = event.todos;
        break;
      case "plan_mode_changed":
        this.planMode = event.enabled;
        break;
      case "auto_retry_start":
        this.retry = {
          attempt: event.attempt,
          maxAttempts: event.maxAttempts,
          delayMs: event.delayMs,
          errorMessage: event.errorMessage,
        };
        this.notice(
          "notice",
          `Retrying (${event.attempt}/${event.maxAttempts}) in ${Math.round(event.delayMs / 100) / 10} s: ${event.errorMessage}`,
        );
        break;
      case "auto_retry_end":
        this.retry = undefined;
        if (!event.success) this.notice("error", `Retry failed: ${event.finalError ?? "unknown error"}`);
        break;
      case "tools_wait_start":
        this.waitingFor = event.sources;
        break;
      case "tools_wait_end":
        this.waitingFor = undefined;
        break;
      case "session_error":
        this.notice("error", event.message);
        break;
      case "compaction_start":
        this.compacting = event.reason;
        break;
      case "compaction_end":
        this.compacting = undefined;
        if (event.errorMessage) this.notice("error", event.errorMessage);
        break;
      default:
        break;
    }
  }

  private applyDelta(delta: Delta) {
    if (!this.streaming) this.streaming = { role: "assistant", content: [] };
    const content = (this.streaming.content ??= []) as Block[];
    const index = delta.contentIndex ?? 0;
    switch (delta.type) {
      case "text_start":
        content[index] = { type: "text", text: "" };
        break;
      case "text_delta": {
        const block = content[index];
        if (block?.type === "text") block.text += delta.delta ?? "";
        else content[index] = { type: "text", text: delta.delta ?? "" };
        break;
      }
      case "text_end":
        content[index] = { type: "text", text: delta.content ?? "" };
        break;
      case "thinking_start":
        content[index] = { type: "thinking", thinking: "" };
        break;
      case "thinking_delta": {
        const block = content[index];
        if (block?.type === "thinking") block.thinking += delta.delta ?? "";
        else content[index] = { type: "thinking", thinking: delta.delta ?? "" };
        break;
      }
      case "thinking_end":
        content[index] = { type: "thinking", thinking: delta.content ?? "", redacted: delta.redacted };
        break;
      case "toolcall_start":
        content[index] = {
          type: "toolCall",
          id: delta.id ?? "",
          name: delta.toolName ?? "",
          arguments: {},
          partialJson: "",
        };
        break;
      case "toolcall_delta": {
        const block = content[index] as ToolCallBlock | undefined;
        if (block?.type === "toolCall") {
          block.partialJson = (block.partialJson ?? "") + (delta.delta ?? "");
          if (delta.arguments) block.arguments = delta.arguments;
        }
        break;
      }
      case "toolcall_end":
        if (delta.toolCall) content[index] = { ...(delta.toolCall as ToolCallBlock), type: "toolCall" };
        break;
      default:
        break;
    }
    for (let i = 0; i < content.length; i++) if (!content[i]) content[i] = { type: "text", text: "" };
    this.streamingVersion++;
  }

  private addEntry(entry: Entry) {
    this.entryIds.add(entry.id);
    this.lastEntryId = entry.id;
    switch (entry.type) {
      case "message":
        if (entry.message) this.addMessage(entry.message, entry.id, entry);
        return;
      case "compaction":
        this.rows.push({ key: entry.id, role: "compaction", entryId: entry.id, entry, version: 0 });
        return;
      case "branch_summary":
        this.rows.push({ key: entry.id, role: "branchSummary", entryId: entry.id, entry, version: 0 });
        return;
      case "custom_message":
        if (entry.display === false) return;
        this.rows.push({ key: entry.id, role: "custom", entryId: entry.id, entry, version: 0 });
        return;
      case "model_change":
      case "thinking_level_change":
        this.rows.push({ key: entry.id, role: entry.type, entryId: entry.id, entry, version: 0 });
        return;
      case "custom":
        if (entry.customType === "approval") {
          this.rows.push({ key: entry.id, role: "approval", entryId: entry.id, entry, version: 0 });
        }
        return;
      default:
        return;
    }
  }

  /** The first user message's text shown, for a title before the daemon's info has one. */
  firstUserText(): string | undefined {
    for (const row of this.rows) {
      if (row.role !== "user" || !row.message) continue;
      const content = row.message.content as unknown;
      if (typeof content === "string") return content;
      if (Array.isArray(content)) {
        const text = content
          .map((block: { type?: string; text?: string }) => (block.type === "text" ? block.text ?? "" : ""))
          .join(" ")
          .trim();
        if (text) return text;
      }
    }
    return undefined;
  }

  private addMessage(msg: Msg, key: string, entry?: Entry) {
    const entryId = entry?.id;
    if (msg.role === "toolResult" && msg.toolCallId) {
      const id = msg.toolCallId;
      // The result of the nearest preceding call with this id.
      const slot = this.latestCall.get(id);
      // A live result is the latest call's; while rebuilding, an older call of a reused id
      // may come first (the live state is matched after the rebuild).
      const live = this.rebuilding ? undefined : this.liveTools.get(id);
      if (!this.rebuilding) this.liveTools.delete(id);
      // Shown inside the assistant message's call when there is one; the row stays, small.
      if (slot) {
        slot.state = {
          toolCallId: id,
          toolName: msg.toolName ?? "",
          args: live?.args,
          result: { content: msg.content as Block[], details: msg.details },
          isError: msg.isError,
          done: true,
        };
        slot.row.version++;
        this.rows.push({ key, role: "toolResult", entryId, entry, message: msg, version: 0, inCall: true });
        return;
      }
    }
    if (msg.role === "custom" && msg.display === false) return;
    const row: Row = { key, role: msg.role, entryId, entry, message: msg, version: 0 };
    if (msg.role === "assistant" && Array.isArray(msg.content)) {
      msg.content.forEach((block, index) => {
        if (block.type !== "toolCall") return;
        const slot: CallSlot = { row, index, id: block.id };
        (row.calls ??= []).push(slot);
        this.latestCall.set(block.id, slot);
      });
    }
    this.rows.push(row);
  }

  /** A tool state from a live event: the running call is the latest call with its id. */
  private setLive(id: string, state: ToolState) {
    this.liveTools.set(id, state);
    const slot = this.latestCall.get(id);
    if (slot) {
      slot.state = state;
      slot.row.version++;
    }
  }

  /** The arguments of a call of tool `name` waiting to run or running (the newest), for an
   * approval question about it; `hint` (a path or command named by the question) picks
   * among several. */
  pendingArgs(name: string, hint?: string): Record<string, unknown> | undefined {
    const found: Record<string, unknown>[] = [];
    for (const tool of this.liveTools.values()) {
      if (!tool.done && tool.toolName === name && tool.args && typeof tool.args === "object") {
        found.push(tool.args as Record<string, unknown>);
      }
    }
    if (!found.length) {
      // Not announced (yet): the newest calls of that name without a state.
      for (let i = this.rows.length - 1; i >= 0 && i >= this.rows.length - 30; i--) {
        const row = this.rows[i]!;
        const content = row.message?.content;
        if (!row.calls || !Array.isArray(content)) continue;
        for (const slot of row.calls) {
          const block = content[slot.index];
          if (!slot.state && block?.type === "toolCall" && block.name === name && block.arguments && typeof block.arguments === "object") {
            found.push(block.arguments as Record<string, unknown>);
          }
        }
        if (found.length) break;
      }
    }
    if (hint) {
      const match = found.filter((args) => Object.values(args).some((value) => typeof value === "string" && value.length > 0 && hint.includes(value.slice(0, 200))));
      if (match.length) return match[match.length - 1];
    }
    return found[found.length - 1];
  }

  private notice(role: "error" | "notice", text: string) {
    this.rows.push({ key: `local-${++localRows}`, role, text, version: 0 });
  }

  private setStatus(status: "idle" | "running") {
    if (this.info && this.info.status !== status) {
      this.info = { ...this.info, status };
      this.onInfo(this.info);
    }
  }

  private setInfo(info: SessionInfo) {
    this.info = info;
    this.onInfo(info);
  }

  // Reloads after the leaf moved elsewhere (navigation).
  private reloadTimer?: ReturnType<typeof setTimeout>;
  client?: DaemonClient;
  private reloadSoon() {
    clearTimeout(this.reloadTimer);
    this.reloadTimer = setTimeout(() => {
      if (this.client && !this.disposed) void this.readBranch(this.client).catch(() => {});
    }, 50);
  }

  private scheduleStats() {
    clearTimeout(this.statsTimer);
    this.statsTimer = setTimeout(() => {
      if (this.client) this.refreshStats(this.client);
    }, 300);
  }

  refreshStats(client: DaemonClient) {
    client
      .call("session/stats", { sessionId: this.id })
      .then((stats) => {
        this.stats = stats;
        this.changed();
      })
      .catch(() => {});
  }

  dispose() {
    this.disposed = true;
    clearTimeout(this.statsTimer);
    clearTimeout(this.reloadTimer);
  }
}

interface Delta {
  type: string;
  contentIndex?: number;
  delta?: string;
  content?: string;
  redacted?: boolean;
  id?: string;
  toolName?: string;
  arguments?: Record<string, unknown>;
  toolCall?: unknown;
}

function cloneMessage(msg: Msg): Msg {
  const content = Array.isArray(msg.content) ? msg.content.map((block) => ({ ...block })) : [];
  return { ...msg, content };
}

export function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Every entry of a session's branch or tree, page by page (`session/read`), and the leaf as
 * the first page saw it; `stop` ends the reading early. */
export async function readEntries(
  client: DaemonClient,
  sessionId: string,
  scope: "branch" | "tree",
  stop: () => boolean = () => false,
): Promise<{ entries: Entry[]; leafId: string | null | undefined }> {
  const entries: Entry[] = [];
  let cursor: string | undefined;
  let leafId: string | null | undefined;
  do {
    const page = await client.call("session/read", { sessionId, scope, limit: 1000, cursor: cursor ?? null });
    for (const record of page.entries) entries.push(record.entry as unknown as Entry);
    if (leafId === undefined) leafId = page.leafId;
    cursor = page.nextCursor ?? undefined;
  } while (cursor && !stop());
  return { entries, leafId };
}
