import { zlibSync } from 'fflate';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeJpeg, makePng, makeWav } from '../media.js';
// The same CRC-32 PNG chunks carry (the template format uses it too).
import { crc32 } from '../../../src/biometrics/crc32.js';
import { concatBytes } from '../../../src/biometrics/bytes.js';

/**
 * Hostile image and audio bytes, built here byte by byte so each one is exactly the trap it claims to be:
 * truncated files, real headers followed by garbage, polyglots, and decompression bombs whose headers
 * declare 65535x65535 pixels. One real photo (when the fixtures are fetched) keeps the extractor honest.
 */

const concat = (...parts: Uint8Array[]) => concatBytes(parts);
const ascii = (s: string) => Uint8Array.from(s, (c) => c.charCodeAt(0));

/** A PNG chunk with a correct CRC, so decoders that check CRCs go on to trust the content. */
function chunk(type: string, data: Uint8Array): Uint8Array {
  const head = new Uint8Array(8);
  new DataView(head.buffer).setUint32(0, data.length);
  head.set(ascii(type), 4);
  const crc = new Uint8Array(4);
  new DataView(crc.buffer).setUint32(0, crc32(concat(ascii(type), data)));
  return concat(head, data, crc);
}

const PNG_SIGNATURE = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function ihdr(width: number, height: number): Uint8Array {
  const d = new Uint8Array(13);
  const v = new DataView(d.buffer);
  v.setUint32(0, width);
  v.setUint32(4, height);
  d[8] = 8; // bit depth
  d[9] = 2; // RGB
  return chunk('IHDR', d);
}

/** Valid structure, 65535x65535 declared, and an IDAT of 8 MB of zeros deflated to a few KB: a bomb. */
export function pngBomb(first = true): Uint8Array {
  const idat = chunk('IDAT', zlibSync(new Uint8Array(8 * 1024 * 1024), { level: 9 }));
  const big = ihdr(65535, 65535);
  // `first = false` hides the huge header behind a harmless-looking text chunk, for decoders that only
  // peek at the first chunk's bytes to learn the size.
  const lead = first ? [big] : [chunk('tEXt', ascii('Comment\u0000hello')), big];
  return concat(PNG_SIGNATURE, ...lead, idat, chunk('IEND', new Uint8Array()));
}

/** A well-formed PNG header and a first chunk whose CRC is wrong. */
export function pngBadCrc(): Uint8Array {
  const png = makePng(8, 8);
  png[29] ^= 0xff;
  return png;
}

/** SOI, a JFIF APP0, a baseline SOF declaring `h`x`w`, then garbage, then EOI (so the file "ends" right). */
export function jpegHeaderAndGarbage(w = 640, h = 480, garbage = 2048): Uint8Array {
  const app0 = Uint8Array.from([0xff, 0xe0, 0x00, 0x10, ...ascii('JFIF'), 0, 1, 1, 0, 0, 1, 0, 1, 0, 0]);
  const sof = Uint8Array.from([
    0xff,
    0xc0,
    0x00,
    0x11,
    8,
    h >> 8,
    h & 0xff,
    w >> 8,
    w & 0xff,
    3,
    1,
    0x22,
    0,
    2,
    0x11,
    1,
    3,
    0x11,
    1,
  ]);
  const junk = new Uint8Array(garbage);
  crypto.getRandomValues(junk);
  return concat(Uint8Array.from([0xff, 0xd8]), app0, sof, junk, Uint8Array.from([0xff, 0xd9]));
}

/** A JPEG whose size marker hides behind bytes that break a naive marker walk. */
export function jpegHiddenHugeFrame(): Uint8Array {
  const real = jpegHeaderAndGarbage(65500, 65500, 512);
  return concat(Uint8Array.from([0xff, 0xd8, 0x00, 0x13, 0x37]), real.subarray(2));
}

/** A ZIP local file header, for polyglots. */
const zipTail = () =>
  concat(ascii('PK\u0003\u0004'), new Uint8Array(26), ascii('evil.sh'), ascii('#!/bin/sh\nrm -rf /\n'));

const photoPath = join(import.meta.dirname, '..', '..', 'fixtures', 'photos', 'labelled', 'obama', 'obama4_crop.jpg');

/** True when `node scripts/fetch-test-photos.mjs` has fetched the labelled photos. */
export const hasRealPhoto = existsSync(photoPath);

/** A real face photo when the fixtures were fetched, else a generated JPEG (no face in it). */
export function realPhoto(): Uint8Array {
  return existsSync(photoPath) ? new Uint8Array(readFileSync(photoPath)) : makeJpeg(64, 64);
}

/** Named hostile images; the names show up in failure reports. */
export function hostileImages(): Record<string, Uint8Array> {
  const jpeg = makeJpeg(64, 48);
  const png = makePng(16, 16);
  return {
    'png bomb 65535x65535': pngBomb(true),
    'png bomb behind a text chunk': pngBomb(false),
    'png with a bad CRC': pngBadCrc(),
    'png signature only': PNG_SIGNATURE,
    'png truncated': png.subarray(0, Math.floor(png.length / 2)),
    'jpeg header + garbage': jpegHeaderAndGarbage(),
    'jpeg declaring 65500x65500': jpegHeaderAndGarbage(65500, 65500),
    'jpeg hiding a 65500x65500 frame': jpegHiddenHugeFrame(),
    'jpeg truncated': jpeg.subarray(0, Math.floor(jpeg.length * 0.6)),
    'jpeg + zip polyglot': concat(jpeg, zipTail()),
    'png + html polyglot': concat(png, ascii('<html><script>alert(1)</script></html>')),
    gif: concat(ascii('GIF89a'), new Uint8Array(32)),
    svg: ascii('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'),
    'four zero bytes': new Uint8Array(4),
    'tiny png without a face': png,
    'wav instead of an image': makeWav(100),
    'real photo': realPhoto(),
  };
}

/** Named hostile recordings for voice fields. */
export function hostileAudio(): Record<string, Uint8Array> {
  const wav = makeWav(300);
  const lying = makeWav(50);
  new DataView(lying.buffer).setUint32(40, 0x7fffffff, true); // data chunk claims 2 GB
  return {
    'wav truncated': wav.subarray(0, 30),
    'wav claiming 2 GB of samples': lying,
    'jpeg instead of audio': makeJpeg(8, 8),
    'riff without wave': concat(ascii('RIFF'), new Uint8Array(40)),
    'short wav': wav,
  };
}
