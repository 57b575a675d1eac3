import jpeg from 'jpeg-js';
import { encodePng } from '../../src/biometrics/image/encode.js';

/**
 * Small real media files made in the test itself, so suites that store and serve samples need no fixture
 * download: PNG through the project's own encoder, JPEG through jpeg-js, WAV as a RIFF header plus PCM.
 */

/** A deterministic RGB gradient with a seed-dependent tint. */
function raster(width: number, height: number, seed: number) {
  const data = new Uint8Array(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 3;
      data[i] = (x * 255) / width;
      data[i + 1] = (y * 255) / height;
      data[i + 2] = (seed * 37 + x * y) & 0xff;
    }
  }
  return { width, height, data };
}

export function makePng(width: number, height: number, seed = 1): Uint8Array {
  return encodePng(raster(width, height, seed));
}

/** PNG of random pixels: does not compress, so its size is about width*height*3 bytes. */
export function makeNoisePng(width: number, height: number): Uint8Array {
  const img = raster(width, height, 0);
  // getRandomValues fills at most 65536 bytes per call.
  for (let off = 0; off < img.data.length; off += 65536) crypto.getRandomValues(img.data.subarray(off, off + 65536));
  return encodePng(img);
}

export function makeJpeg(width: number, height: number, seed = 1): Uint8Array {
  const rgb = raster(width, height, seed).data;
  const rgba = new Uint8Array(width * height * 4);
  for (let p = 0; p < width * height; p++) {
    rgba[p * 4] = rgb[p * 3]!;
    rgba[p * 4 + 1] = rgb[p * 3 + 1]!;
    rgba[p * 4 + 2] = rgb[p * 3 + 2]!;
    rgba[p * 4 + 3] = 255;
  }
  return new Uint8Array(jpeg.encode({ data: rgba, width, height }, 85).data);
}

/** A mono 16-bit PCM WAV of a sine tone. */
export function makeWav(durationMs: number, sampleRate = 16000, frequency = 440): Uint8Array {
  const samples = Math.round((durationMs * sampleRate) / 1000);
  const buffer = new ArrayBuffer(44 + samples * 2);
  const view = new DataView(buffer);
  const ascii = (offset: number, text: string) =>
    [...text].forEach((ch, i) => view.setUint8(offset + i, ch.charCodeAt(0)));
  ascii(0, 'RIFF');
  view.setUint32(4, 36 + samples * 2, true);
  ascii(8, 'WAVE');
  ascii(12, 'fmt ');
  view.setUint32(16, 16, true);
  view.setUint16(20, 1, true); // PCM
  view.setUint16(22, 1, true); // mono
  view.setUint32(24, sampleRate, true);
  view.setUint32(28, sampleRate * 2, true);
  view.setUint16(32, 2, true);
  view.setUint16(34, 16, true);
  ascii(36, 'data');
  view.setUint32(40, samples * 2, true);
  for (let i = 0; i < samples; i++)
    view.setInt16(44 + i * 2, Math.round(Math.sin((2 * Math.PI * frequency * i) / sampleRate) * 12000), true);
  return new Uint8Array(buffer);
}
