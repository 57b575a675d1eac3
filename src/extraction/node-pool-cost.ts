// What a pool job will cost, judged before it is queued, and what follows from it: its decode's budget (past it
// the worker is stopped where it runs and replaced), and whether it is heavy (one account's heavy jobs never hold
// every worker). docs/admission.md explains the figures.
import type { DecodeLimits } from '../biometrics/image/decode.js';
import { imageCost } from '../biometrics/image/image-cost.js';
import { readWavLayout } from '../biometrics/voice/wav.js';

/** A job's weight: its estimated work and the budget its decode is held to. */
export interface JobCost {
  /** Estimated milliseconds of decoding on one core of the reference host (image-cost.ts). */
  decodeMs: number;
  /** Costly enough that one account's such jobs may not take the last free worker. */
  heavy: boolean;
  /** Milliseconds the worker may spend decoding before it is stopped; none for voice (its decoding is linear). */
  decodeBudgetMs?: number;
}

/**
 * The decode budget of the costliest image admitted (an estimate of about {@link REFERENCE_DECODE_MS}), in CPU
 * time of the worker's thread where the host tells it (node-pool-worker.ts); a job's budget is in proportion to
 * its own estimate, never below a quarter of this. 8 s by default: ten times what the costliest image takes on
 * the reference host, so only a decode the estimate failed to foresee meets it.
 */
export const DEFAULT_DECODE_BUDGET_MS = 8000;
/** The estimate the full decode budget belongs to: about the costliest image the bounds admit. */
const REFERENCE_DECODE_MS = 1000;
/** Jobs estimated above this many milliseconds are heavy (a 12-megapixel photo is; a 512x512 portrait is not). */
const HEAVY_DECODE_MS = 200;
/** A voice job's estimate per second of recording (the speaker encoder's partials and the front end). */
const VOICE_MS_PER_SECOND = 15;

/**
 * Weighs a job by its bytes. Refusals of the cost judgement (IMAGE_TOO_LARGE, IMAGE_TOO_COSTLY, INVALID_IMAGE,
 * AUDIO_TOO_LONG ...) are thrown here, before the job is queued; bytes of no known format weigh nothing (the
 * worker names their format at once).
 */
export function jobCost(
  kind: 'face' | 'voice' | 'token',
  bytes: Uint8Array,
  limits: DecodeLimits | undefined,
  budgetMs: number,
): JobCost {
  if (kind === 'voice') {
    let seconds = 0;
    try {
      const layout = readWavLayout(bytes);
      seconds = layout.frames / layout.sampleRate;
    } catch (error) {
      // Not a WAV at all: the worker says so with its own words; anything else is refused now.
      if ((error as { code?: string }).code !== 'UNSUPPORTED_FORMAT') throw error;
    }
    const decodeMs = seconds * VOICE_MS_PER_SECOND;
    return { decodeMs, heavy: decodeMs > HEAVY_DECODE_MS };
  }
  const cost = imageCost(bytes, { maxMegapixels: limits?.maxMegapixels });
  const decodeMs = cost?.decodeMs ?? 0;
  return {
    decodeMs,
    heavy: decodeMs > HEAVY_DECODE_MS,
    decodeBudgetMs: Math.max(budgetMs / 4, (budgetMs * decodeMs) / REFERENCE_DECODE_MS),
  };
}

/** The owner and weight of a job a worker runs or may run. */
interface Weighed {
  owner: string;
  cost: JobCost;
}

/**
 * Whether `job` may start on a free worker while `running` are the jobs running now, on `workers` workers in all.
 * An owner may take the last free worker only when neither that job nor any of its running ones is heavy, so
 * that one account's costly jobs always leave a worker to the others (a single worker serves everyone in turn).
 */
export function mayStart(job: Weighed, running: readonly Weighed[], workers: number): boolean {
  if (workers < 2) return true;
  const own = running.filter((r) => r.owner === job.owner);
  if (own.length + 1 < workers) return true;
  return !job.cost.heavy && !own.some((r) => r.cost.heavy);
}
