// The Node pool's waiting room: the jobs it was given, each owner (account) in a queue of its own, and the fair
// order they leave in (the owner served longest ago goes next). The workers and their lifecycle are node-pool.ts.
import type { AnalyseOptions, ImageAnalysis } from '../biometrics/face/analysis.js';
import type { VoiceAnalyseOptions, VoiceAnalysis } from '../biometrics/voice/pipeline.js';
import { pipelineOptions, type ExtractOptions, type TokenImageOptions, type VoiceExtractOptions } from './extractor.js';
import type { JobCost } from './node-pool-cost.js';
import type { WorkerJob } from './node-protocol.js';

/** A job given to the pool, from the moment it waits until its worker answers. */
export interface PoolJob {
  id: number;
  /** Face image, voice recording or token image: all run in the same workers, one job at a time. */
  kind: 'face' | 'voice' | 'token';
  bytes: Uint8Array;
  opts: ExtractOptions | VoiceExtractOptions | TokenImageOptions;
  resolve: (r: ImageAnalysis | VoiceAnalysis | Uint8Array) => void;
  reject: (e: unknown) => void;
  timeoutMs: number;
  /** What the job is estimated to cost, and its decode's budget. */
  cost: JobCost;
  /** The owner's queue the job waits in. */
  owner: string;
  /** Removes the abort listener once the job has left the queue. */
  detach?: () => void;
}

/**
 * Waiting jobs per owner, with when the owner was last served (a count of jobs started). The owner served
 * longest ago goes next, and an owner with nothing waiting or running counts as never served: a caller
 * arriving behind a flood is served by the next free worker, not after one more job of the flood.
 */
export class OwnerQueues {
  private readonly queues = new Map<string, { jobs: PoolJob[]; served: number }>();
  private jobsStarted = 0;
  /** Jobs waiting, every owner's. */
  queued = 0;

  /** Jobs the owner has waiting. */
  waitingOf(owner: string): number {
    return this.queues.get(owner)?.jobs.length ?? 0;
  }

  /** Queue a job; `ownerRunning` says whether a job of its owner is running now. */
  add(job: PoolJob, ownerRunning: boolean): void {
    const waiting = this.queues.get(job.owner);
    if (waiting) waiting.jobs.push(job);
    // An owner with a job running now counts as just served; one with nothing running as never served.
    else this.queues.set(job.owner, { jobs: [job], served: ownerRunning ? this.jobsStarted : 0 });
    this.queued++;
  }

  /**
   * The next job: the oldest job of the owner served longest ago, among the owners whose oldest job
   * `admissible` lets start now (all of them by default).
   */
  takeNext(admissible: (job: PoolJob) => boolean = () => true): PoolJob | undefined {
    let next: { owner: string; jobs: PoolJob[]; served: number } | undefined;
    for (const [owner, q] of this.queues)
      if ((!next || q.served < next.served) && admissible(q.jobs[0]!)) next = { owner, ...q };
    if (!next) return undefined;
    const job = next.jobs.shift()!;
    this.jobsStarted++;
    if (next.jobs.length) this.queues.set(next.owner, { jobs: next.jobs, served: this.jobsStarted });
    else this.queues.delete(next.owner);
    this.queued--;
    job.detach?.();
    return job;
  }

  /** Take a job out of its queue before it started (its caller went away); false when it already left. */
  withdraw(job: PoolJob): boolean {
    const jobs = this.queues.get(job.owner)?.jobs;
    const at = jobs ? jobs.indexOf(job) : -1;
    if (at < 0) return false;
    jobs!.splice(at, 1);
    if (!jobs!.length) this.queues.delete(job.owner);
    this.queued--;
    return true;
  }
}

/**
 * The message that hands a job to a worker. The owner and the signal are the queue's business; an AbortSignal
 * cannot even be posted.
 */
export function workerMessage(job: PoolJob): WorkerJob {
  const analyseOpts = pipelineOptions(job.opts);
  return job.kind === 'voice'
    ? { type: 'voice', id: job.id, bytes: job.bytes, opts: analyseOpts as VoiceAnalyseOptions }
    : job.kind === 'token'
      ? { type: 'token', id: job.id, bytes: job.bytes, landmarks: (job.opts as TokenImageOptions).landmarks }
      : { type: 'analyse', id: job.id, bytes: job.bytes, opts: analyseOpts as AnalyseOptions };
}
