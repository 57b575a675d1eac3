// The hostile files of the hostile benchmarks and test/http/hostile-uploads.test.ts: every one at most 64 KB (issue 32: "no request of at most 64 KB
// holds another account's request for more than 5 s"), made by the generators of test/support/hostile-*.ts, and
// the costliest files the bounds still admit, which set what an attacker can still make a worker do.
import { emptyScansJpeg, manyComponentsJpeg, restartTrickJpeg, segment } from './hostile-jpeg.js';
import { compressedChunkBombPng, flatPng, inflationBombPng, manyChunksPng } from './hostile-png.js';
import { longWav } from './hostile-wav.js';
import { makeJpeg } from './media.js';

/** One hostile file: what it is, whether a face or a voice field carries it, and why it is costly. */
export interface HostileFile {
  name: string;
  kind: 'face' | 'voice';
  bytes: Uint8Array;
  what: string;
}

/** A valid 96x96 JPEG whose frame header claims `width`x`height`, padded to 9 KB (extraction-admission's lie). */
export function lyingJpeg(width: number, height: number): Uint8Array {
  const real = makeJpeg(96, 96);
  for (let at = 2; at + 9 < real.length; ) {
    const marker = real[at + 1]!;
    if (marker >= 0xc0 && marker <= 0xc2) {
      real.set([height >> 8, height & 0xff, width >> 8, width & 0xff], at + 5);
      break;
    }
    at += 2 + ((real[at + 2]! << 8) | real[at + 3]!);
  }
  const comment = segment(0xfe, new Array(9 * 1024 - real.length - 4).fill(0x20));
  return Uint8Array.from([...real.subarray(0, 2), ...comment, ...real.subarray(2)]);
}

/** The files, each at most 64 KB. */
export function hostileFiles(): HostileFile[] {
  return [
    {
      name: 'jpeg-empty-scans',
      kind: 'face',
      bytes: emptyScansJpeg(4000, 4000, 1000),
      what: '1,000 empty progressive scans over 4000x4000 (issue 32, finding 1)',
    },
    {
      name: 'jpeg-restart-intervals',
      kind: 'face',
      bytes: restartTrickJpeg(4000, 4000, 200),
      what: 'restart interval of one MCU, 200 scans without restart markers over 4000x4000',
    },
    {
      name: 'jpeg-cmyk',
      kind: 'face',
      bytes: manyComponentsJpeg(4000, 4000, 4, { adobe: true }),
      what: 'a 16-megapixel Adobe YCCK frame (the pure-JS decoder) with empty DC scans',
    },
    {
      name: 'jpeg-scans-admitted',
      kind: 'face',
      bytes: emptyScansJpeg(4000, 4000, 40),
      what: 'the most empty scans the bound admits over 4000x4000 (40)',
    },
    {
      name: 'jpeg-header-lie',
      kind: 'face',
      bytes: lyingJpeg(4000, 4000),
      what: 'a 96x96 baseline JPEG whose header claims 4000x4000 (admitted: 16 megapixels)',
    },
    {
      name: 'png-inflation-bomb',
      kind: 'face',
      bytes: inflationBombPng(64, 64, 60 * 2 ** 20),
      what: 'a 64x64 header over image data inflating to 60 MiB (issue 32, finding 6, at 64 KB)',
    },
    {
      name: 'png-iccp-bomb',
      kind: 'face',
      bytes: compressedChunkBombPng('iCCP', 60 * 2 ** 20),
      what: 'an 8x8 image with an ICC profile inflating to 60 MiB',
    },
    {
      name: 'png-many-chunks',
      kind: 'face',
      bytes: manyChunksPng(5000, 0),
      what: '5,000 empty text chunks before an 8x8 image',
    },
    {
      name: 'png-flat-16mp',
      kind: 'face',
      bytes: flatPng(4000, 4000),
      what: 'a 4000x4000 RGBA PNG of zeros (admitted: the costliest PNG at the pixel limit)',
    },
    {
      name: 'wav-8s',
      kind: 'voice',
      bytes: longWav(8),
      what: 'the longest recording 64 KB hold: 8 s of 8-bit samples at 8 kHz',
    },
  ];
}
