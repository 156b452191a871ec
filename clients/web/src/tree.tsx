// The session tree (`session/read {scope: "tree"}`): the current leaf marked, labels shown;
// navigate, fork, label.

import { useEffect, useState } from "preact/hooks";
import { app } from "./app";
import { textOf } from "./rows";
import { readEntries, type SessionController } from "./session";
import type { Entry } from "./types";

interface Node {
  entry: Entry;
  children: Node[];
}

function describe(entry: Entry): { role: string; text: string } {
  if (entry.type === "message" && entry.message) {
    const msg = entry.message;
    if (msg.role === "assistant") {
      const text = textOf(msg.content);
      const calls = Array.isArray(msg.content)
        ? msg.content.filter((b) => b.type === "toolCall").map((b) => (b as { name: string }).name)
        : [];
      return { role: "assistant", text: text || (calls.length ? `[${calls.join(", ")}]` : "") };
    }
    if (msg.role === "toolResult") return { role: "toolResult", text: `${msg.toolName ?? "tool"} result` };
    if (msg.role === "bashExecution") return { role: "bash", text: `$ ${msg.command ?? ""}` };
    return { role: msg.role, text: textOf(msg.content) || String(msg.summary ?? "") };
  }
  if (entry.type === "model_change") return { role: "model", text: `${entry.provider}/${entry.modelId}` };
  if (entry.type === "thinking_level_change") return { role: "thinking", text: String(entry.thinkingLevel) };
  if (entry.type === "compaction") return { role: "compaction", text: "compaction" };
  if (entry.type === "branch_summary") return { role: "branchSummary", text: String(entry.summary ?? "").slice(0, 80) };
  return { role: entry.type, text: String(entry.customType ?? "") };
}

export function TreePanel({ session }: { session: SessionController }) {
  const [entries, setEntries] = useState<Entry[] | undefined>();
  const [error, setError] = useState<string>();
  const [labeling, setLabeling] = useState<string>();
  const [labelText, setLabelText] = useState("");
  const [hideTools, setHideTools] = useState(true);
  const version = `${session.entryIds.size}:${session.leafId ?? ""}:${session.lastEntryId ?? ""}`;

  const load = async () => {
    const client = app.client;
    if (!client) return;
    try {
      const { entries: all } = await readEntries(client, session.id, "tree");
      setEntries(all);
      setError(undefined);
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    }
  };

  useEffect(() => {
    const timer = setTimeout(() => void load(), 150);
    return () => clearTimeout(timer);
  }, [session, version, app.client]);

  const labels = new Map<string, string>();
  const nodes = new Map<string, Node>();
  const roots: Node[] = [];
  const byId = new Map((entries ?? []).map((e) => [e.id, e]));
  for (const entry of entries ?? []) {
    if (entry.type === "label") {
      const target = String(entry.targetId);
      if (entry.label) labels.set(target, String(entry.label));
      else labels.delete(target);
      continue;
    }
    if (entry.type === "session_info") continue;
    nodes.set(entry.id, { entry, children: [] });
  }
  // Hidden entries (labels, names, tool results when hidden) pass their children up.
  const visibleParent = (id: string | null | undefined): Node | undefined => {
    let current = id ?? undefined;
    for (let guard = 0; current && guard < 100000; guard++) {
      const node = nodes.get(current);
      if (node && !(hideTools && isTool(node.entry))) return node;
      current = byId.get(current)?.parentId ?? undefined;
    }
    return undefined;
  };
  for (const node of nodes.values()) {
    if (hideTools && isTool(node.entry)) continue;
    const parent = visibleParent(node.entry.parentId);
    if (parent) parent.children.push(node);
    else roots.push(node);
  }
  const leaf = session.leafId ?? session.lastEntryId;
  // The path to the leaf, to mark the current branch.
  const onPath = new Set<string>();
  {
    let current = leaf ?? undefined;
    for (let guard = 0; current && guard < 100000; guard++) {
      onPath.add(current);
      current = byId.get(current)?.parentId ?? undefined;
    }
  }
  const leafShown = leaf && nodes.has(leaf) && !(hideTools && isTool(nodes.get(leaf)!.entry)) ? leaf : visibleParent(leaf)?.entry.id;

  const act = async (what: "navigate" | "fork", entry: Entry) => {
    const client = app.client;
    if (!client) return;
    if (what === "navigate") {
      const result = await app.call(() => client.call("session/navigate", { sessionId: session.id, entryId: entry.id }));
      if (result?.text) {
        app.composerPrefill = { sessionId: session.id, text: result.text };
        app.changed();
      }
      void load();
    } else {
      const result = await app.call(() => client.call("session/fork", { sessionId: session.id, entryId: entry.id }));
      if (result) {
        app.updateInfo(result.session as never);
        if (result.text) app.composerPrefill = { sessionId: result.session.id, text: result.text };
        app.go(`#/s/${encodeURIComponent(result.session.id)}`);
      }
    }
  };

  const saveLabel = async (entryId: string) => {
    const client = app.client;
    if (!client) return;
    await app.call(() => client.call("session/label", { sessionId: session.id, entryId, label: labelText.trim() || null }));
    setLabeling(undefined);
    void load();
  };

  // Flattened: a chain continues at the same depth; branch points indent their children.
  const rows: preact.JSX.Element[] = [];
  const walk = (node: Node, depth: number) => {
    const stack: [Node, number][] = [[node, depth]];
    while (stack.length) {
      const [current, d] = stack.pop()!;
      rows.push(renderNode(current, d));
      const kids = current.children;
      const childDepth = kids.length > 1 ? d + 1 : d;
      for (let i = kids.length - 1; i >= 0; i--) stack.push([kids[i]!, childDepth]);
    }
  };
  const renderNode = (node: Node, depth: number) => {
    const entry = node.entry;
    const { role, text } = describe(entry);
    const isLeaf = entry.id === leafShown;
    const label = labels.get(entry.id);
    const isUser = entry.type === "message" && entry.message?.role === "user";
    return (
      <div
        key={entry.id}
        class={`tree-node${isLeaf ? " current" : ""}${onPath.has(entry.id) ? " on-path" : ""}`}
        data-testid="tree-node"
        data-entry-id={entry.id}
        data-current={isLeaf ? "true" : undefined}
        style={{ paddingLeft: `${6 + Math.min(depth, 20) * 12}px` }}
      >
        <div class="tree-line">
          <span class={`tree-role role-${role}`}>{role}</span>
          <span class="ellipsis">{text.split("\n")[0]?.slice(0, 100)}</span>
          {label && <span class="tag label">{label}</span>}
          {isLeaf && <span class="tag">current</span>}
        </div>
        <div class="tree-actions">
          <button class="link small" data-testid="tree-navigate" onClick={() => void act("navigate", entry)}>
            navigate
          </button>
          {isUser && (
            <button class="link small" data-testid="tree-fork" onClick={() => void act("fork", entry)}>
              fork
            </button>
          )}
          <button
            class="link small"
            data-testid="tree-label"
            onClick={() => {
              setLabeling(labeling === entry.id ? undefined : entry.id);
              setLabelText(label ?? "");
            }}
          >
            label
          </button>
        </div>
        {labeling === entry.id && (
          <form
            class="tree-label-form"
            onSubmit={(e) => {
              e.preventDefault();
              void saveLabel(entry.id);
            }}
          >
            <input
              data-testid="tree-label-input"
              value={labelText}
              placeholder="label (empty clears)"
              onInput={(e) => setLabelText((e.target as HTMLInputElement).value)}
              autoFocus
            />
            <button type="submit" data-testid="tree-label-save">
              Save
            </button>
          </form>
        )}
      </div>
    );
  };
  for (const root of roots) walk(root, 0);

  return (
    <section class="panel tree-panel" data-testid="tree">
      <h2>
        Tree
        <label class="small muted">
          <input type="checkbox" checked={hideTools} onChange={() => setHideTools(!hideTools)} /> hide tool results
        </label>
      </h2>
      {error && <div class="error">{error}</div>}
      {!entries && !error && <div class="muted">Loading…</div>}
      <div class="tree-nodes">{rows}</div>
    </section>
  );
}

function isTool(entry: Entry): boolean {
  return entry.type === "message" && entry.message?.role === "toolResult";
}
