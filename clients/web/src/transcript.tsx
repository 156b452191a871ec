// The virtualized transcript: only the rows near the viewport are in the DOM. Heights are
// measured (a cache per row key), unmeasured rows use an estimate; rows above the viewport
// that change height move the scroll position by as much, so the view stays put; the view
// sticks to the bottom while streaming unless the user scrolled up.

import { useEffect, useLayoutEffect, useMemo, useRef, useState } from "preact/hooks";
import { app } from "./app";
import { RowView, StreamingView, textOf } from "./rows";
import type { Row, SessionController } from "./session";
import { taskScheduler, useEmitter } from "./store";

const OVERSCAN = 800;
const estimates = new WeakMap<Row, number>();

function estimate(row: Row): number {
  const hit = estimates.get(row);
  if (hit !== undefined) return hit;
  let height = 56;
  const msg = row.message;
  if (row.inCall) {
    height = 30;
  } else if (msg) {
    const text = textOf(msg.content);
    height = 48 + Math.ceil(text.length / 90) * 20 + (text.match(/\n/g)?.length ?? 0) * 6;
    if (Array.isArray(msg.content)) {
      for (const block of msg.content) if (block.type === "toolCall") height += 64;
    }
    if (msg.role === "toolResult" || msg.role === "bashExecution") height = 120;
  } else if (row.role === "model_change" || row.role === "thinking_level_change" || row.role === "approval") {
    height = 30;
  }
  height = Math.min(height, 1200);
  estimates.set(row, height);
  return height;
}

export function Transcript({ session }: { session: SessionController }) {
  useEmitter(session);
  const scroller = useRef<HTMLDivElement>(null);
  const list = useRef<HTMLDivElement>(null);
  const heights = useRef(new Map<string, number>());
  const offsetsBuffer = useRef(new Float64Array(0));
  const stick = useRef(true);
  const programmatic = useRef(-1);
  const [, setTick] = useState(0);
  const [range, setRange] = useState({ top: 0, height: 1000 });
  const rows = session.rows;

  // Offsets of every row (prefix sums over measured or estimated heights), in a buffer kept
  // across renders: a new 80 KB array per render of a 10,000-entry session is garbage that
  // the collector cleans up in the middle of a scroll.
  if (offsetsBuffer.current.length < rows.length + 1) {
    offsetsBuffer.current = new Float64Array(Math.max(1024, (rows.length + 1) * 2));
  }
  const offsets = offsetsBuffer.current;
  offsets[0] = 0;
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!;
    offsets[i + 1] = offsets[i]! + (heights.current.get(row.key) ?? estimate(row));
  }
  const total = offsets[rows.length]!;
  const count = rows.length + 1;
  const first = Math.max(0, upperBound(offsets, count, range.top - OVERSCAN) - 1);
  let last = upperBound(offsets, count, range.top + range.height + OVERSCAN);
  last = Math.min(rows.length, Math.max(last, first + 1));
  const padTop = offsets[first]!;
  const padBottom = total - offsets[last]!;
  const visible = rows.slice(first, last);

  const toBottom = () => {
    const el = scroller.current;
    if (!el) return;
    const target = el.scrollHeight - el.clientHeight;
    if (Math.abs(el.scrollTop - target) > 1) {
      programmatic.current = target;
      el.scrollTop = target;
    }
  };

  // Measures the rendered rows; corrects the scroll position for rows above the viewport.
  const measure = () => {
    const el = scroller.current;
    const inner = list.current;
    if (!el || !inner) return false;
    let delta = 0;
    let changed = false;
    const top = el.scrollTop;
    for (const child of Array.from(inner.children) as HTMLElement[]) {
      const key = child.dataset.key;
      if (!key) continue;
      const height = child.offsetHeight;
      const row = rowsByKey.get(key);
      const before = heights.current.get(key) ?? (row ? estimate(row) : height);
      if (height !== before) {
        if (child.offsetTop + height <= top) delta += height - before;
        changed = true;
      }
      heights.current.set(key, height);
    }
    if (stick.current) {
      toBottom();
    } else if (delta !== 0) {
      programmatic.current = el.scrollTop + delta;
      el.scrollTop += delta;
    }
    return changed;
  };

  const rowsByKey = useMemo(() => new Map<string, Row>(), [session]);
  for (const row of visible) rowsByKey.set(row.key, row);

  // After each render: measure, and re-render once when heights changed the paddings.
  useLayoutEffect(() => {
    if (measure()) setTick((n) => n + 1);
    else if (stick.current) toBottom();
  });

  // Height changes of rendered rows (a tool's output growing, a block opened), measured in
  // a task of its own after the frame, as the scroll handler's range is.
  useEffect(() => {
    const inner = list.current;
    if (!inner || typeof ResizeObserver === "undefined") return;
    const remeasure = taskScheduler(() => {
      if (measure()) setTick((n) => n + 1);
    });
    const observer = new ResizeObserver(remeasure.schedule);
    for (const child of Array.from(inner.children)) observer.observe(child);
    // Rows entering are observed, rows leaving no longer (the others stay as they are).
    const mutations = new MutationObserver((records) => {
      for (const record of records) {
        record.addedNodes.forEach((node) => {
          if (node instanceof Element) observer.observe(node);
        });
        record.removedNodes.forEach((node) => {
          if (node instanceof Element) observer.unobserve(node);
        });
      }
    });
    mutations.observe(inner, { childList: true });
    return () => {
      observer.disconnect();
      mutations.disconnect();
      remeasure.close();
    };
  }, [session]);

  // The viewport, on scroll and resize (re-rendering only when the visible range changes).
  useEffect(() => {
    const el = scroller.current;
    if (!el) return;
    const update = () => {
      const top = el.scrollTop;
      const height = el.clientHeight;
      setRange((old) => {
        // Re-render when the window moved by a fraction of the overscan.
        if (Math.abs(old.top - top) < OVERSCAN / 4 && old.height === height) return old;
        return { top, height };
      });
    };
    // The range follows in a task of its own, after the frame that scrolled: rendering the
    // rows that enter (markdown, their layout) does not lengthen that frame, and the
    // overscan keeps them ready before they show.
    const follow = taskScheduler(update);
    const onScroll = () => {
      if (programmatic.current >= 0 && Math.abs(el.scrollTop - programmatic.current) < 2) {
        programmatic.current = -1;
      } else {
        programmatic.current = -1;
        stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
      }
      follow.schedule();
    };
    const onWheel = (event: WheelEvent) => {
      if (event.deltaY < 0) stick.current = false;
    };
    el.addEventListener("scroll", onScroll, { passive: true });
    el.addEventListener("wheel", onWheel, { passive: true });
    const resize = typeof ResizeObserver !== "undefined" ? new ResizeObserver(update) : undefined;
    resize?.observe(el);
    update();
    return () => {
      el.removeEventListener("scroll", onScroll);
      el.removeEventListener("wheel", onWheel);
      resize?.disconnect();
      follow.close();
    };
  }, [session]);

  return (
    <div class="transcript" data-testid="transcript" ref={scroller}>
      {session.loading && !rows.length && <div class="muted pad">Loading…</div>}
      {session.loadError && <div class="error pad">{session.loadError}</div>}
      <div class="vlist" ref={list} style={{ paddingTop: `${padTop}px`, paddingBottom: `${padBottom}px` }}>
        {visible.map((row) => (
          <div class="vrow" key={row.key} data-key={row.key}>
            <RowView row={row} session={session} version={row.version} />
          </div>
        ))}
      </div>
      <StreamingView session={session} />
      <LiveStatus session={session} />
      {!stick.current && (
        <button
          class="to-bottom"
          onClick={() => {
            stick.current = true;
            toBottom();
            setTick((n) => n + 1);
          }}
        >
          ↓ Latest
        </button>
      )}
    </div>
  );
}

function LiveStatus({ session }: { session: SessionController }) {
  if (app.state !== "connected" && session.status === "running") {
    return <div class="live-status warning">Not connected: the run's progress shows once the connection is back.</div>;
  }
  const parts: string[] = [];
  if (session.compacting) parts.push(`Compacting (${session.compacting})…`);
  if (session.retry) parts.push(`Retry ${session.retry.attempt}/${session.retry.maxAttempts}: ${session.retry.errorMessage}`);
  if (session.waitingFor?.length) parts.push(`Waiting for MCP servers: ${session.waitingFor.join(", ")}`);
  const questions = app.uiRequests.filter((r) => r.sessionId === session.id).length;
  if (questions) parts.push(questions === 1 ? "Waiting for your answer to a question" : `Waiting for your answers to ${questions} questions`);
  if (session.status === "running" && !session.streaming && !parts.length) parts.push("Working…");
  if (!parts.length) return null;
  return <div class="live-status">{parts.join(" · ")}</div>;
}

/** The first index below `count` whose offset is greater than `value`. */
function upperBound(offsets: Float64Array, count: number, value: number): number {
  let lo = 0;
  let hi = count;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (offsets[mid]! <= value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
