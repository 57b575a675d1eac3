// A test-only entry of the extraction worker: the real workers/face.worker.ts, except that a face job whose
// bytes are CRASH_BYTES makes the thread exit abruptly, as a native crash or an abort out of memory would.
// The pool tests pass it as `workerUrl` to prove that a dead worker fails its job and is replaced, so the
// production worker needs no such switch.
import { parentPort } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

/** The bytes that crash this worker (see test/support/crashing-worker.ts). */
const CRASH_BYTES = 'crash this extraction worker';

register();
// Registered before the real worker's own listener (which it adds once its models are warm), so it runs first.
parentPort.on('message', (job) => {
  if (job?.type === 'analyse' && new TextDecoder().decode(job.bytes) === CRASH_BYTES) process.exit(70);
});
await import('../../workers/face.worker.ts');
