// An Extractor that answers from recordings of the real pipeline (recordings/), for the suites whose subject is
// the service around the models (HTTP, security, gateway), not the models: an analysis is made once per
// checkout and pipeline instead of once per suite, dialect and run. Not a stand-in: every answer it gives is
// the one the real pipeline gave for exactly these bytes and options (refusals included), and bytes it has not
// seen go to the real pipeline, whose answer is recorded, or are refused when it replays only.
import { createHash } from 'node:crypto';
import { BiometricError, isClientError } from '../../src/biometrics/errors.js';
import {
  cancelled,
  pipelineOptions,
  type ExtractOptions,
  type Extractor,
  type ExtractorStats,
  type TokenImageOptions,
  type VoiceExtractOptions,
} from '../../src/extraction/extractor.js';
import type { ImageAnalysis } from '../../src/biometrics/face/analysis.js';
import type { VoiceAnalysis } from '../../src/biometrics/voice/pipeline.js';
import { FACE_TEMPLATE_VERSION } from '../../src/extraction/ort-web-runner.js';
import { VOICE_TEMPLATE_VERSION } from '../../src/extraction/ort-voice-runner.js';
import { decodeValue, encodeValue } from '../../src/extraction/remote-codec.js';
import {
  canonicalJson,
  recordingKey,
  type RecordedKind,
  type RecordedOutcome,
  type Recording,
  type RecordingStore,
} from './recordings/recording-store.js';

/** Options of {@link createRecordedExtractor}. */
export interface RecordedExtractorOptions {
  /** The recordings of the current pipeline. */
  store: RecordingStore;
  /**
   * The real pipeline, asked for bytes with no recording (its answer is recorded). Absent: replay only, and
   * bytes never seen are refused with an error saying so.
   */
  real?: () => Promise<Extractor>;
}

/** How a recorded extractor answered so far: from recordings, or by running the real pipeline. */
export interface RecorderCounts {
  replayed: number;
  recorded: number;
}

/** Thrown in replay-only mode for bytes the real pipeline has never been asked about. */
export class NotRecordedError extends Error {
  override readonly name = 'NotRecordedError';
}

/**
 * An Extractor replaying the real pipeline's answers. The template versions are the real pipeline's (the
 * recordings are filed under its fingerprint). Refusals of the bytes (INVALID_IMAGE, IMAGE_TOO_LARGE ...) are
 * recorded and replayed; failures of the moment (a timeout, a crashed worker, a full queue) are passed on and
 * never recorded.
 */
export function createRecordedExtractor(options: RecordedExtractorOptions): Extractor & { counts: RecorderCounts } {
  const { store } = options;
  const counts: RecorderCounts = { replayed: 0, recorded: 0 };
  const st: ExtractorStats = { kind: 'inline', workers: 1, busy: 0, queued: 0, completed: 0, failed: 0, restarts: 0 };
  const known = new Map<string, Recording>();
  const recording = new Map<string, Promise<Recording>>();
  let closed = false;

  const record = async (
    kind: RecordedKind,
    key: string,
    bytes: Uint8Array,
    pipeline: unknown,
    call: (real: Extractor) => Promise<unknown>,
  ): Promise<Recording> => {
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    if (!options.real)
      throw new NotRecordedError(
        `no recording of a ${kind} analysis of bytes with SHA-256 ${sha256} and options ${canonicalJson(pipeline)} ` +
          `(pipeline ${store.fingerprint}): this run replays only (BIMS_TEST_EXTRACTOR=replay); ` +
          'run it with BIMS_TEST_EXTRACTOR unset to record the real answer',
      );
    let outcome: RecordedOutcome;
    try {
      outcome = { value: encodeValue(await call(await options.real())) };
    } catch (error) {
      if (!BiometricError.is(error) || !isClientError(error.code)) throw error;
      outcome = { error: { code: error.code, message: error.message } };
    }
    const made: Recording = { kind, sha256, options: pipeline, outcome };
    store.write(key, made);
    counts.recorded++;
    return made;
  };

  const answer = async <R>(
    kind: RecordedKind,
    bytes: Uint8Array,
    o: ExtractOptions | VoiceExtractOptions | TokenImageOptions,
    call: (real: Extractor) => Promise<unknown>,
  ): Promise<R> => {
    if (closed) throw new BiometricError('EXTRACTOR_CLOSED', 'extractor is closed');
    if (o.signal?.aborted) {
      st.failed++;
      throw cancelled();
    }
    const pipeline = pipelineOptions(o);
    const key = recordingKey(kind, pipeline, bytes);
    st.busy++;
    try {
      let found = known.get(key) ?? store.read(key);
      if (found) counts.replayed++;
      else {
        // Two callers asking about the same bytes at once share one run of the real pipeline.
        let pending = recording.get(key);
        if (!pending) {
          pending = record(kind, key, bytes, pipeline, call).finally(() => recording.delete(key));
          recording.set(key, pending);
        }
        found = await pending;
      }
      known.set(key, found);
      if ('error' in found.outcome)
        throw new BiometricError(found.outcome.error.code as BiometricError['code'], found.outcome.error.message);
      // Decoded afresh for every caller, so no caller shares (or can spoil) another's arrays.
      const value = decodeValue(found.outcome.value) as R;
      st.completed++;
      return value;
    } catch (error) {
      st.failed++;
      throw error;
    } finally {
      st.busy--;
    }
  };

  return {
    templateVersion: FACE_TEMPLATE_VERSION,
    voiceTemplateVersion: VOICE_TEMPLATE_VERSION,
    analyseFace: (bytes, o: ExtractOptions = {}) =>
      answer<ImageAnalysis>('face', bytes, o, (real) => real.analyseFace(bytes, o)),
    analyseVoice: (bytes, o: VoiceExtractOptions = {}) =>
      answer<VoiceAnalysis>('voice', bytes, o, (real) => real.analyseVoice(bytes, o)),
    renderTokenImage: (bytes, o) => answer<Uint8Array>('token', bytes, o, (real) => real.renderTokenImage(bytes, o)),
    stats: () => ({ ...st }),
    counts,
    async close() {
      closed = true;
      await Promise.allSettled(recording.values());
    },
  };
}
