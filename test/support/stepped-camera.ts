import type { CaptureMedia } from '../../src/services/capture/capture-types.js';
import { photo } from '../biometrics/helpers.js';

/**
 * A camera whose frames (one photo, again and again) are handed over one at a time, each when the test calls
 * `next()`: it resolves once the capture session has asked for a frame and been given it, so a test steps a
 * capture frame by frame. A session that stops (its signal aborts) ends the frames.
 */
export function steppedCamera(file = 'labelled/franck/franck_02159.jpg') {
  const waiting: (() => void)[] = [];
  let release: (() => void) | null = null;
  const media: CaptureMedia = {
    async *frames(signal) {
      for (;;) {
        await new Promise<void>((resolve) => {
          release = resolve;
          for (const w of waiting.splice(0)) w();
          signal.addEventListener('abort', () => resolve(), { once: true });
        });
        if (signal.aborted) return;
        yield Buffer.from(photo(file));
      }
    },
    release: async () => {},
  };
  const next = async () => {
    if (!release) await new Promise<void>((resolve) => waiting.push(resolve));
    const r = release!;
    release = null;
    r();
  };
  return { media, next };
}
