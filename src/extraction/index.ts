/**
 * Extraction entry points. Runtime entries pick the implementation: Node uses
 * `createExtractor({ mode: 'worker-threads' })` (imports the pool lazily, so this module stays free of
 * `node:` imports); Deno and Cloudflare Workers use `mode: 'inline'` with a `loadModel` of their own; any of
 * them uses `mode: 'remote'` when the deployment delegates extraction to a Node extraction service.
 */
import type { Extractor } from './extractor.js';
import type { InlineExtractorOptions } from './inline.js';
import type { NodePoolOptions } from './node-pool-options.js';
import type { RemoteExtractorOptions } from './remote.js';

/** Options of `createExtractor`. */
export type CreateExtractorOptions =
  | ({ mode: 'worker-threads' } & NodePoolOptions)
  | ({ mode: 'inline' } & InlineExtractorOptions)
  | ({ mode: 'remote' } & RemoteExtractorOptions);

/**
 * Creates a warmed extractor.
 * @example
 * const ex = await createExtractor({ mode: 'worker-threads', size: 2 });               // Node
 * const ex = await createExtractor({ mode: 'inline', loadModel: (f) => fetchBytes(f) }); // Deno, Workers
 */
export async function createExtractor(opts: CreateExtractorOptions): Promise<Extractor> {
  if (opts.mode === 'inline') {
    const { createInlineExtractor } = await import('./inline.js');
    return createInlineExtractor(opts);
  }
  if (opts.mode === 'remote') {
    const { createRemoteExtractor } = await import('./remote.js');
    return createRemoteExtractor(opts);
  }
  const { createNodePoolExtractor } = await import('./node-pool.js');
  return createNodePoolExtractor(opts);
}
