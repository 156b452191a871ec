// A tiny observable store: components subscribe and re-render on change, batched per frame.

import { useEffect, useReducer } from "preact/hooks";

type Listener = () => void;

export class Emitter {
  private listeners = new Set<Listener>();
  private scheduled = false;
  version = 0;

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Marks a change; listeners run once at the next animation frame. */
  changed() {
    this.version++;
    if (this.scheduled) return;
    this.scheduled = true;
    const run = () => {
      this.scheduled = false;
      for (const listener of [...this.listeners]) listener();
    };
    if (typeof requestAnimationFrame === "function" && !document.hidden) {
      requestAnimationFrame(run);
    } else {
      setTimeout(run, 16);
    }
  }
}

/** Re-renders the component whenever `emitter` changes. */
export function useEmitter(emitter: Emitter | undefined): number {
  const [, force] = useReducer((n: number, _action: void) => n + 1, 0);
  useEffect(() => (emitter ? emitter.subscribe(() => force()) : undefined), [emitter]);
  return emitter?.version ?? 0;
}

/** A task that runs `run` once, soon, however often `schedule` is called before it does: in a
 * task of its own (a `MessageChannel`), so work asked for during a frame (a scroll, a
 * resize) runs after that frame rather than lengthening it. `close` when done with it. */
export function taskScheduler(run: () => void): { schedule: () => void; close: () => void } {
  let queued = false;
  const channel = new MessageChannel();
  channel.port1.onmessage = () => {
    queued = false;
    run();
  };
  return {
    schedule: () => {
      if (queued) return;
      queued = true;
      channel.port2.postMessage(null);
    },
    close: () => channel.port1.close(),
  };
}
