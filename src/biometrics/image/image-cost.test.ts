// Every hostile file the generators of test/support/hostile-*.ts make is judged by its structure before any
// decoding: refused with the code a client can act on, or admitted with the work it will cost. The decoders
// then hold to the same bounds (a PNG's inflation stops at its header's size). No timing here: what the bounds
// save is measured by `npm run bench -- hostile`.
import { describe, expect, it } from 'vitest';
import * as J from '../../../test/support/hostile-jpeg.js';
import * as P from '../../../test/support/hostile-png.js';
import * as W from '../../../test/support/hostile-wav.js';
import { makeJpeg } from '../../../test/support/media.js';
import { readWavLayout } from '../voice/wav.js';
import { decodeImage } from './decode.js';
import { jpegOrientation } from './exif.js';
import { imageCost, JPEG_COMPONENT_PASSES } from './image-cost.js';
import { MAX_JPEG_SCANS } from './jpeg-structure.js';

const refusal = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    return { code: (e as { code: string }).code, message: (e as Error).message };
  }
  return null;
};

describe('JPEG: the work its markers promise, judged before decoding', () => {
  it("refuses issue 32's file: 1,000 empty progressive scans over 4000x4000 in 12 KB", () => {
    const file = J.emptyScansJpeg(4000, 4000, 1000);
    expect(file.length).toBeLessThan(13 * 1024);
    expect(refusal(() => imageCost(file))).toEqual({
      code: 'IMAGE_TOO_COSTLY',
      message: `the JPEG holds more than ${MAX_JPEG_SCANS} scans; no encoder writes that many`,
    });
  });

  it('counts pixels x scans: 40 empty scans over 4000x4000 are admitted, 48 are not', () => {
    // 48 passes of 250,000 blocks, the frame's own blocks included: 39 + 1 fit, 47 + 1 do not.
    const admitted = imageCost(J.emptyScansJpeg(4000, 4000, 40))!;
    expect(admitted.jpeg).toMatchObject({ scans: 40, scanBlocks: 40 * 250_000, frameBlocks: 250_000 });
    expect(refusal(() => imageCost(J.emptyScansJpeg(4000, 4000, 48)))).toMatchObject({
      code: 'IMAGE_TOO_COSTLY',
      message: expect.stringContaining(`49 passes over a 16-megapixel image; at most ${JPEG_COMPONENT_PASSES}`),
    });
    // The same scans over a small frame cost little, and the bound follows BIMS_MAX_IMAGE_MEGAPIXELS.
    expect(imageCost(J.emptyScansJpeg(1000, 1000, 200))).toMatchObject({ width: 1000 });
    expect(refusal(() => imageCost(J.emptyScansJpeg(1000, 1000, 200), { maxMegapixels: 1 }))?.code).toBe(
      'IMAGE_TOO_COSTLY',
    );
  });

  it('weighs colour scans by their components and sampling, and restarts by the MCUs they split', () => {
    // 4:2:0 over 4000x4000: Y has 250,000 blocks, Cb and Cr 62,500 each; scans take them in turn.
    expect(imageCost(J.emptyScansJpeg(4000, 4000, 3, { colour: true }))!.jpeg).toMatchObject({
      scanBlocks: 375_000,
      frameBlocks: 375_000,
    });
    // A restart interval of one MCU, no restart markers: each scan resynchronises 250,000 times.
    const restarts = imageCost(J.restartTrickJpeg(4000, 4000, 4))!.jpeg!;
    expect(restarts.restarts).toBe(1_000_000);
    expect(refusal(() => imageCost(J.restartTrickJpeg(4000, 4000, 8)))?.code).toBe('IMAGE_TOO_COSTLY');
  });

  it('weighs CMYK (decoded by the JavaScript decoder) eight times: 16 megapixels refused, 4 admitted', () => {
    expect(refusal(() => imageCost(J.manyComponentsJpeg(4000, 4000, 4, { adobe: true })))).toMatchObject({
      code: 'IMAGE_TOO_COSTLY',
      message: expect.stringContaining('JavaScript decoder: CMYK'),
    });
    expect(imageCost(J.manyComponentsJpeg(2000, 2000, 4, { adobe: true }))).toMatchObject({ decoder: 'js-jpeg' });
    expect(imageCost(J.manyComponentsJpeg(2000, 2000, 3))).toMatchObject({ decoder: 'wasm-jpeg' });
  });

  it('refuses the codings neither decoder takes, by name', () => {
    const cases: [Uint8Array, RegExp][] = [
      [J.codingProcessJpeg(64, 64, 0xc9), /arithmetic-coded sequential/],
      [J.codingProcessJpeg(64, 64, 0xca), /arithmetic-coded progressive/],
      [J.codingProcessJpeg(64, 64, 0xc3), /lossless/],
      [J.codingProcessJpeg(64, 64, 0xc5), /hierarchical/],
      [J.codingProcessJpeg(64, 64, 0xc1, 12), /12-bit/],
      [J.manyComponentsJpeg(64, 64, 2), /2 colour components/],
      [J.manyComponentsJpeg(64, 64, 10), /10 colour components/],
    ];
    for (const [file, why] of cases)
      expect(refusal(() => imageCost(file))).toEqual({
        code: 'UNSUPPORTED_FORMAT',
        message: expect.stringMatching(why),
      });
  });

  it('refuses broken structures and too many segments without decoding', () => {
    expect(refusal(() => imageCost(J.manyFramesJpeg(64, 64, 2)))).toMatchObject({
      code: 'INVALID_IMAGE',
      message: expect.stringContaining('more than one frame header'),
    });
    expect(refusal(() => imageCost(J.manySegmentsJpeg(3000)))?.code).toBe('IMAGE_TOO_COSTLY');
    const real = makeJpeg(64, 48);
    expect(refusal(() => imageCost(real.subarray(0, real.length - 2)))).toMatchObject({
      code: 'INVALID_IMAGE',
      message: expect.stringContaining('no end-of-image marker'),
    });
    // Trailing bytes after the end-of-image marker (some cameras pad) are no concern.
    expect(imageCost(Uint8Array.from([...real, 0, 0, 0]))).toMatchObject({ width: 64, height: 48 });
  });

  it('reads no EXIF orientation from an IFD that claims 60,000 entries and loops back on itself', () => {
    // The reader looks at 1,000 entries at most and never follows the next-IFD link.
    const file = J.exifLoopJpeg(60_000);
    expect(jpegOrientation(file)).toBe(1);
    expect(imageCost(file)).toMatchObject({ width: 64, height: 64 });
  });
});

describe('PNG: inflation bounded by the header', () => {
  it("refuses issue 32's 1 MB file (a 64x64 header over data inflating to 1 GiB) by its size, without inflating", () => {
    const file = P.inflationBombPng(64, 64, 2 ** 30);
    expect(refusal(() => imageCost(file))).toMatchObject({
      code: 'INVALID_IMAGE',
      message: expect.stringContaining('for a 64x64 image of 12352 bytes'),
    });
  });

  it('stops the inflation of a bomb small enough to pass one byte past what the header implies', async () => {
    // 64 KB of data inflating to 64 MiB under a 160x160 header (76,960 bytes): admitted by its size...
    const file = P.inflationBombPng(160, 160, 64 * 2 ** 20);
    expect(file.length).toBeLessThan(80 * 1024);
    expect(imageCost(file)!.png!.inflatedBytes).toBe(160 * (160 * 3 + 1));
    // ...and refused once the inflater has produced the header's bytes and one chunk more.
    await expect(decodeImage(file)).rejects.toMatchObject({
      code: 'INVALID_IMAGE',
      message: expect.stringContaining('inflates past the 76960 bytes its 160x160 header implies'),
    });
  });

  it('never inflates ancillary chunks: an ICC profile or text inflating to 1 GiB is skipped', async () => {
    for (const type of ['iCCP', 'zTXt', 'iTXt'] as const)
      await expect(decodeImage(P.compressedChunkBombPng(type, 2 ** 30))).resolves.toMatchObject({ width: 8 });
  });

  it('refuses more than 65,536 chunks, and decodes only the default image of an APNG', async () => {
    expect(refusal(() => imageCost(P.manyChunksPng(70_000, 0)))?.code).toBe('IMAGE_TOO_COSTLY');
    expect(refusal(() => imageCost(P.manyIdatPng(300, 300, 3)))?.code).toBe('IMAGE_TOO_COSTLY');
    const apng = P.animatedPng(64, 48, 50);
    expect(imageCost(apng)!.png!.dataBytes).toBeLessThan(200);
    await expect(decodeImage(apng)).resolves.toMatchObject({ width: 64, height: 48 });
  });
});

describe('WAV: the recording length read from the chunks', () => {
  const code = (bytes: Uint8Array) => refusal(() => readWavLayout(bytes));
  it('refuses lying sizes and recordings past two minutes, and reads many small chunks in one pass', () => {
    expect(code(W.lyingDataWav())).toMatchObject({
      code: 'INVALID_AUDIO',
      message: expect.stringContaining('truncated'),
    });
    expect(code(W.hugeFmtWav())).toMatchObject({ code: 'INVALID_AUDIO', message: expect.stringContaining('fmt') });
    expect(code(W.longWav(121))).toEqual({
      code: 'AUDIO_TOO_LONG',
      message: 'the recording lasts 121.0 s; at most 120 s are accepted',
    });
    expect(readWavLayout(W.longWav(120))).toMatchObject({ frames: 960_000, sampleRate: 8000 });
    expect(readWavLayout(W.manyChunksWav(100_000))).toMatchObject({ frames: 8000 });
  });
});
