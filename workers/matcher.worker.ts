// Worker thread entry of the matcher pool (src/biometrics/matcher-pool.ts): scans slices of shared gallery
// partitions with its own kernel instances and scratch slot. Reads the shared rows, never writes them.
import { parentPort } from 'node:worker_threads';
import { Calibration } from '../src/biometrics/calibration.js';
import { DotKernel, kernelModules } from '../src/biometrics/matcher-dots.js';
import type { MatcherJob, MatcherReply } from '../src/biometrics/node-matcher-pool.js';
import { scanRows } from '../src/biometrics/matcher-scan.js';
import { metaViews, type SharedRows } from '../src/biometrics/matcher-store.js';

const port = parentPort!;
const partitions = new Map<number, { kernel: DotKernel; shared: SharedRows; calibration: Calibration }>();

port.on('message', (job: MatcherJob) => {
  if (job.type === 'forget') {
    partitions.delete(job.key);
    return;
  }
  let reply: MatcherReply;
  try {
    let p = partitions.get(job.key);
    if (!p && job.partition) {
      const s = job.partition;
      const kernel = new DotKernel(
        s.rows,
        () => new Int8Array(s.rows.buffer, s.rowsAt),
        s.rowsAt,
        s.dims,
        job.slot,
        s.kernel,
        kernelModules(true),
      );
      p = { kernel, shared: s, calibration: new Calibration(s.calibration) };
      partitions.set(job.key, p);
    }
    if (!p) throw new Error(`unknown partition ${job.key}`);
    const t0 = performance.now();
    const hits = scanRows(p.kernel, metaViews(p.shared.meta), job.task, p.calibration);
    reply = { id: job.id, hits, ms: performance.now() - t0 };
  } catch (e) {
    reply = { id: job.id, error: String((e as Error).message ?? e) };
  }
  port.postMessage(reply);
});
