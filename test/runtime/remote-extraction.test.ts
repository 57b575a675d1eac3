// Delegated extraction: the real extraction service process (bims extraction-service) and the remote
// extractor give the analyses the local pool gives, bit for bit (embeddings included), and the same errors.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createExtractor } from '../../src/extraction/index.js';
import { createRemoteExtractor } from '../../src/extraction/remote.js';
import { chooseFaceBackend } from '../../src/extraction/node-face-backend.js';
import { type Extractor } from '../../src/extraction/extractor.js';
import { startExtractionService } from '../support/extraction-service.js';

const root = join(import.meta.dirname, '..', '..');
const TOKEN = 'extraction-service-token-for-the-tests-0123456789';
const speechDir = join(root, 'test', 'fixtures', 'speech', 'asterisk-en_US_f_Allison');
const voiceReady = existsSync(speechDir) && existsSync(join(root, 'wasm', 'models', 'resemblyzer_ge2e_fp16w.onnx'));

let service: Awaited<ReturnType<typeof startExtractionService>>;
let local: Extractor;
let remote: Extractor;

beforeAll(async () => {
  [service, local] = await Promise.all([
    startExtractionService(TOKEN),
    // The backend the service takes by default (BIMS_EXTRACTION_BACKEND=auto: native where installed), so that the
    // two run the same kernels and can agree bit for bit.
    createExtractor({ mode: 'worker-threads', size: 1, backend: chooseFaceBackend('auto').backend }),
  ]);
  remote = await createRemoteExtractor({ url: service.url, token: TOKEN });
}, 120_000);

afterAll(async () => {
  await remote?.close();
  await local?.close();
  expect(await service?.stop()).toBe(0);
});

/** An analysis without its stage timings, which differ from run to run. */
const withoutTimings = <T extends { timings?: unknown }>(analysis: T) => ({ ...analysis, timings: undefined });

describe('extraction delegated to the extraction service', () => {
  it('answers the same template versions and the same face analyses, embeddings bit-identical', async () => {
    expect(remote.templateVersion).toBe(local.templateVersion);
    expect(remote.voiceTemplateVersion).toBe(local.voiceTemplateVersion);
    const photo = new Uint8Array(
      readFileSync(join(root, 'test', 'fixtures', 'photos', 'labelled', 'cage', 'cage.jpg')),
    );
    const [there, here] = await Promise.all([
      remote.analyseFace(photo, { tokenImage: true }),
      local.analyseFace(photo, { tokenImage: true }),
    ]);
    expect(there.faces).toHaveLength(1);
    expect(there.faces[0]!.embedding).toBeInstanceOf(Float32Array);
    expect(there.tokenImage).toBeInstanceOf(Uint8Array);
    expect(withoutTimings(there)).toEqual(withoutTimings(here));
    expect(Buffer.from(there.faces[0]!.embedding.buffer).equals(Buffer.from(here.faces[0]!.embedding.buffer))).toBe(
      true,
    );
    expect(remote.stats()).toMatchObject({ kind: 'remote', completed: 1, failed: 0, busy: 0 });
    const token = await remote.renderTokenImage(photo, { landmarks: here.faces[0]!.landmarks });
    expect(Buffer.from(token).equals(Buffer.from(here.tokenImage!))).toBe(true);
  });

  it.skipIf(!voiceReady)('answers the same voice analyses', async () => {
    const wav = new Uint8Array(readFileSync(join(speechDir, readdirSync(speechDir).find((f) => f.endsWith('.wav'))!)));
    const [there, here] = await Promise.all([remote.analyseVoice(wav), local.analyseVoice(wav)]);
    expect(there.embedding).toBeInstanceOf(Float32Array);
    expect(withoutTimings(there)).toEqual(withoutTimings(here));
  });

  it('rethrows the service errors with their codes, and refuses a wrong token', async () => {
    await expect(remote.analyseFace(new TextEncoder().encode('GIF89a not really'))).rejects.toMatchObject({
      name: 'BiometricError',
      code: 'UNSUPPORTED_FORMAT',
    });
    await expect(createRemoteExtractor({ url: service.url, token: 'x'.repeat(40) })).rejects.toMatchObject({
      code: 'MODEL_UNAVAILABLE',
      message: expect.stringMatching(/Bearer token/),
    });
    await expect(createRemoteExtractor({ url: 'http://127.0.0.1:9', token: TOKEN })).rejects.toMatchObject({
      code: 'MODEL_UNAVAILABLE',
    });
  });
});
