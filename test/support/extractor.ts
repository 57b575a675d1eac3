import { createExtractor, type Extractor } from '../../src/extraction/index.js';

let shared: Promise<Extractor> | undefined;

/**
 * One warmed single-worker extraction pool per test file, shared by every app the file boots (warming
 * costs a couple of seconds). Apps get a handle whose close() leaves the pool running; the file's afterAll
 * calls {@link closeSharedExtractor}.
 */
export function sharedExtractorFactory(): () => Promise<Extractor> {
  return async () => {
    shared ??= createExtractor({ mode: 'worker-threads', size: 1 });
    const pool = await shared;
    return {
      get templateVersion() {
        return pool.templateVersion;
      },
      analyseFace: (bytes, options) => pool.analyseFace(bytes, options),
      get voiceTemplateVersion() {
        return pool.voiceTemplateVersion;
      },
      analyseVoice: (bytes, options) => pool.analyseVoice(bytes, options),
      renderTokenImage: (bytes, options) => pool.renderTokenImage(bytes, options),
      stats: () => pool.stats(),
      close: async () => {},
    };
  };
}

export async function closeSharedExtractor(): Promise<void> {
  const pool = shared;
  shared = undefined;
  if (pool) await (await pool).close();
}
