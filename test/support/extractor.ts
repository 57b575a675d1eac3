import { createExtractor } from '../../src/extraction/index.js';
import { chooseFaceBackend } from '../../src/extraction/node-face-backend.js';
import { type Extractor } from '../../src/extraction/extractor.js';
import { createRecordedExtractor } from './recorded-extractor.js';
import { pipelineFingerprint } from './recordings/pipeline-fingerprint.js';
import { RecordingStore } from './recordings/recording-store.js';
import { testSettings } from './test-settings.js';

let pool: Promise<Extractor> | undefined;
let recordingPool: Promise<Extractor> | undefined;
let recorded: Extractor | undefined;
let store: RecordingStore | undefined;

/**
 * One warmed single-worker pool per file (warming costs a couple of seconds), made when first needed, on the
 * backend a Node service takes by default (BIMS_EXTRACTION_BACKEND=auto: onnxruntime-node where installed, as
 * `npm install` does): the suites that run the service with its real models run what a user's service runs.
 * The wasm path has suites of its own (test/biometrics, Deno, Workers, the browser SDK).
 */
const sharedPool = () => {
  pool ??= createExtractor({ mode: 'worker-threads', size: 1, backend: chooseFaceBackend('auto').backend });
  return pool;
};

/**
 * The pool that makes recordings, also one per file and only when a file meets bytes not yet recorded. Its jobs
 * may take two minutes rather than the service's 30 s: what it answers is kept for every later run, and a
 * first run on a busy machine must not fail for a timeout that no suite using it is about (the pool's own
 * suites, test/biometrics, test the timeout).
 */
const sharedRecordingPool = () => {
  recordingPool ??= createExtractor({ mode: 'worker-threads', size: 1, jobTimeoutMs: 120_000 });
  return recordingPool;
};

/** The recordings of the pipeline as it is in this checkout (the fingerprint is computed once per process). */
export function sharedRecordingStore(): RecordingStore {
  store ??= new RecordingStore(pipelineFingerprint());
  return store;
}

/** A handle on `extractor` whose close() leaves it running: the file's afterAll closes it (closeSharedExtractor). */
const handleOn = (extractor: Extractor): Extractor => ({
  get templateVersion() {
    return extractor.templateVersion;
  },
  analyseFace: (bytes, options) => extractor.analyseFace(bytes, options),
  get voiceTemplateVersion() {
    return extractor.voiceTemplateVersion;
  },
  analyseVoice: (bytes, options) => extractor.analyseVoice(bytes, options),
  renderTokenImage: (bytes, options) => extractor.renderTokenImage(bytes, options),
  stats: () => extractor.stats(),
  close: async () => {},
});

/**
 * The extractor of the suites about the service around the models (HTTP, security, gateway): the real
 * pipeline's answers replayed from recordings (recorded-extractor.ts), the real pool run only for bytes not
 * yet recorded. BIMS_TEST_EXTRACTOR chooses: unset, replay and record; `replay`, replay only (unseen bytes
 * fail); `real`, the real pool for every call, as {@link realExtractorFactory}. Every app a file boots shares
 * it; the file's afterAll calls {@link closeSharedExtractor}.
 */
export function sharedExtractorFactory(): () => Promise<Extractor> {
  const mode = testSettings().BIMS_TEST_EXTRACTOR ?? 'recorded';
  if (mode === 'real') return realExtractorFactory();
  return async () => {
    recorded ??= createRecordedExtractor({
      store: sharedRecordingStore(),
      real: mode === 'replay' ? undefined : sharedRecordingPool,
    });
    return handleOn(recorded);
  };
}

/**
 * The real worker pool (one warmed worker), for the suites whose subject is the pool and the models behind the
 * service: enrol-verify-identify end to end, live capture from a browser (frames that differ every run),
 * hostile files that must reach the decoder and be stopped where they run.
 */
export function realExtractorFactory(): () => Promise<Extractor> {
  return async () => handleOn(await sharedPool());
}

/** Closes what the file's apps shared: the recorder (once its recordings are written) and the pools, if started. */
export async function closeSharedExtractor(): Promise<void> {
  const closing = recorded;
  recorded = undefined;
  await closing?.close();
  const started = [pool, recordingPool];
  pool = undefined;
  recordingPool = undefined;
  for (const extractor of started) if (extractor) await (await extractor).close();
}
