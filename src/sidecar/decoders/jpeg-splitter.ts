/**
 * Cut a stream of concatenated JPEG images (ffmpeg's image2pipe with the mjpeg encoder) into single images.
 * An image runs from its SOI marker (FF D8) to its EOI marker (FF D9); inside the entropy-coded data a 0xFF
 * byte is always stuffed (followed by 00) or a restart marker, so FF D9 can only be the end.
 */
export class JpegSplitter {
  private pending = Buffer.alloc(0);

  /** Add bytes read from the stream; returns the images they complete. */
  push(chunk: Uint8Array): Buffer[] {
    this.pending = this.pending.length ? Buffer.concat([this.pending, chunk]) : Buffer.from(chunk);
    const images: Buffer[] = [];
    for (;;) {
      const start = this.pending.indexOf(SOI);
      if (start < 0) {
        this.pending = Buffer.alloc(0);
        return images;
      }
      const end = this.pending.indexOf(EOI, start + 2);
      if (end < 0) {
        this.pending = this.pending.subarray(start);
        return images;
      }
      images.push(Buffer.from(this.pending.subarray(start, end + 2)));
      this.pending = this.pending.subarray(end + 2);
    }
  }
}

const SOI = Buffer.from([0xff, 0xd8]);
const EOI = Buffer.from([0xff, 0xd9]);
