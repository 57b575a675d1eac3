import type { AnalyseOptions, ImageAnalysis } from '../biometrics/face/analysis.js';
import type { VoiceAnalyseOptions, VoiceAnalysis } from '../biometrics/voice/pipeline.js';
import { BiometricError } from '../biometrics/errors.js';

/**
 * Who a job is for and how long it is wanted: the pool serves callers' queues in turn and drops a job whose
 * caller went away before it started. Neither crosses into the worker.
 */
export interface JobAdmission {
  /** Per-job timeout in milliseconds (default: the extractor's `jobTimeoutMs`). */
  timeoutMs?: number;
  /** The caller (an account) the job is queued under; callers without one share the queue `''`. */
  owner?: string;
  /** Aborted when the caller is gone (its client disconnected): a job still waiting is dropped, EXTRACTION_CANCELLED. */
  signal?: AbortSignal;
}

/** Options of one `analyseVoice` call. */
export interface VoiceExtractOptions extends VoiceAnalyseOptions, JobAdmission {}

/** Options of one `analyseFace` call. */
export interface ExtractOptions extends AnalyseOptions, JobAdmission {}

/** Options of one `renderTokenImage` call. */
export interface TokenImageOptions extends JobAdmission {
  /** The 68 landmarks of the face, in pixels of the upright image (as `FaceAnalysis.landmarks`). */
  landmarks: [number, number][];
}

/** The options the pipeline itself reads: what remains once the queue's own fields are taken off. */
export function pipelineOptions<T extends JobAdmission>(o: T): Omit<T, keyof JobAdmission> {
  const { timeoutMs: _t, owner: _o, signal: _s, ...rest } = o;
  return rest;
}

/** The error of a job dropped because its caller went away. */
export const cancelled = () =>
  new BiometricError('EXTRACTION_CANCELLED', 'the caller went away before the extraction started');

/** Live state of an extractor (for management info). */
export interface ExtractorStats {
  kind: 'worker-threads' | 'inline' | 'remote';
  /** Workers (or 1 for inline; the service's workers for remote). */
  workers: number;
  /** Jobs running now. */
  busy: number;
  /** Jobs waiting. */
  queued: number;
  /** Jobs finished successfully / failed since start. */
  completed: number;
  failed: number;
  /** Workers replaced after a crash or a timeout. */
  restarts: number;
  /** Workers replaced after a job because they had grown past the memory bound (worker pool only). */
  recycled?: number;
  /** Jobs dropped before they started because their caller went away. */
  cancelled?: number;
  /** Jobs whose decode ran past its budget: their worker was stopped where it ran and replaced (worker pool). */
  overBudget?: number;
  /** Jobs past their timeout: their worker was stopped and replaced (worker pool). */
  timedOut?: number;
}

/**
 * Face extraction behind one interface, whatever runs it (a pool of Node worker threads, or inline on the
 * calling thread for Deno / Cloudflare Workers). Both run the same onnxruntime-web pipeline and give
 * bit-identical results.
 *
 * Errors are `BiometricError`s: INVALID_IMAGE / UNSUPPORTED_FORMAT / IMAGE_TOO_LARGE / IMAGE_TOO_COSTLY /
 * INVALID_AUDIO / AUDIO_TOO_LONG for bad input (4xx), DECODE_BUDGET_EXCEEDED when a decode ran past the budget
 * its cost set and was stopped (4xx: the file is at fault),
 * EXTRACTOR_BUSY when the queue is full, CALLER_QUEUE_FULL when the owner's share of it is,
 * EXTRACTION_CANCELLED when the signal aborted before the job started, EXTRACTION_TIMEOUT, WORKER_CRASHED,
 * EXTRACTOR_CLOSED, MODEL_UNAVAILABLE.
 *
 * @example
 * const ex = await createExtractor({ mode: 'worker-threads' });
 * const { faces } = await ex.analyseFace(jpegBytes, { tokenImage: true });
 * const template = encodeTemplate({ templateVersion: ex.templateVersion, face: faces[0] });
 * await ex.close();
 */
export interface Extractor {
  /** Template version of every embedding this extractor makes (model set, version, pipeline revision). */
  readonly templateVersion: string;
  /** Decodes the image and analyses every face in it. */
  analyseFace(bytes: Uint8Array, opts?: ExtractOptions): Promise<ImageAnalysis>;
  /** Template version of every voice embedding (the speaker encoder and its front end). */
  readonly voiceTemplateVersion: string;
  /**
   * Decodes a WAV recording, measures its speech and embeds it (src/biometrics/voice). MODEL_UNAVAILABLE
   * when the voice model is missing: faces keep working without it.
   */
  analyseVoice(bytes: Uint8Array, opts?: VoiceExtractOptions): Promise<VoiceAnalysis>;
  /**
   * The ISO token image (PNG) of the face with `landmarks` in the image `bytes` (`renderTokenImage` of
   * face/pipeline): the same bytes `analyseFace(..., { tokenImage: true })` gives for that face. No model runs.
   */
  renderTokenImage(bytes: Uint8Array, opts: TokenImageOptions): Promise<Uint8Array>;
  /** Current load. */
  stats(): ExtractorStats;
  /** Rejects queued jobs, lets running ones finish, frees the sessions. Idempotent. */
  close(): Promise<void>;
}

/** Options shared by every extractor. */
export interface ExtractorOptions {
  /** Maximum jobs waiting (beyond the running ones) before `EXTRACTOR_BUSY` (default 64). */
  maxQueue?: number;
  /**
   * Maximum jobs one owner may have waiting before `CALLER_QUEUE_FULL` (default `maxQueue`: no share), so
   * that no caller fills the queue for the others. The owner served longest ago goes next (worker pool).
   */
  maxQueuePerOwner?: number;
  /** Per-job timeout in milliseconds (default 30000). */
  jobTimeoutMs?: number;
}
