// The options of the Node worker-thread pool (node-pool.ts), apart so the entries that only name them load no pool.
import type { ExtractorOptions } from './extractor.js';

/** Options of the worker-thread pool. */
export interface NodePoolOptions extends ExtractorOptions {
  /** Worker threads (default: available cores). */
  size?: number;
  /** Directory with the model files (default wasm/models/). */
  modelsDir?: string;
  /** Milliseconds allowed for a worker to load and warm its sessions (default 120000). */
  startTimeoutMs?: number;
  /**
   * The worker's entry module. Default: the tsx bootstrap when running from source, the compiled .js in a
   * build. Deno runs TypeScript itself, so its entry passes workers/face.worker.ts.
   */
  workerUrl?: URL;
  /**
   * A worker whose own memory (V8 heap and external memory, WebAssembly memories included) exceeds this many
   * bytes after a job is replaced by a fresh one (default: never). Decoders' WebAssembly memories grow to the
   * largest image seen and never shrink, so without this one large image keeps its memory for good.
   */
  maxWorkerMemoryBytes?: number;
  /**
   * What runs the face models in each worker: `wasm` (default) is onnxruntime-web, the portable path the browser
   * SDK, Deno and Workers share; `native` is onnxruntime-node (src/extraction/node-native-runner.ts) with the same
   * models, pre- and post-processing, so its templates match the wasm ones. The voice model stays on wasm.
   */
  backend?: 'wasm' | 'native';
  /**
   * Milliseconds the costliest image admitted may spend decoding before its worker is stopped and replaced
   * (`BIMS_EXTRACTION_DECODE_BUDGET_MS`, default 8000); an image's budget is in proportion to its estimated cost,
   * never below a quarter of this (node-pool-cost.ts).
   */
  decodeBudgetMs?: number;
  /**
   * Aborts the start: the workers still loading their models are stopped at once and the creation rejects with
   * EXTRACTOR_CLOSED. A service told to stop while its pool warms (seconds of CPU per worker) then exits at once
   * instead of finishing a warm-up nobody will use.
   */
  signal?: AbortSignal;
}
