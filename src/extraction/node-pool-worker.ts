// One worker thread of the Node pool (node-pool.ts): starting it until it reports its sessions warm, and handing
// its messages to the pool. The pool keeps the queue, the timers and the replacements.
import { readFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { BiometricError } from '../biometrics/errors.js';
import type { PoolJob } from './node-pool-queue.js';
import type { WorkerReply } from './node-protocol.js';

/** A worker and what it is doing. */
export interface Slot {
  worker: Worker;
  job?: PoolJob;
  /** The running job's timeout. */
  timer?: ReturnType<typeof setTimeout>;
  /** Stops watching the running job's decode budget: called when the worker reports the image decoded. */
  unwatch?: () => void;
  /** The worker thread's /proc stat file (Linux), whose CPU times hold a decode to its budget. */
  cpuStat?: string;
  ready: boolean;
  /** Grown past the memory bound: keeps serving until its successor is warm. */
  grown?: boolean;
  /** Out of service: takes no more jobs, and stops once its running job has ended. */
  retired?: boolean;
}

const isTs = import.meta.url.endsWith('.ts');
/** The production worker: the tsx bootstrap when running from source, the compiled .js in a build. */
export const WORKER_URL = new URL(
  isTs ? '../../workers/face.worker.dev.mjs' : '../../workers/face.worker.js',
  import.meta.url,
);

/** What the pool does with a started worker's messages. */
interface SlotEvents {
  /** The worker is warm and takes jobs. */
  ready(slot: Slot): void;
  /** The running job's image is decoded. */
  decoded(slot: Slot): void;
  /** The running job's answer (its result or its error). */
  answered(slot: Slot, job: PoolJob, reply: Extract<WorkerReply, { type: 'result' | 'error' }>): void;
  /** The worker died after it was ready (a crash, an exit, a termination). */
  died(slot: Slot, why: string): void;
}

/**
 * Starts a worker; resolves once its sessions are warm. While it warms it is in `starting`, so that a pool
 * closing meanwhile can stop it at once instead of letting it spend seconds of CPU on a warm-up nobody needs.
 * @throws MODEL_UNAVAILABLE
 */
export function startWorker(
  url: URL,
  workerData: { modelsDir: string; backend: 'wasm' | 'native' },
  startTimeoutMs: number,
  events: SlotEvents,
  starting: Set<Worker>,
): Promise<Slot> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(url, { workerData });
    starting.add(worker);
    const slot: Slot = { worker, ready: false };
    const startTimer = setTimeout(() => {
      void worker.terminate();
      reject(new BiometricError('MODEL_UNAVAILABLE', `extraction worker did not start within ${startTimeoutMs} ms`));
    }, startTimeoutMs);
    worker.on('message', (msg: WorkerReply) => {
      if (msg.type === 'ready') {
        clearTimeout(startTimer);
        starting.delete(worker);
        slot.ready = true;
        slot.cpuStat = msg.cpuStat;
        resolve(slot);
        events.ready(slot);
      } else if (msg.type === 'init-error') {
        clearTimeout(startTimer);
        void worker.terminate();
        reject(new BiometricError('MODEL_UNAVAILABLE', msg.error.message));
      } else if (slot.job?.id === msg.id) {
        if (msg.type === 'decoded') events.decoded(slot);
        else events.answered(slot, slot.job, msg);
      }
    });
    const died = (why: string) => {
      if (slot.ready) return events.died(slot, why);
      starting.delete(worker);
      clearTimeout(startTimer);
      reject(new BiometricError('MODEL_UNAVAILABLE', `extraction worker failed to start (${why})`));
    };
    worker.on('error', (err) => died(`worker error: ${err.message}`));
    worker.on('exit', (code) => died(`worker exited with code ${code}`));
  });
}

/** Resolves once the slot's running job (if any) has answered or failed, whatever its caller does with it. */
export function whenIdle(slot: Slot): Promise<void> {
  return new Promise((done) => {
    const job = slot.job;
    if (!job) return done();
    const { resolve, reject } = job;
    job.resolve = (r) => {
      resolve(r);
      done();
    };
    job.reject = (e) => {
      reject(e);
      done();
    };
  });
}

/** CPU milliseconds (user + system) a thread has run, from its /proc stat file; undefined where unreadable. */
function threadCpuMs(stat: string): number | undefined {
  try {
    const text = readFileSync(stat, 'utf8');
    // The thread's name is in parentheses and may hold spaces; utime and stime are the 12th and 13th fields after.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10; // USER_HZ is 100 on every Linux BIMS runs on
  } catch {
    return undefined;
  }
}

/**
 * Watches the decode `slot` runs against `budgetMs` and calls `over` once it has spent more: CPU time of the
 * worker's own thread where Linux tells it (so a host slowed by other work does not stop an honest decode; the
 * job's timeout bounds the wall time), else wall time. Returns the function that stops watching.
 */
export function watchDecode(slot: Slot, budgetMs: number, over: (spentMs: number, clock: 'CPU' | 'wall') => void) {
  const cpu0 = slot.cpuStat ? threadCpuMs(slot.cpuStat) : undefined;
  if (cpu0 === undefined) {
    const timer = setTimeout(() => over(budgetMs, 'wall'), budgetMs);
    return () => clearTimeout(timer);
  }
  // CPU times move in 10 ms ticks: looking more often than every 5 ms would see nothing new.
  const timer = setInterval(
    () => {
      const spent = (threadCpuMs(slot.cpuStat!) ?? Number.POSITIVE_INFINITY) - cpu0;
      if (spent > budgetMs) {
        clearInterval(timer);
        over(spent, 'CPU');
      }
    },
    Math.min(100, Math.max(5, budgetMs / 4)),
  );
  return () => clearInterval(timer);
}
