// Loads the renderer (assets/render.js, src/render.ts) once; until it is there, text is shown
// plain and everything is drawn again when it arrives.

import type * as Render from "./render";
import { Emitter } from "./store";

let loaded: typeof Render | undefined;
let loading: Promise<void> | undefined;

/** Fires once the renderer has loaded. */
export const rendererLoaded = new Emitter();

/** The renderer, or `undefined` while it loads (the load starts on the first call). */
export function renderer(): typeof Render | undefined {
  if (!loaded && !loading) {
    // A path relative to this module: /s/LOGIN/assets/render.js.
    const url = new URL("./render.js", import.meta.url).href;
    loading = (import(url) as Promise<typeof Render>).then(
      (module) => {
        loaded = module;
        rendererLoaded.changed();
      },
      () => {
        // Retried on the next call.
        loading = undefined;
      },
    );
  }
  return loaded;
}
