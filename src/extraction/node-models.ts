// Node-only: reads model files from wasm/models/ (the Node worker pool and tests use this loader).
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { ModelLoader } from './ort-web-runner.js';

/** Directory holding the fetched model files. */
export const MODELS_DIR = fileURLToPath(new URL('../../wasm/models/', import.meta.url));

/** Loader reading `dir/<file>` (default wasm/models/). */
export function nodeModelLoader(dir: string = MODELS_DIR): ModelLoader {
  return async (file) => new Uint8Array(await readFile(dir.endsWith('/') ? dir + file : `${dir}/${file}`));
}
