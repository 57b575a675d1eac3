import { makeJpeg } from './media.js';

/**
 * The extraction worker that stalls on demand (stalling-face-worker.mjs), for pool tests: pass
 * {@link STALLING_WORKER_URL} as the pool's `workerUrl`, then analyse {@link stallingJpeg} to keep a worker
 * busy in its decode until the pool stops it.
 */
export const STALLING_WORKER_URL = new URL('./stalling-face-worker.mjs', import.meta.url);

/**
 * A small valid JPEG (admitted by every cost bound) carrying the comment that makes the stalling worker spin:
 * a file whose cost the bounds could not foresee.
 */
export function stallingJpeg(): Uint8Array {
  const real = makeJpeg(64, 48);
  const text = new TextEncoder().encode('stall this decode for ever');
  const comment = [0xff, 0xfe, 0, text.length + 2, ...text];
  return Uint8Array.from([...real.subarray(0, 2), ...comment, ...real.subarray(2)]);
}
