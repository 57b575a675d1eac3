// Shared set-up of the photo tests: one warmed onnxruntime-web runner per test file, photo paths.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { OrtWebRunner } from '../../src/extraction/ort-web-runner.js';
import { enableFastJpegNode, nodeModelLoader } from '../../src/extraction/node-models.js';
import type { FaceModelId, ModelRunner } from '../../src/biometrics/face/runner.js';

export const PHOTOS = fileURLToPath(new URL('../fixtures/photos/', import.meta.url));

/** Reads a photo under test/fixtures/photos/; fails with the fetch command when photos are missing. */
export function photo(rel: string): Uint8Array {
  const p = PHOTOS + rel;
  if (!existsSync(p)) throw new Error(`missing ${p}: run \`node scripts/fetch-test-photos.mjs\``);
  return new Uint8Array(readFileSync(p));
}

let runner: Promise<OrtWebRunner> | undefined;
/** A warmed runner with every face model (shared within one test file). */
export function getRunner(): Promise<OrtWebRunner> {
  runner ??= enableFastJpegNode().then(() => OrtWebRunner.create({ loadModel: nodeModelLoader() }));
  return runner;
}

/** `runner`, with every model run it is asked for listed in `ran` (which models an analysis ran, in order). */
export function countingRunner(runner: ModelRunner): { runner: ModelRunner; ran: FaceModelId[] } {
  const ran: FaceModelId[] = [];
  return {
    runner: {
      run: (id, input, dims) => {
        ran.push(id);
        return runner.run(id, input, dims);
      },
      release: async () => {},
    },
    ran,
  };
}
