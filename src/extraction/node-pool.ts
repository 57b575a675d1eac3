// The Node extraction pool: N warmed worker threads, each with its own onnxruntime-web sessions, a bounded
// queue with backpressure, a per-job timeout, replacement of crashed or stuck workers, clean shutdown.
// Admission is fair and follows the callers: each owner (account) has its own queue, the owner served longest
// ago goes next, one owner may hold only its share of the waiting jobs, and a job whose caller went away is dropped
// before it starts. Jobs are weighed before they are queued (node-pool-cost.ts): one owner's heavy jobs never take
// the last free worker, and a decode that runs past the budget its weight sets is stopped where it runs (its
// worker terminated, which frees the core at once) and the worker replaced. A worker that a job left grown past
// the memory bound is replaced after that job.
import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { BiometricError, type BiometricErrorCode } from '../biometrics/errors.js';
import type { ImageAnalysis } from '../biometrics/face/analysis.js';
import type { VoiceAnalysis } from '../biometrics/voice/pipeline.js';
import {
  cancelled,
  type ExtractOptions,
  type Extractor,
  type ExtractorStats,
  type TokenImageOptions,
  type VoiceExtractOptions,
} from './extractor.js';
import { DEFAULT_DECODE_BUDGET_MS, jobCost, mayStart } from './node-pool-cost.js';
import type { NodePoolOptions } from './node-pool-options.js';
import { OwnerQueues, type PoolJob as Job, workerMessage } from './node-pool-queue.js';
import { type Slot, startWorker, WORKER_URL, watchDecode, whenIdle } from './node-pool-worker.js';
import { FACE_TEMPLATE_VERSION } from './ort-web-runner.js';
import { VOICE_TEMPLATE_VERSION } from './ort-voice-runner.js';
import { MODELS_DIR } from './node-models.js';

/** Extractor backed by Node worker threads. Resolves once every worker is warm. @throws MODEL_UNAVAILABLE */
export async function createNodePoolExtractor(opts: NodePoolOptions = {}): Promise<Extractor> {
  const size = Math.max(1, opts.size ?? availableParallelism());
  const maxQueue = opts.maxQueue ?? 64;
  const maxQueuePerOwner = Math.min(maxQueue, opts.maxQueuePerOwner ?? maxQueue);
  const maxWorkerMemory = opts.maxWorkerMemoryBytes ?? Infinity;
  const defaultTimeout = opts.jobTimeoutMs ?? 30_000;
  const modelsDir = opts.modelsDir ?? MODELS_DIR;
  const startTimeout = opts.startTimeoutMs ?? 120_000;
  const decodeBudget = opts.decodeBudgetMs ?? DEFAULT_DECODE_BUDGET_MS;
  const slots: Slot[] = [];
  const queue = new OwnerQueues();
  /** Workers warming up (replacements, successors): a closing pool stops them at once. */
  const starting = new Set<Worker>();
  let nextId = 1;
  let closed = false;
  const st = { completed: 0, failed: 0, restarts: 0, recycled: 0, cancelled: 0, overBudget: 0, timedOut: 0 };
  /** A successor of a grown worker is warming (one at a time, so warm-ups do not take every core). */
  let warming = false;

  const spawn = (): Promise<Slot> =>
    startWorker(
      opts.workerUrl ?? WORKER_URL,
      { modelsDir, backend: opts.backend ?? 'wasm' },
      startTimeout,
      {
        ready: () => pump(),
        decoded: (slot) => slot.unwatch?.(),
        answered: (slot, job, msg) => {
          finish(slot);
          if (msg.type === 'result') {
            st.completed++;
            job.resolve(msg.result);
          } else {
            st.failed++;
            job.reject(new BiometricError(msg.error.code, msg.error.message));
          }
          if (slot.retired) stop(slot);
          else if ((msg.memory ?? 0) > maxWorkerMemory) slot.grown = true;
          pump();
          warmSuccessor();
        },
        died: (slot, why) => onDeath(slot, why),
      },
      starting,
    );

  const finish = (slot: Slot) => {
    clearTimeout(slot.timer);
    slot.unwatch?.();
    slot.timer = slot.unwatch = undefined;
    slot.job = undefined;
  };

  /** A worker died (crash or termination after a timeout): fail its job, replace it. */
  const onDeath = (slot: Slot, why: string, code: BiometricErrorCode = 'WORKER_CRASHED') => {
    const idx = slots.indexOf(slot);
    if (idx < 0) return; // already handled
    slots.splice(idx, 1);
    const job = slot.job;
    finish(slot);
    if (job) {
      st.failed++;
      if (code === 'DECODE_BUDGET_EXCEEDED') st.overBudget++;
      if (code === 'EXTRACTION_TIMEOUT') st.timedOut++;
      job.reject(new BiometricError(code, code === 'WORKER_CRASHED' ? `extraction worker crashed (${why})` : why));
    }
    void slot.worker.terminate();
    if (closed) return;
    st.restarts++;
    spawn().then(
      (s) => {
        if (closed) void s.worker.terminate();
        else {
          slots.push(s);
          pump();
        }
      },
      () => {
        /* replacement failed: remaining workers keep serving; next death retries */
      },
    );
  };

  /**
   * A worker grown past the memory bound after its job is replaced: a successor is warmed (seconds of CPU)
   * while the grown worker keeps serving, so the pool never loses capacity to a replacement; then the grown
   * worker is retired, and stopping it frees its memory. One successor warms at a time, and only while no job
   * waits: the warm-up would take the CPU the waiting callers need, and the grown worker's memory is bounded by
   * the pixel limit meanwhile.
   */
  const warmSuccessor = () => {
    const old = slots.find((s) => s.grown && !s.retired);
    if (warming || closed || !old || queue.queued > 0) return;
    warming = true;
    spawn().then(
      (fresh) => {
        warming = false;
        // Closed meanwhile, or the grown worker died and onDeath replaced it already: this one is not needed.
        if (closed || !slots.includes(old)) void fresh.worker.terminate();
        else {
          slots.push(fresh);
          old.retired = true;
          st.recycled++;
          if (!old.job) stop(old);
        }
        pump();
        warmSuccessor();
      },
      () => {
        // The successor failed to start: the grown worker keeps serving; the next job over the bound retries.
        warming = false;
        old.grown = false;
      },
    );
  };

  /** Take a retired worker out of the pool and stop it (its 'exit' finds it gone and replaces nothing). */
  const stop = (slot: Slot) => {
    const idx = slots.indexOf(slot);
    if (idx >= 0) slots.splice(idx, 1);
    void slot.worker.terminate();
  };

  const pump = () => {
    for (const slot of slots) {
      if (!slot.ready || slot.job || slot.retired) continue;
      const serving = slots.filter((s) => s.ready && !s.retired);
      const running = serving.flatMap((s) => (s.job ? [s.job] : []));
      const job = queue.takeNext((next) => mayStart(next, running, serving.length));
      if (!job) return;
      slot.job = job;
      slot.timer = setTimeout(
        () => onDeath(slot, `extraction took longer than ${job.timeoutMs} ms`, 'EXTRACTION_TIMEOUT'),
        job.timeoutMs,
      );
      const budget = job.cost.decodeBudgetMs;
      if (budget !== undefined)
        slot.unwatch = watchDecode(slot, budget, (spent, clock) =>
          onDeath(
            slot,
            `decoding the image took more than its budget of ${Math.round(budget)} ms of ${clock} time (its structure promised about ${Math.ceil(job.cost.decodeMs)} ms; ${Math.round(spent)} ms spent) and was stopped`,
            'DECODE_BUDGET_EXCEEDED',
          ),
        );
      // The bytes are our own copy (see submit): transfer them instead of cloning again.
      slot.worker.postMessage(workerMessage(job), [job.bytes.buffer as ArrayBuffer]);
    }
  };

  const submit = <R extends ImageAnalysis | VoiceAnalysis | Uint8Array>(
    bytes: Uint8Array,
    o: ExtractOptions | VoiceExtractOptions | TokenImageOptions,
    kind: Job['kind'] = 'face',
  ): Promise<R> => {
    if (closed) return Promise.reject(new BiometricError('EXTRACTOR_CLOSED', 'extractor is closed'));
    if (o.signal?.aborted) {
      st.cancelled++;
      return Promise.reject(cancelled());
    }
    const owner = o.owner ?? '';
    let cost: Job['cost'];
    try {
      // Judged from the bytes' structure before anything is queued: refusals answer at once.
      cost = jobCost(kind, bytes, (o as ExtractOptions).limits, decodeBudget);
    } catch (error) {
      // Refused before it was queued, as admission refuses: no job of the pool's ran or failed.
      return Promise.reject(error);
    }
    if (queue.queued >= maxQueue)
      return Promise.reject(new BiometricError('EXTRACTOR_BUSY', `extraction queue full (${maxQueue})`));
    if (queue.waitingOf(owner) >= maxQueuePerOwner) {
      return Promise.reject(
        new BiometricError('CALLER_QUEUE_FULL', `this caller already has ${maxQueuePerOwner} extractions waiting`),
      );
    }
    return new Promise((resolve, reject) => {
      // Copy: the caller keeps its buffer, and structured clone of a view would copy the whole backing store.
      // Not `bytes.slice()`: on a Node Buffer that is a view of the same memory, which the transfer to the worker
      // would detach from under the caller (a capture's kept frame reached the operation empty).
      const job: Job = {
        id: nextId++,
        kind,
        bytes: new Uint8Array(bytes),
        opts: o,
        resolve: resolve as Job['resolve'],
        reject,
        timeoutMs: o.timeoutMs ?? defaultTimeout,
        cost,
        owner,
      };
      const signal = o.signal;
      if (signal) {
        const onAbort = () => {
          if (queue.withdraw(job)) {
            st.cancelled++;
            reject(cancelled());
          }
        };
        signal.addEventListener('abort', onAbort, { once: true });
        job.detach = () => signal.removeEventListener('abort', onAbort);
      }
      queue.add(
        job,
        slots.some((s) => s.job?.owner === owner),
      );
      pump();
    });
  };

  const stopStarting = () => {
    for (const worker of starting) void worker.terminate();
  };
  opts.signal?.addEventListener('abort', stopStarting, { once: true });
  const started = await Promise.allSettled(Array.from({ length: opts.signal?.aborted ? 0 : size }, spawn));
  opts.signal?.removeEventListener('abort', stopStarting);
  for (const r of started) if (r.status === 'fulfilled') slots.push(r.value);
  const failure = started.find((r) => r.status === 'rejected') as PromiseRejectedResult | undefined;
  if (failure || opts.signal?.aborted) {
    closed = true;
    await Promise.all(slots.map((s) => s.worker.terminate()));
    throw opts.signal?.aborted ? new BiometricError('EXTRACTOR_CLOSED', 'extractor is closed') : failure?.reason;
  }

  return {
    templateVersion: FACE_TEMPLATE_VERSION,
    voiceTemplateVersion: VOICE_TEMPLATE_VERSION,
    analyseFace: (bytes, o = {}) => submit<ImageAnalysis>(bytes, o),
    analyseVoice: (bytes, o = {}) => submit<VoiceAnalysis>(bytes, o, 'voice'),
    renderTokenImage: (bytes, o) => submit<Uint8Array>(bytes, o, 'token'),
    stats: (): ExtractorStats => ({
      kind: 'worker-threads',
      workers: slots.length,
      busy: slots.filter((s) => s.job).length,
      queued: queue.queued,
      ...st,
    }),
    async close() {
      if (closed) return;
      closed = true;
      for (let job = queue.takeNext(); job; job = queue.takeNext())
        job.reject(new BiometricError('EXTRACTOR_CLOSED', 'extractor is closed'));
      for (const worker of starting) void worker.terminate();
      // Let running jobs finish (bounded by their own timeouts), then stop the workers.
      await Promise.all(slots.map(whenIdle));
      const all = slots.splice(0);
      await Promise.all(all.map((s) => s.worker.terminate()));
    },
  };
}
