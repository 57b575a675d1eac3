// Which extractor a process's configuration asks for, decided in one place: the server entries (Node, Deno), the
// extraction service and the re-extraction command each built it themselves, and the command had drifted (it ignored
// BIMS_EXTRACTION_URL, BIMS_EXTRACTION_BACKEND and the pool's limits). No `node:` import: Deno's entry uses it too.
import { type Config, poolLimitsOf } from '../config/config.js';
import type { CreateExtractorOptions } from '../extraction/index.js';
import type { NodePoolOptions } from '../extraction/node-pool-options.js';

/**
 * This process's own worker pool as configured (size, backend, per-account queue, decode budget, memory cap).
 * `auto` is wasm here: a Node entry decides it (src/extraction/node-face-backend.ts, which needs Node) and passes
 * its choice as `overrides.backend`; Deno has only wasm.
 */
export function poolOptionsOf(config: Config, overrides: NodePoolOptions = {}): CreateExtractorOptions {
  return {
    mode: 'worker-threads',
    backend: config.BIMS_EXTRACTION_BACKEND === 'native' ? 'native' : 'wasm',
    ...poolLimitsOf(config),
    ...(config.BIMS_EXTRACTION_WORKERS > 0 ? { size: config.BIMS_EXTRACTION_WORKERS } : {}),
    ...overrides,
  };
}

/**
 * The extraction service BIMS_EXTRACTION_URL names when set (the configuration requires its token with it),
 * otherwise this process's own pool.
 */
export function extractorOptionsOf(config: Config, poolOverrides: NodePoolOptions = {}): CreateExtractorOptions {
  return config.BIMS_EXTRACTION_URL
    ? { mode: 'remote', url: config.BIMS_EXTRACTION_URL, token: config.BIMS_EXTRACTION_TOKEN! }
    : poolOptionsOf(config, poolOverrides);
}
