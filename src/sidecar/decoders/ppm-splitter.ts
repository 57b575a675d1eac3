import { ppmHeader } from '../../protocols/ppm-frames.js';

/**
 * Cut ffmpeg's stream of PPM frames (image2pipe with the ppm encoder, src/protocols/ppm-frames.ts) into single
 * frames, each copied once into a buffer of its own size: a 640x480 frame is 921,615 bytes arriving in pipe
 * reads of 64 KB, and joining each read to what came before (as the JPEG splitter did) copied it 15 times.
 */
export class PpmSplitter {
  /** The frame being filled, and how much of it is. */
  private frame: Buffer | null = null;
  private filled = 0;
  /** Bytes of a header not complete yet (a read may end inside one). */
  private head: Buffer = Buffer.alloc(0);

  /** Add bytes read from the stream; returns the frames they complete. Throws on a malformed header. */
  push(chunk: Buffer): Buffer[] {
    const frames: Buffer[] = [];
    let rest = chunk;
    while (rest.length > 0) {
      if (!this.frame) {
        const head = this.head.length ? Buffer.concat([this.head, rest]) : rest;
        const header = ppmHeader(head);
        if (!header) {
          this.head = Buffer.from(head);
          return frames;
        }
        this.head = Buffer.alloc(0);
        this.frame = Buffer.allocUnsafe(header.headerLength + header.width * header.height * 3);
        this.filled = 0;
        rest = head;
      }
      const n = Math.min(rest.length, this.frame.length - this.filled);
      rest.copy(this.frame, this.filled, 0, n);
      this.filled += n;
      rest = rest.subarray(n);
      if (this.filled === this.frame.length) {
        frames.push(this.frame);
        this.frame = null;
      }
    }
    return frames;
  }
}
