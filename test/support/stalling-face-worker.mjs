// A test-only entry of the extraction worker: the real workers/face.worker.ts, except that an image holding the
// comment STALL_MARK makes the thread spin in its decode for ever, as a decoder caught in a pathological file
// would: no flag is checked and no message is posted, so only terminating the worker stops it. The pool tests
// pass it as `workerUrl` to prove that a decode past its budget is ended where it runs; the production worker
// needs no such switch.
import { parentPort } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

/** The comment that stalls this worker (see test/support/stalling-worker.ts). */
const STALL_MARK = 'stall this decode for ever';

register();
// Registered before the real worker's own listener (which it adds once its models are warm), so it runs first.
parentPort.on('message', (job) => {
  if (job?.type === 'analyse' && new TextDecoder('latin1').decode(job.bytes).includes(STALL_MARK)) for (;;);
});
await import('../../workers/face.worker.ts');
