import { BiometricError } from '../biometrics/errors.js';
import { analyseImage } from '../biometrics/face/pipeline.js';
import { renderTokenImage } from '../biometrics/face/token-image.js';
import { configureJpegDecoder } from '../biometrics/image/decode.js';
import { analyseVoice } from '../biometrics/voice/pipeline.js';
import {
  cancelled,
  type ExtractOptions,
  type Extractor,
  type ExtractorOptions,
  type ExtractorStats,
  type TokenImageOptions,
  type VoiceExtractOptions,
} from './extractor.js';
import { FACE_TEMPLATE_VERSION, OrtWebRunner, type OrtWebOptions } from './ort-web-runner.js';
import { OrtVoiceRunner, VOICE_TEMPLATE_VERSION } from './ort-voice-runner.js';
import type { ImageAnalysis } from '../biometrics/face/analysis.js';

/** Options of the inline extractor. */
export interface InlineExtractorOptions extends ExtractorOptions, OrtWebOptions {
  /**
   * Compiled `@jsquash/jpeg/codec/dec/mozjpeg_dec.wasm` for fast JPEG decoding; without it the pure JS
   * decoder (jpeg-js) is used. Node callers can use `enableFastJpegNode()` from node-models instead.
   */
  jpegWasm?: WebAssembly.Module;
  /** Load the speaker encoder too (default true). Without its file, voice jobs fail with MODEL_UNAVAILABLE. */
  voice?: boolean;
}

/**
 * Extractor running on the calling thread (Deno, Cloudflare Workers, browsers, tests). Jobs run one at a
 * time in arrival order. A timeout rejects the caller's promise, but the running inference cannot be
 * interrupted: it completes in the background before the next job starts.
 */
export async function createInlineExtractor(opts: InlineExtractorOptions): Promise<Extractor> {
  if (opts.jpegWasm) configureJpegDecoder(opts.jpegWasm);
  const runner = await OrtWebRunner.create(opts);
  // Optional, as in the worker pool: a missing voice model fails voice jobs only.
  const voice =
    opts.voice === false
      ? new BiometricError('MODEL_UNAVAILABLE', 'this extractor was created without the voice model')
      : await OrtVoiceRunner.create({ loadModel: opts.loadModel, verify: opts.verify, warm: opts.warm }).catch(
          (e: unknown) => e as Error,
        );
  const maxQueue = opts.maxQueue ?? 64;
  const defaultTimeout = opts.jobTimeoutMs ?? 30_000;
  let chain: Promise<unknown> = Promise.resolve();
  let closed = false;
  const st: ExtractorStats = { kind: 'inline', workers: 1, busy: 0, queued: 0, completed: 0, failed: 0, restarts: 0 };

  /** Runs jobs one at a time in arrival order, with the queue limit and the per-job timeout. */
  const enqueue = <R>(work: () => Promise<R>, timeoutMs?: number, signal?: AbortSignal): Promise<R> => {
    if (closed) return Promise.reject(new BiometricError('EXTRACTOR_CLOSED', 'extractor is closed'));
    if (signal?.aborted) return Promise.reject(cancelled());
    if (st.queued >= maxQueue)
      return Promise.reject(new BiometricError('EXTRACTOR_BUSY', `extraction queue full (${maxQueue})`));
    st.queued++;
    const job = chain.then(async () => {
      st.queued--;
      if (closed) throw new BiometricError('EXTRACTOR_CLOSED', 'extractor is closed');
      // The caller went away while the job waited: do not start it.
      if (signal?.aborted) throw cancelled();
      st.busy++;
      try {
        return await work();
      } finally {
        st.busy--;
      }
    });
    chain = job.catch(() => undefined);
    const timeout = timeoutMs ?? defaultTimeout;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timed = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new BiometricError('EXTRACTION_TIMEOUT', `extraction took longer than ${timeout} ms`)),
        timeout,
      );
    });
    return Promise.race([job, timed]).then(
      (r) => {
        clearTimeout(timer);
        st.completed++;
        return r;
      },
      (e) => {
        clearTimeout(timer);
        st.failed++;
        throw e;
      },
    );
  };

  return {
    templateVersion: FACE_TEMPLATE_VERSION,
    analyseFace: (bytes: Uint8Array, o: ExtractOptions = {}): Promise<ImageAnalysis> =>
      enqueue(() => analyseImage(runner, bytes, o), o.timeoutMs, o.signal),
    voiceTemplateVersion: VOICE_TEMPLATE_VERSION,
    analyseVoice: (bytes: Uint8Array, o: VoiceExtractOptions = {}) =>
      enqueue(
        () => (voice instanceof Error ? Promise.reject(voice) : analyseVoice(voice, bytes, o)),
        o.timeoutMs,
        o.signal,
      ),
    renderTokenImage: (bytes: Uint8Array, o: TokenImageOptions) =>
      enqueue(() => renderTokenImage(bytes, o.landmarks), o.timeoutMs, o.signal),
    stats: () => ({ ...st }),
    async close() {
      if (closed) return;
      closed = true;
      await chain;
      await runner.release();
      if (!(voice instanceof Error)) await voice.release();
    },
  };
}
