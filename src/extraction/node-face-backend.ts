// Node-only: which backend a Node process's extraction pool runs the face models on, decided once at start-up
// from BIMS_EXTRACTION_BACKEND. `auto` (the default) takes onnxruntime-node where it is installed and loads on
// this host: the same models, pre- and post-processing and template version as the wasm path, at about half the
// CPU per face (docs/extraction.md), so a service that can have it should not need to be told. Where it is
// missing or cannot load, `auto` takes the portable wasm path and says why; an explicit `native` that cannot be
// had stops start-up instead, since the operator asked for it by name.
import { createRequire } from 'node:module';
import { nativeBackendMissing, nativeInstallCommand, resolveOrtNode } from './node-native-runner.js';

export type FaceBackend = 'wasm' | 'native';

/** What was chosen, and in words why (the start-up summary and the log print it). */
export interface FaceBackendChoice {
  backend: FaceBackend;
  why: string;
}

/** Where to look for onnxruntime-node (the tests point these at empty folders). */
export interface OrtNodePlaces {
  toolsDir?: string;
  besideBims?: string;
}

/**
 * The backend for `wanted`. `auto` loads onnxruntime-node once here, in the main thread, so that a binary built
 * for another host (a copied node_modules, another libc) is found out now rather than as every worker's failure
 * to start. @throws Error with the one-line reason when `native` is asked for and cannot be had
 */
export function chooseFaceBackend(
  wanted: 'auto' | FaceBackend,
  places: OrtNodePlaces = {},
  load: (path: string) => unknown = (path) => createRequire(import.meta.url)(path),
): FaceBackendChoice {
  if (wanted === 'wasm') return { backend: 'wasm', why: 'wasm backend (BIMS_EXTRACTION_BACKEND=wasm)' };
  const path = resolveOrtNode(places.toolsDir, places.besideBims);
  if (!path) {
    if (wanted === 'native') throw new Error(nativeBackendMissing(places.toolsDir, places.besideBims));
    return {
      backend: 'wasm',
      why: `wasm backend: onnxruntime-node is not installed (\`${nativeInstallCommand(places.toolsDir)}\` installs it: about half the CPU per face)`,
    };
  }
  try {
    load(path);
  } catch (error) {
    const reason = `onnxruntime-node (${path}) could not be loaded on this host (${(error as Error).message})`;
    if (wanted === 'native')
      throw new Error(`BIMS_EXTRACTION_BACKEND=native: ${reason}; use BIMS_EXTRACTION_BACKEND=wasm`);
    return { backend: 'wasm', why: `wasm backend: ${reason}` };
  }
  return { backend: 'native', why: 'native backend (onnxruntime-node)' };
}
