// The Node matcher threads: worker threads that scan slices of shared gallery partitions (FaceGallery's
// identifyAsync). Node only (worker_threads); elsewhere a gallery has no threads and searches on its own thread.
// A thread learns a partition's shared memories the first time it is sent a slice of it and forgets them once
// the partition is collected, so a reloaded gallery does not keep the old one's memory alive in the threads.
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { MatcherThreads, SharedPartition } from './matcher-types.js';
import type { ScanHits, ScanTask } from './matcher-scan.js';

/** Messages to a matcher thread. */
export type MatcherJob =
  | { type: 'scan'; id: number; key: number; slot: number; partition?: SharedPartition; task: ScanTask }
  | { type: 'forget'; key: number };

/** Messages from a matcher thread. */
export type MatcherReply = {
  id: number;
  hits?: ScanHits;
  error?: string /** the slice's scan time in the thread */;
  ms?: number;
};

const isTs = import.meta.url.endsWith('.ts');
const WORKER_URL = new URL(
  isTs ? '../../workers/matcher.worker.dev.mjs' : '../../workers/matcher.worker.js',
  import.meta.url,
);

interface Pending {
  resolve: (h: ScanHits) => void;
  reject: (e: Error) => void;
}

interface Thread {
  worker: Worker;
  known: Set<number>;
  pending: Map<number, Pending>;
}

export class MatcherPool implements MatcherThreads {
  private readonly threads: Thread[] = [];
  private nextId = 1;
  /** Each thread's time for its last slice, ms (what a search cost the threads, beside its wall time). */
  readonly lastSliceMs: number[] = [];
  private closed = false;
  private readonly registered = new Set<number>();
  private readonly collected = new FinalizationRegistry<number>((key) => {
    this.registered.delete(key);
    for (const t of this.threads) {
      if (t.known.delete(key)) t.worker.postMessage({ type: 'forget', key } satisfies MatcherJob);
    }
  });

  readonly minRows: number;

  /**
   * @param size threads (default: the machine's cores).
   * @param options.minRows partitions smaller than this are searched on the caller's thread: below it a scan
   * costs less than posting it to threads (32,768 rows of 512 bytes scan in about 2 ms on one core).
   * Threads start on the first search that needs them, so a service with a small gallery never starts any.
   */
  constructor(
    readonly size = availableParallelism(),
    options: { minRows?: number } = {},
  ) {
    this.minRows = options.minRows ?? 32_768;
  }

  private spawn(): Thread {
    const worker = new Worker(WORKER_URL);
    const t: Thread = { worker, known: new Set(), pending: new Map() };
    worker.on('message', (m: MatcherReply) => {
      const p = t.pending.get(m.id);
      if (!p) return;
      t.pending.delete(m.id);
      if (m.ms !== undefined) this.lastSliceMs[this.threads.indexOf(t)] = m.ms;
      if (m.hits) p.resolve(m.hits);
      else p.reject(new Error(`matcher thread: ${m.error}`));
    });
    const died = (why: string) => {
      const at = this.threads.indexOf(t);
      if (at < 0) return;
      for (const p of t.pending.values()) p.reject(new Error(`matcher thread died (${why})`));
      t.pending.clear();
      // a fresh thread takes its place: it learns the partitions again from the next slices
      if (!this.closed) this.threads[at] = this.spawn();
    };
    worker.on('error', (e) => died(e.message));
    worker.on('exit', (code) => died(`exit code ${code}`));
    return t;
  }

  scan(thread: number, partition: SharedPartition, task: ScanTask): Promise<ScanHits> {
    if (this.closed) return Promise.reject(new Error('matcher pool is closed'));
    if (thread < 0 || thread >= this.size) return Promise.reject(new Error(`no matcher thread ${thread}`));
    while (this.threads.length <= thread) this.threads.push(this.spawn());
    const t = this.threads[thread]!;
    const id = this.nextId++;
    const job: MatcherJob = { type: 'scan', id, key: partition.key, slot: thread + 1, task };
    if (!t.known.has(partition.key)) {
      job.partition = partition;
      t.known.add(partition.key);
      if (!this.registered.has(partition.key)) {
        this.registered.add(partition.key);
        this.collected.register(partition, partition.key);
      }
    }
    return new Promise((resolve, reject) => {
      t.pending.set(id, { resolve, reject });
      t.worker.postMessage(job);
    });
  }

  /** Stops the threads; searches in flight fail. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.threads.map((t) => t.worker.terminate()));
  }
}
