import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from './env.js';
import { withoutBody } from './body-limit.js';
import { partlyRead } from './body-chunks.js';

/** At most this much of a body nobody read is drained after an early answer, so the connection stays usable. */
const DRAIN_MAX_BYTES = 1024 * 1024;
/**
 * ... and for at most this long; a client still sending after that loses its connection, not the server a
 * reader. (On Node the adapter bounds it tighter still: it closes a connection whose body has not ended half
 * a second after the answer.)
 */
const DRAIN_MAX_MS = 5_000;

/**
 * Early answers (a 401 before the upload was read, a 413 on its declared length, a 404 for a route that takes
 * no body) must leave the connection usable. On HTTP/1.1 the next request on a keep-alive connection starts
 * where this one's body ends, so a body nobody reads either has to be read to its end or the connection has
 * to be closed, and the client told so. Left alone, the Node adapter's own drain stalls on a web stream that
 * nobody pulls (a body of a few hundred KB) and the socket is destroyed under the client's next request.
 *
 * So, after the handler: a body that was never read and declares a length up to {@link DRAIN_MAX_BYTES} is
 * read and discarded in the background (bounded by {@link DRAIN_MAX_MS}) while the answer goes out with
 * keep-alive; a larger body, or one of unknown length, gets `Connection: close` on the answer, so the client
 * knows not to reuse the connection and the server closes it after the answer.
 */
export function unreadBody(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    await next();
    // No body was handed to anyone (see bodyLimit); on Node the adapter drains what a GET carried itself.
    if (withoutBody(c.req.method)) return;
    const request = c.req.raw;
    const body = request.body;
    if (!body) return;
    if (request.bodyUsed || body.locked) {
      // Read in part and refused on the way (a chunked body over the limit, a bad part or sample met before the
      // end): the rest is not worth reading.
      if (c.res.status === 413 || partlyRead.has(body)) closeAfter(c);
      return;
    }
    const declared = request.headers.has('transfer-encoding') ? null : request.headers.get('content-length');
    const length = declared === null ? Number.NaN : Number(declared);
    if (length <= DRAIN_MAX_BYTES) {
      void discard(body, DRAIN_MAX_BYTES, DRAIN_MAX_MS);
      return;
    }
    closeAfter(c);
    // Cancelling tells the runtime nobody wants the rest; it ends the connection once the answer is out.
    void body.cancel().catch(() => {});
  };
}

/** Mark the answer as the last one on its connection (a new Response when the headers are immutable). */
function closeAfter(c: Parameters<MiddlewareHandler<AppEnv>>[0]) {
  try {
    c.res.headers.set('Connection', 'close');
  } catch {
    const headers = new Headers(c.res.headers);
    headers.set('Connection', 'close');
    c.res = new Response(c.res.body, { status: c.res.status, statusText: c.res.statusText, headers });
  }
}

/** Read and drop up to `maxBytes` within `maxMs`; past either bound the stream is cancelled. */
async function discard(body: ReadableStream<Uint8Array>, maxBytes: number, maxMs: number) {
  const reader = body.getReader();
  const timer = setTimeout(() => void reader.cancel().catch(() => {}), maxMs);
  try {
    let read = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      read += value.byteLength;
      if (read > maxBytes) {
        await reader.cancel();
        return;
      }
    }
  } catch {
    // A client that went away, or a body that failed its own limit: nothing left to keep usable.
  } finally {
    clearTimeout(timer);
  }
}
