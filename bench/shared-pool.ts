// One extraction pool lent to the services a capture bench starts (this tree's and the baseline's): the same
// analysis cost on either side, and closing a service leaves the pool to the bench, which closes it at the end.
import type { Extractor } from '../src/extraction/extractor.js';

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
