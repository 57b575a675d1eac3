/**
 * Downloads Resemblyzer's published checkpoint for `npm run voice-model` (and so for `npm install`): into memory
 * only, bounded in size and in time, so that an interrupted, stalled or oversized transfer leaves nothing on
 * disk and an install never hangs. The bytes are checked against a pinned SHA-256 when one is given.
 */
import { createHash } from 'node:crypto';

/** Where the checkpoint comes from and what bounds its transfer. */
export interface CheckpointSource {
  url: string;
  /** SHA-256 the bytes must have (hex), or null when no checkpoint hash is pinned. */
  sha256: string | null;
  maxBytes: number;
  /** The whole transfer, connection included. */
  timeoutMs: number;
  /** Longest wait for the next bytes. */
  idleMs: number;
}

/** The transfer failed: the network, the server, a timeout or a size bound (nothing was received whole). */
export class DownloadFailed extends Error {
  override name = 'DownloadFailed';
}

/** The bytes arrived whole but are not the pinned file. */
export class PinMismatch extends Error {
  override name = 'PinMismatch';
}

/** The network error behind Node's `fetch failed`, as a short phrase (ECONNREFUSED, ENOTFOUND host ...). */
function networkCause(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string; hostname?: string } }).cause;
  if (cause?.code) return cause.hostname ? `${cause.code} ${cause.hostname}` : cause.code;
  return cause?.message ?? (error as Error).message;
}

/**
 * The checkpoint's bytes and their SHA-256.
 * @throws DownloadFailed when the server cannot be reached, answers other than 200, sends more than maxBytes,
 *   stops before Content-Length, or the transfer passes timeoutMs (or idleMs without data).
 * @throws PinMismatch when a SHA-256 is pinned and the bytes have another.
 */
export async function downloadCheckpoint(
  source: CheckpointSource,
  log: (line: string) => void = () => {},
): Promise<{ bytes: Uint8Array; sha256: string }> {
  const controller = new AbortController();
  let why = '';
  const stop = (reason: string) => {
    why ||= reason;
    controller.abort();
  };
  const deadline = setTimeout(() => stop(`took longer than ${source.timeoutMs / 1000} s`), source.timeoutMs);
  let idle = setTimeout(() => stop(`no answer for ${source.idleMs / 1000} s`), source.idleMs);
  const chunks: Uint8Array[] = [];
  let received = 0;
  const started = performance.now();
  try {
    let response: Response;
    try {
      response = await fetch(source.url, { signal: controller.signal, redirect: 'follow' });
    } catch (error) {
      throw new DownloadFailed(why ? `the download ${why}` : `cannot reach ${source.url} (${networkCause(error)})`);
    }
    if (response.status !== 200) {
      await response.body?.cancel();
      throw new DownloadFailed(`${source.url} answered HTTP ${response.status} ${response.statusText}`.trim());
    }
    const declared = Number(response.headers.get('content-length') ?? Number.NaN);
    if (declared > source.maxBytes) {
      await response.body?.cancel();
      throw new DownloadFailed(`${source.url} offers ${declared} bytes, more than the ${source.maxBytes} allowed`);
    }
    log(`downloading ${source.url}${Number.isFinite(declared) ? ` (${declared} bytes)` : ''}`);
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        received += chunk.length;
        if (received > source.maxBytes) stop(`passed the ${source.maxBytes} bytes allowed`);
        else chunks.push(chunk);
        clearTimeout(idle);
        idle = setTimeout(() => stop(`received nothing for ${source.idleMs / 1000} s`), source.idleMs);
        if (why) break;
      }
    } catch (error) {
      throw new DownloadFailed(
        `the download ${why || `was interrupted (${networkCause(error)})`} after ${received} bytes: nothing was kept`,
      );
    }
    if (why) throw new DownloadFailed(`the download ${why} after ${received} bytes: nothing was kept`);
    if (Number.isFinite(declared) && received !== declared)
      throw new DownloadFailed(`the download stopped after ${received} of ${declared} bytes: nothing was kept`);
  } finally {
    clearTimeout(deadline);
    clearTimeout(idle);
  }
  const bytes = new Uint8Array(received);
  let o = 0;
  for (const c of chunks) {
    bytes.set(c, o);
    o += c.length;
  }
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  log(`downloaded ${received} bytes in ${((performance.now() - started) / 1000).toFixed(1)} s (sha256 ${sha256})`);
  if (source.sha256 && sha256 !== source.sha256.toLowerCase())
    throw new PinMismatch(
      `${source.url} sent a file with sha256 ${sha256}, not the pinned ${source.sha256}: refusing it, nothing was installed`,
    );
  return { bytes, sha256 };
}
