/**
 * A live stream read at the pace of its slowest reader: the source is drained as fast as it delivers, and the
 * reader is always handed the newest item, the ones it had no time for being dropped (and counted).
 *
 * Why: the decoder samples the camera at `framesPerSecond`, and a frame's analysis may take longer than the gap
 * between frames (two cores shared by several sessions). Read in order, the frames queue up in the socket
 * between the sidecar and the API, and guidance, liveness and active-liveness instructions end up judging
 * pictures taken seconds, then tens of seconds, ago. A live capture must judge what the camera shows now.
 */
export async function* newestOnly<T>(source: AsyncIterable<T>, onDropped?: (count: number) => void): AsyncGenerator<T> {
  const iterator = source[Symbol.asyncIterator]();
  let newest: { item: T } | null = null;
  let ended = false;
  let failure: { error: unknown } | null = null;
  let wake: (() => void) | null = null;
  const notify = () => {
    const resolve = wake;
    wake = null;
    resolve?.();
  };
  let stopped = false;
  void (async () => {
    try {
      for (;;) {
        const next = await iterator.next();
        if (next.done || stopped) break;
        if (newest) onDropped?.(1);
        newest = { item: next.value };
        notify();
      }
    } catch (error) {
      failure = { error };
    } finally {
      ended = true;
      notify();
    }
  })();
  try {
    for (;;) {
      if (!newest && !ended) await new Promise<void>((resolve) => (wake = resolve));
      if (newest) {
        const { item } = newest;
        newest = null;
        yield item;
        continue;
      }
      if (failure) throw (failure as { error: unknown }).error;
      return;
    }
  } finally {
    // The reader is done: the source's own end (its signal, for the decoder's stream) stops the pump; the
    // flag stops it at its next item if the source goes on.
    stopped = true;
  }
}
