/**
 * The extraction worker that crashes on demand (crashing-face-worker.mjs), for pool tests: pass
 * {@link CRASHING_WORKER_URL} as the pool's `workerUrl`, then analyse {@link crashBytes} to kill a worker mid-job.
 */
export const CRASHING_WORKER_URL = new URL('./crashing-face-worker.mjs', import.meta.url);

/** A face job with these bytes makes its worker exit (status 70) instead of answering. */
export const crashBytes = () => new TextEncoder().encode('crash this extraction worker');
