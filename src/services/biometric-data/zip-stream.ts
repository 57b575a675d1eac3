import { Zip, ZipPassThrough } from 'fflate';

/**
 * A ZIP archive written as a web ReadableStream (so it runs unchanged on Node, Deno and Workers), pulling
 * one file at a time from an async source. Entries are stored, not deflated: JPEG, PNG and most of what we
 * serve are already compressed, and storing keeps the CPU cost at a CRC. Memory holds the file being
 * written plus what the source has loaded ahead, never the archive.
 *
 * fflate writes no ZIP64 records, so an archive must stay under 4 GiB; the downloads cap their size far
 * below that (see `BIMS_MAX_DOWNLOAD_BYTES`).
 */

export interface ZipFileInput {
  /** Path inside the archive, '/'-separated; the caller makes it safe. */
  path: string;
  bytes: Uint8Array;
  modifiedAt: Date;
}

/** ZIP (DOS) timestamps start in 1980. */
const EARLIEST = new Date('1980-01-02T00:00:00Z');

/**
 * Stream the files of `source` as one ZIP. Cancelling the stream (the client went away) stops the source.
 * A failing source errors the stream: the client gets a truncated archive that no unzip accepts, never one
 * that silently lacks a file.
 */
export function zipStream(source: AsyncIterable<ZipFileInput>): ReadableStream<Uint8Array> {
  const files = source[Symbol.asyncIterator]();
  let zip: Zip | undefined;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      zip = new Zip((error, chunk, final) => {
        if (error) return controller.error(error);
        if (chunk.length > 0) controller.enqueue(chunk);
        if (final) controller.close();
      });
    },
    // fflate emits synchronously, so each pull enqueues one whole file (header, bytes, descriptor).
    async pull() {
      const next = await files.next();
      if (next.done) {
        zip!.end();
        return;
      }
      const entry = new ZipPassThrough(next.value.path);
      entry.mtime = next.value.modifiedAt < EARLIEST ? EARLIEST : next.value.modifiedAt;
      zip!.add(entry);
      entry.push(next.value.bytes, true);
    },
    async cancel() {
      zip?.terminate();
      await files.return?.();
    },
  });
}
