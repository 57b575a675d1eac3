import { describe, expect, it } from 'vitest';
import { decodeWav, encodeWav16 } from './wav.js';

/** Builds a WAV by hand: `format` 1 PCM / 3 float, optionally WAVE_FORMAT_EXTENSIBLE. */
function wav(opts: {
  format: 1 | 3;
  bits: number;
  channels: number;
  rate: number;
  frames: number[][];
  extensible?: boolean;
  extraChunk?: boolean;
}): Uint8Array {
  const width = opts.bits / 8;
  const dataLen = opts.frames.length * opts.channels * width;
  const fmtLen = opts.extensible ? 40 : 16;
  const extra = opts.extraChunk ? 8 + 3 + 1 : 0; // odd-sized LIST chunk + pad byte
  const out = new Uint8Array(12 + 8 + fmtLen + extra + 8 + dataLen);
  const dv = new DataView(out.buffer);
  const put = (o: number, s: string) => {
    for (let i = 0; i < 4; i++) out[o + i] = s.charCodeAt(i);
  };
  put(0, 'RIFF');
  dv.setUint32(4, out.length - 8, true);
  put(8, 'WAVE');
  put(12, 'fmt ');
  dv.setUint32(16, fmtLen, true);
  dv.setUint16(20, opts.extensible ? 0xfffe : opts.format, true);
  dv.setUint16(22, opts.channels, true);
  dv.setUint32(24, opts.rate, true);
  dv.setUint32(28, opts.rate * opts.channels * width, true);
  dv.setUint16(32, opts.channels * width, true);
  dv.setUint16(34, opts.bits, true);
  if (opts.extensible) {
    dv.setUint16(36, 22, true);
    dv.setUint16(38, opts.bits, true);
    dv.setUint16(44, opts.format, true);
  }
  let o = 20 + fmtLen;
  if (opts.extraChunk) {
    put(o, 'LIST');
    dv.setUint32(o + 4, 3, true);
    o += 12;
  }
  put(o, 'data');
  dv.setUint32(o + 4, dataLen, true);
  o += 8;
  for (const frame of opts.frames) {
    for (const v of frame) {
      if (opts.format === 3) {
        if (opts.bits === 32) dv.setFloat32(o, v, true);
        else dv.setFloat64(o, v, true);
      } else if (opts.bits === 8) dv.setUint8(o, Math.round(v * 128 + 128));
      else if (opts.bits === 16) dv.setInt16(o, Math.round(v * 32768), true);
      else if (opts.bits === 24) {
        const x = Math.round(v * 8388608);
        dv.setUint8(o, x & 0xff);
        dv.setUint8(o + 1, (x >> 8) & 0xff);
        dv.setInt8(o + 2, x >> 16);
      } else dv.setInt32(o, Math.round(v * 2147483648), true);
      o += width;
    }
  }
  return out;
}

const values = [0, 0.5, -0.5, 0.25, -0.75];

describe('decodeWav', () => {
  for (const [format, bits] of [
    [1, 8],
    [1, 16],
    [1, 24],
    [1, 32],
    [3, 32],
    [3, 64],
  ] as const) {
    it(`reads ${format === 1 ? 'PCM' : 'float'} ${bits}-bit mono, plain and WAVE_FORMAT_EXTENSIBLE`, () => {
      for (const extensible of [false, true]) {
        const d = decodeWav(wav({ format, bits, channels: 1, rate: 8000, frames: values.map((v) => [v]), extensible }));
        expect(d.sampleRate).toBe(8000);
        expect(d.bitsPerSample).toBe(bits);
        expect(Array.from(d.samples)).toEqual(values.map((v) => expect.closeTo(v, bits === 8 ? 2 : 6)));
      }
    });
  }

  it('averages stereo channels and skips unknown (odd-sized) chunks', () => {
    const d = decodeWav(
      wav({
        format: 1,
        bits: 16,
        channels: 2,
        rate: 44100,
        frames: [
          [0.5, -0.5],
          [0.5, 0.25],
        ],
        extraChunk: true,
      }),
    );
    expect(d.channels).toBe(2);
    expect(Array.from(d.samples)).toEqual([0, expect.closeTo(0.375, 6)]);
  });

  it('counts full-scale samples as clipped', () => {
    const d = decodeWav(encodeWav16([1, -1, 0.2, 0.3], 16000));
    expect(d.clippedRatio).toBe(0.5);
  });

  it('refuses a truncated data chunk, a partial frame and a missing fmt chunk as INVALID_AUDIO', () => {
    const good = encodeWav16(new Float32Array(1000).fill(0.1), 16000);
    expect(() => decodeWav(good.subarray(0, good.length - 100))).toThrow(
      expect.objectContaining({ code: 'INVALID_AUDIO', message: expect.stringMatching(/truncated/) }),
    );
    expect(() => decodeWav(good.subarray(0, 30))).toThrow(expect.objectContaining({ code: 'INVALID_AUDIO' }));
    const odd = good.slice(0, good.length - 1);
    new DataView(odd.buffer).setUint32(40, 1999, true);
    expect(() => decodeWav(odd)).toThrow(
      expect.objectContaining({ code: 'INVALID_AUDIO', message: expect.stringMatching(/inside a sample frame/) }),
    );
    expect(() =>
      decodeWav(new Uint8Array([...new TextEncoder().encode('RIFF'), 4, 0, 0, 0, ...new TextEncoder().encode('WAVE')])),
    ).toThrow(expect.objectContaining({ code: 'INVALID_AUDIO' }));
  });

  it('names other containers and encodings as UNSUPPORTED_FORMAT', () => {
    const enc = new TextEncoder();
    expect(() => decodeWav(enc.encode('OggS\0\x02rest of an ogg page'))).toThrow(
      expect.objectContaining({ code: 'UNSUPPORTED_FORMAT', message: expect.stringMatching(/Ogg/) }),
    );
    expect(() => decodeWav(enc.encode('ID3\x04 an mp3 with tags'))).toThrow(
      expect.objectContaining({ code: 'UNSUPPORTED_FORMAT', message: expect.stringMatching(/MP3/) }),
    );
    expect(() => decodeWav(enc.encode('hello, this is text'))).toThrow(
      expect.objectContaining({ code: 'UNSUPPORTED_FORMAT' }),
    );
    const alaw = encodeWav16([0.1, 0.2], 8000);
    new DataView(alaw.buffer).setUint16(20, 6, true);
    expect(() => decodeWav(alaw)).toThrow(
      expect.objectContaining({ code: 'UNSUPPORTED_FORMAT', message: expect.stringMatching(/encoding 6/) }),
    );
    expect(() => decodeWav(encodeWav16([0.1, 0.2], 96000))).toThrow(
      expect.objectContaining({ code: 'UNSUPPORTED_FORMAT', message: expect.stringMatching(/96000/) }),
    );
  });
});
