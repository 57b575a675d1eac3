// The Node extraction pool: N warmed worker threads, each with its own onnxruntime-web sessions, a bounded
// queue with backpressure, a per-job timeout, replacement of crashed or stuck workers, clean shutdown.
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { BiometricError, type BiometricErrorCode } from '../biometrics/errors.js';
import type { AnalyseOptions, ImageAnalysis } from '../biometrics/face/pipeline.js';
import type { VoiceAnalyseOptions, VoiceAnalysis } from '../biometrics/voice/pipeline.js';
import type { ExtractOptions, Extractor, ExtractorOptions, ExtractorStats, TokenImageOptions, VoiceExtractOptions } from './extractor.js';
import type { WorkerJob, WorkerReply } from './node-protocol.js';
import { FACE_TEMPLATE_VERSION } from './ort-web-runner.js';
import { VOICE_TEMPLATE_VERSION } from './ort-voice-runner.js';
import { MODELS_DIR } from './node-models.js';

/** Options of the worker-thread pool. */
export interface NodePoolOptions extends ExtractorOptions {
  /** Worker threads (default: available cores). */
  size?: number;
  /** Directory with the model files (default wasm/models/). */
  modelsDir?: string;
  /** Milliseconds allowed for a worker to load and warm its sessions (default 120000). */
  startTimeoutMs?: number;
  /**
   * The worker's entry module. Default: the tsx bootstrap when running from source, the compiled .js in a
   * build. Deno runs TypeScript itself, so its entry passes workers/face.worker.ts.
   */
  workerUrl?: URL;
}

interface Job {
  id: number;
  /** Face image, voice recording or token image: all run in the same workers, one job at a time. */
  kind: 'face' | 'voice' | 'token';
  bytes: Uint8Array;
  opts: ExtractOptions | VoiceExtractOptions | TokenImageOptions;
  resolve: (r: ImageAnalysis | VoiceAnalysis | Uint8Array) => void;
  reject: (e: unknown) => void;
  timeoutMs: number;
  crash?: boolean;
}

interface Slot {
  worker: Worker;
  job?: Job;
  timer?: ReturnType<typeof setTimeout>;
  ready: boolean;
}

const isTs = import.meta.url.endsWith('.ts');
const WORKER_URL = new URL(isTs ? '../../workers/face.worker.dev.mjs' : '../../workers/face.worker.js', import.meta.url);

/** Extractor backed by Node worker threads. Resolves once every worker is warm. @throws MODEL_UNAVAILABLE */
export async function createNodePoolExtractor(opts: NodePoolOptions = {}): Promise<Extractor & { debugCrashNext(): Promise<unknown> }> {
  const size = Math.max(1, opts.size ?? availableParallelism());
  const maxQueue = opts.maxQueue ?? 64;
  const defaultTimeout = opts.jobTimeoutMs ?? 30_000;
  const modelsDir = opts.modelsDir ?? MODELS_DIR;
  const startTimeout = opts.startTimeoutMs ?? 120_000;
  const slots: Slot[] = [];
  const queue: Job[] = [];
  let nextId = 1;
  let closed = false;
  const st = { completed: 0, failed: 0, restarts: 0 };

  const spawn = (): Promise<Slot> =>
    new Promise((resolve, reject) => {
      const worker = new Worker(opts.workerUrl ?? WORKER_URL, {
        workerData: { modelsDir },
      });
      const slot: Slot = { worker, ready: false };
      const startTimer = setTimeout(() => {
        void worker.terminate();
        reject(new BiometricError('MODEL_UNAVAILABLE', `extraction worker did not start within ${startTimeout} ms`));
      }, startTimeout);
      worker.on('message', (msg: WorkerReply) => {
        if (msg.type === 'ready') {
          clearTimeout(startTimer);
          slot.ready = true;
          resolve(slot);
          pump();
        } else if (msg.type === 'init-error') {
          clearTimeout(startTimer);
          void worker.terminate();
          reject(new BiometricError('MODEL_UNAVAILABLE', msg.error.message));
        } else if (slot.job && msg.id === slot.job.id) {
          const job = slot.job;
          finish(slot);
          if (msg.type === 'result') { st.completed++; job.resolve(msg.result); }
          else { st.failed++; job.reject(new BiometricError(msg.error.code, msg.error.message)); }
          pump();
        }
      });
      const died = (why: string) => {
        if (!slot.ready) {
          clearTimeout(startTimer);
          reject(new BiometricError('MODEL_UNAVAILABLE', `extraction worker failed to start (${why})`));
          return;
        }
        onDeath(slot, why);
      };
      worker.on('error', (err) => died(`worker error: ${err.message}`));
      worker.on('exit', (code) => died(`worker exited with code ${code}`));
    });

  const finish = (slot: Slot) => {
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = undefined;
    slot.job = undefined;
  };

  /** A worker died (crash or termination after a timeout): fail its job, replace it. */
  const onDeath = (slot: Slot, why: string, code: BiometricErrorCode = 'WORKER_CRASHED') => {
    const idx = slots.indexOf(slot);
    if (idx < 0) return; // already handled
    slots.splice(idx, 1);
    const job = slot.job;
    finish(slot);
    if (job) { st.failed++; job.reject(new BiometricError(code, code === 'WORKER_CRASHED' ? `extraction worker crashed (${why})` : why)); }
    void slot.worker.terminate();
    if (closed) return;
    st.restarts++;
    spawn().then(
      (s) => { if (closed) void s.worker.terminate(); else { slots.push(s); pump(); } },
      () => { /* replacement failed: remaining workers keep serving; next death retries */ },
    );
  };

  const pump = () => {
    for (const slot of slots) {
      if (!slot.ready || slot.job) continue;
      const job = queue.shift();
      if (!job) return;
      slot.job = job;
      slot.timer = setTimeout(() => onDeath(slot, `extraction took longer than ${job.timeoutMs} ms`, 'EXTRACTION_TIMEOUT'), job.timeoutMs);
      const { timeoutMs: _t, ...analyseOpts } = job.opts;
      const msg: WorkerJob = job.crash ? { type: 'crash', id: job.id }
        : job.kind === 'voice' ? { type: 'voice', id: job.id, bytes: job.bytes, opts: analyseOpts as VoiceAnalyseOptions }
        : job.kind === 'token' ? { type: 'token', id: job.id, bytes: job.bytes, landmarks: (job.opts as TokenImageOptions).landmarks }
        : { type: 'analyse', id: job.id, bytes: job.bytes, opts: analyseOpts as AnalyseOptions };
      // The bytes are our own copy (see submit): transfer them instead of cloning again.
      slot.worker.postMessage(msg, job.crash ? [] : [job.bytes.buffer as ArrayBuffer]);
    }
  };

  const submit = <R extends ImageAnalysis | VoiceAnalysis | Uint8Array>(bytes: Uint8Array, o: ExtractOptions | VoiceExtractOptions | TokenImageOptions, crash = false, kind: Job['kind'] = 'face'): Promise<R> => {
    if (closed) return Promise.reject(new BiometricError('EXTRACTOR_CLOSED', 'extractor is closed'));
    if (queue.length >= maxQueue) return Promise.reject(new BiometricError('EXTRACTOR_BUSY', `extraction queue full (${maxQueue})`));
    return new Promise((resolve, reject) => {
      // Copy: the caller keeps its buffer, and structured clone of a view would copy the whole backing store.
      queue.push({ id: nextId++, kind, bytes: bytes.slice(), opts: o, resolve: resolve as Job['resolve'], reject, timeoutMs: o.timeoutMs ?? defaultTimeout, crash });
      pump();
    });
  };

  const started = await Promise.allSettled(Array.from({ length: size }, spawn));
  for (const r of started) if (r.status === 'fulfilled') slots.push(r.value);
  const failure = started.find((r) => r.status === 'rejected') as PromiseRejectedResult | undefined;
  if (failure) {
    closed = true;
    await Promise.all(slots.map((s) => s.worker.terminate()));
    throw failure.reason;
  }

  return {
    templateVersion: FACE_TEMPLATE_VERSION,
    voiceTemplateVersion: VOICE_TEMPLATE_VERSION,
    analyseFace: (bytes, o = {}) => submit<ImageAnalysis>(bytes, o),
    analyseVoice: (bytes, o = {}) => submit<VoiceAnalysis>(bytes, o, false, 'voice'),
    renderTokenImage: (bytes, o) => submit<Uint8Array>(bytes, o, false, 'token'),
    /** Test hook: the next job makes its worker exit abruptly. */
    debugCrashNext: () => submit(new Uint8Array(0), {}, true),
    stats: (): ExtractorStats => ({
      kind: 'worker-threads', workers: slots.length, busy: slots.filter((s) => s.job).length, queued: queue.length, ...st,
    }),
    async close() {
      if (closed) return;
      closed = true;
      for (const job of queue.splice(0)) job.reject(new BiometricError('EXTRACTOR_CLOSED', 'extractor is closed'));
      // Let running jobs finish (bounded by their own timeouts), then stop the workers.
      await Promise.all(slots.map((s) => new Promise<void>((res) => {
        if (!s.job) return res();
        const j = s.job;
        const done = () => res();
        const origRes = j.resolve, origRej = j.reject;
        j.resolve = (r) => { origRes(r); done(); };
        j.reject = (e) => { origRej(e); done(); };
      })));
      const all = slots.splice(0);
      await Promise.all(all.map((s) => s.worker.terminate()));
    },
  };
}
