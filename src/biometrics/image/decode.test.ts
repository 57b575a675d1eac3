import jpeg from 'jpeg-js';
import { encode as encodePngRaw } from 'fast-png';
import { describe, expect, it } from 'vitest';
import { decodeImage, rgbaToRgb, sniffFormat } from './decode.js';
import { imageCost } from './image-cost.js';
import { jpegOrientation } from './exif.js';
import { exifOrientationSegment } from '../../../test/support/exif.js';
import { applyOrientation } from './image.js';

/** 3x2 image with distinct pixels: value = 10*y + x in the red channel. */
const tiny = () => {
  const data = new Uint8Array(3 * 2 * 3);
  for (let y = 0; y < 2; y++) for (let x = 0; x < 3; x++) data[(y * 3 + x) * 3] = 10 * y + x;
  return { width: 3, height: 2, data };
};
const reds = (img: { width: number; height: number; data: Uint8Array }) =>
  Array.from({ length: img.height }, (_, y) =>
    Array.from({ length: img.width }, (_, x) => img.data[(y * img.width + x) * 3]),
  );

describe('image decoding', () => {
  it('applies every EXIF orientation', () => {
    expect(reds(applyOrientation(tiny(), 1))).toEqual([
      [0, 1, 2],
      [10, 11, 12],
    ]);
    expect(reds(applyOrientation(tiny(), 2))).toEqual([
      [2, 1, 0],
      [12, 11, 10],
    ]);
    expect(reds(applyOrientation(tiny(), 3))).toEqual([
      [12, 11, 10],
      [2, 1, 0],
    ]);
    expect(reds(applyOrientation(tiny(), 4))).toEqual([
      [10, 11, 12],
      [0, 1, 2],
    ]);
    expect(reds(applyOrientation(tiny(), 5))).toEqual([
      [0, 10],
      [1, 11],
      [2, 12],
    ]);
    expect(reds(applyOrientation(tiny(), 6))).toEqual([
      [10, 0],
      [11, 1],
      [12, 2],
    ]);
    expect(reds(applyOrientation(tiny(), 7))).toEqual([
      [12, 2],
      [11, 1],
      [10, 0],
    ]);
    expect(reds(applyOrientation(tiny(), 8))).toEqual([
      [2, 12],
      [1, 11],
      [0, 10],
    ]);
  });

  it('reads the orientation tag of a JPEG and ignores broken EXIF', async () => {
    const enc = jpeg.encode({ width: 16, height: 8, data: new Uint8Array(16 * 8 * 4).fill(128) }, 90).data;
    const withExif = new Uint8Array([...enc.subarray(0, 2), ...exifOrientationSegment(6), ...enc.subarray(2)]);
    expect(jpegOrientation(withExif)).toBe(6);
    expect(jpegOrientation(enc)).toBe(1);
    const d = await decodeImage(withExif);
    expect([d.width, d.height, d.orientation, d.format]).toEqual([8, 16, 6, 'jpeg']);
    const broken = withExif.slice();
    broken[2 + 4 + 6] = 0x00; // corrupt the TIFF byte-order mark
    expect(jpegOrientation(broken)).toBe(1);
  });

  it('decodes grey, grey+alpha, RGBA, 16-bit and palette PNGs to RGB', async () => {
    const w = 2,
      h = 1;
    const grey = await decodeImage(
      encodePngRaw({ width: w, height: h, data: new Uint8Array([0, 255]), channels: 1, depth: 8 }),
    );
    expect(Array.from(grey.data)).toEqual([0, 0, 0, 255, 255, 255]);
    const rgba = await decodeImage(
      encodePngRaw({ width: w, height: h, data: new Uint8Array([255, 0, 0, 255, 0, 0, 0, 0]), channels: 4, depth: 8 }),
    );
    expect(Array.from(rgba.data)).toEqual([255, 0, 0, 255, 255, 255]); // transparent -> white
    const ga = await decodeImage(
      encodePngRaw({ width: w, height: h, data: new Uint8Array([0, 255, 0, 0]), channels: 2, depth: 8 }),
    );
    expect(Array.from(ga.data)).toEqual([0, 0, 0, 255, 255, 255]);
    const deep = await decodeImage(
      encodePngRaw({ width: w, height: h, data: new Uint16Array([65535, 0, 0, 0, 65535, 0]), channels: 3, depth: 16 }),
    );
    expect(Array.from(deep.data)).toEqual([255, 0, 0, 0, 255, 0]);
    const pal = await decodeImage(
      encodePngRaw({
        width: w,
        height: h,
        data: new Uint8Array([1, 0]),
        channels: 1,
        depth: 8,
        palette: [
          [1, 2, 3],
          [200, 100, 50],
        ],
      }),
    );
    expect(Array.from(pal.data)).toEqual([200, 100, 50, 1, 2, 3]);
  });

  it('names unsupported formats', async () => {
    expect(sniffFormat(new TextEncoder().encode('GIF89a'))).toBe('other:gif');
    expect(sniffFormat(new TextEncoder().encode('RIFF0000WEBP'))).toBe('other:webp');
    await expect(decodeImage(new TextEncoder().encode('BM......'))).rejects.toThrow(/bmp/);
  });

  it('refuses images above the pixel limit', async () => {
    const big = encodePngRaw({ width: 2000, height: 1000, data: new Uint8Array(2000 * 1000), channels: 1, depth: 8 });
    await expect(decodeImage(big, { maxMegapixels: 1 })).rejects.toMatchObject({ code: 'IMAGE_TOO_LARGE' });
  });
});

/** Width and height as the cost judgement reads them from the structure (null for neither JPEG nor PNG). */
const imageDimensions = (b: Uint8Array) => {
  const cost = imageCost(b);
  return cost && { width: cost.width, height: cost.height };
};

describe('image dimensions from the structure, before any decoding', () => {
  const rgba = (w: number, h: number) => new Uint8Array(w * h * 4).fill(200);
  const jpegOf = (w: number, h: number) =>
    new Uint8Array(jpeg.encode({ data: rgba(w, h), width: w, height: h }, 80).data);

  it('reads JPEG frame headers, also behind fill bytes, and PNG IHDR', () => {
    expect(imageDimensions(jpegOf(40, 30))).toEqual({ width: 40, height: 30 });
    // Any number of 0xFF fill bytes may stand before a marker: libjpeg skips them, so a lie could hide there.
    const plain = jpegOf(40, 30);
    const filled = Uint8Array.from([0xff, 0xd8, 0xff, 0xff, 0xff, ...plain.subarray(2)]);
    expect(imageDimensions(filled)).toEqual({ width: 40, height: 30 });
    expect(
      imageDimensions(new Uint8Array(encodePngRaw({ width: 7, height: 5, data: rgba(7, 5), channels: 4 }))),
    ).toEqual({ width: 7, height: 5 });
  });

  it('gives no size for other formats, and refuses a PNG whose first chunk is not IHDR', () => {
    expect(imageDimensions(new TextEncoder().encode('GIF89a............'))).toBeNull();
    const png = new Uint8Array(encodePngRaw({ width: 7, height: 5, data: rgba(7, 5), channels: 4 }));
    png.set([0x74, 0x45, 0x58, 0x74], 12); // 'tEXt' where IHDR belongs
    expect(() => imageDimensions(png)).toThrow(expect.objectContaining({ code: 'INVALID_IMAGE' }));
  });

  it('refuses an image over the pixel limit before decoding it', async () => {
    await expect(decodeImage(jpegOf(40, 30), { maxMegapixels: 0.001 })).rejects.toMatchObject({
      code: 'IMAGE_TOO_LARGE',
    });
  });

  it("drops the alpha byte of every pixel, whatever the RGBA view's alignment and the pixels past the last four", () => {
    // 4 pixels per pass: every remainder 0-3, and images too small for a single pass.
    for (const n of [0, 1, 2, 3, 4, 5, 6, 7, 36, 37, 38, 39]) {
      const backing = new Uint8Array(n * 4 + 1);
      for (let i = 0; i < backing.length; i++) backing[i] = (i * 97 + 13) & 255;
      const expected = (rgba: Uint8Array) =>
        Array.from({ length: n * 3 }, (_, i) => rgba[Math.floor(i / 3) * 4 + (i % 3)]);
      const aligned = backing.subarray(0, n * 4); // the 32-bit path
      const unaligned = backing.subarray(1, n * 4 + 1); // the byte path
      expect(Array.from(rgbaToRgb(aligned, n)), `n = ${n}`).toEqual(expected(aligned));
      expect(Array.from(rgbaToRgb(unaligned, n)), `n = ${n}`).toEqual(expected(unaligned));
      expect(Array.from(rgbaToRgb(new Uint8ClampedArray(aligned), n)), `n = ${n}`).toEqual(expected(aligned));
    }
  });
});
