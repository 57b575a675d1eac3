// One extraction pool lent to the services a capture bench starts (this tree's and the baseline's): the same
// analysis cost on either side, and closing a service leaves the pool to the bench, which closes it at the end.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { loadConfig } from '../src/config/config.js';
import { chooseFaceBackend } from '../src/extraction/node-face-backend.js';
import type { Extractor } from '../src/extraction/extractor.js';
import { createExtractor } from '../src/extraction/index.js';

const SCRIPTS = fileURLToPath(new URL('../scripts/', import.meta.url));

/** What a capture bench needs before its first capture: ffmpeg, Janus, Chromium and the media test's link, each
 * installed or started by the project's scripts. */
export async function ensureMediaTools(): Promise<void> {
  for (const script of ['ensure-ffmpeg.sh', 'ensure-janus.sh', 'ensure-chromium.sh'])
    await promisify(execFile)('bash', [`${SCRIPTS}${script}`]);
  await promisify(execFile)('bash', [`${SCRIPTS}media-net.sh`, 'ensure']);
}

/** A pool of `workers` on the backend the service would take (`auto`: native where installed, else wasm). */
export async function benchPool(workers: number): Promise<{ pool: Extractor; backend: 'wasm' | 'native' }> {
  const backend = chooseFaceBackend(loadConfig(process.env).BIMS_EXTRACTION_BACKEND).backend;
  return { pool: await createExtractor({ mode: 'worker-threads', size: workers, backend }), backend };
}

/** The media tools ensured, then the pool of `workers` with a `createExtractor` that lends it. */
export async function startBenchPool(
  workers: number,
): Promise<{ pool: Extractor; shared: () => Promise<Extractor>; backend: 'wasm' | 'native' }> {
  await ensureMediaTools();
  const { pool, backend } = await benchPool(workers);
  return { pool, shared: lentPool(pool), backend };
}

/** A `createExtractor` for a service that delegates every call to `pool` and does not close it. */
export function lentPool(pool: Extractor): () => Promise<Extractor> {
  return async () => ({
    get templateVersion() {
      return pool.templateVersion;
    },
    get voiceTemplateVersion() {
      return pool.voiceTemplateVersion;
    },
    analyseFace: (bytes, options) => pool.analyseFace(bytes, options),
    analyseVoice: (bytes, options) => pool.analyseVoice(bytes, options),
    renderTokenImage: (bytes, options) => pool.renderTokenImage(bytes, options),
    stats: () => pool.stats(),
    close: async () => {},
  });
}
