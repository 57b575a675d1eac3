import { describe, expect, it } from 'vitest';
import { unitVector } from '../../test/support/vectors.js';
import { BiometricError } from './errors.js';
import { cosine, cosineInt8, crc32, encodeFaceTemplate, encodeTemplate, parseTemplate, quantize } from './template.js';
import { dequantize } from '../../test/support/template-records.js';

const V = 'face:test@1/p1';
const make = (e = unitVector(1), quality: number | null = 87) =>
  encodeTemplate({ templateVersion: V, records: [{ modality: 'face', quality, embedding: e }] });
const code = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    return BiometricError.is(e) ? e.code : String(e);
  }
  return 'no error';
};

describe('template format v1', () => {
  it('round-trips version, modality, quality and the quantised embedding', () => {
    const e = unitVector(7);
    const t = parseTemplate(make(e, 87));
    expect(t.formatVersion).toBe(1);
    expect(t.templateVersion).toBe(V);
    expect(t.records).toHaveLength(1);
    expect(t.records[0].modality).toBe('face');
    expect(t.records[0].quality).toBe(87);
    expect(t.records[0].q).toHaveLength(512);
    const back = dequantize(t.records[0]);
    for (let i = 0; i < 512; i++) expect(Math.abs(back[i] - e[i])).toBeLessThanOrEqual(t.records[0].scale / 2 + 1e-7);
    expect(parseTemplate(make(e, null)).records[0].quality).toBeNull();
    expect(encodeFaceTemplate(V, { embedding: e, quality: 87 })).toEqual(make(e, 87));
  });

  it('parses bytes that are a view into a larger buffer (database drivers hand out pooled Buffers)', () => {
    const bytes = make(unitVector(3));
    const pool = new Uint8Array(8192).fill(7);
    pool.set(bytes, 1000);
    const view = Buffer.from(pool.buffer, 1000, bytes.length);
    const parsed = parseTemplate(view);
    expect(parsed.records[0].q).toHaveLength(512);
    expect(parsed.records[0].q).toEqual(parseTemplate(bytes).records[0].q);
  });

  it('has the documented layout: magic, version, header, 8-byte record header, CRC-32 trailer', () => {
    const b = make();
    expect(Array.from(b.subarray(0, 5))).toEqual([0x42, 0x49, 0x4d, 0x54, 1]);
    expect(b[5]).toBe(V.length);
    expect(b.length).toBe(4 + 1 + 1 + V.length + 1 + 8 + 512 + 4);
    const dv = new DataView(b.buffer);
    expect(dv.getUint32(b.length - 4, true)).toBe(crc32(b.subarray(0, b.length - 4)));
  });

  it('int8 cosine stays within 0.005 of float32 cosine', () => {
    for (let k = 0; k < 200; k++) {
      const a = unitVector(k * 2 + 1),
        b = unitVector(k * 2 + 2);
      // Mix in a shared component so that similar and dissimilar pairs are both covered.
      const w = (k % 10) / 10;
      const c = a.map((x, i) => x * (1 - w) + b[i] * w);
      expect(Math.abs(cosineInt8(quantize(a).q, quantize(c).q) - cosine(a, c))).toBeLessThan(0.005);
    }
  });

  it('rejects truncated, foreign, tampered and trailing bytes with INVALID_TEMPLATE', () => {
    const b = make();
    for (let n = 0; n < b.length; n += 37) expect(code(() => parseTemplate(b.subarray(0, n)))).toBe('INVALID_TEMPLATE');
    expect(code(() => parseTemplate(b.subarray(0, b.length - 1)))).toBe('INVALID_TEMPLATE');
    expect(code(() => parseTemplate(new TextEncoder().encode('{"embedding":[1,2,3]}')))).toBe('INVALID_TEMPLATE');
    const tampered = b.slice();
    tampered[100] ^= 1;
    expect(code(() => parseTemplate(tampered))).toBe('INVALID_TEMPLATE');
    const future = b.slice();
    future[4] = 2;
    expect(code(() => parseTemplate(future))).toBe('INVALID_TEMPLATE');
    const trailing = new Uint8Array(b.length + 1);
    trailing.set(b);
    expect(code(() => parseTemplate(trailing))).toBe('INVALID_TEMPLATE');
  });

  it('holds several records (face and voice)', () => {
    const b = encodeTemplate({
      templateVersion: V,
      records: [
        { modality: 'face', embedding: unitVector(1) },
        { modality: 'voice', quality: 50, embedding: unitVector(2, 256) },
      ],
    });
    const t = parseTemplate(b);
    expect(t.records.map((r) => [r.modality, r.q.length])).toEqual([
      ['face', 512],
      ['voice', 256],
    ]);
  });
});
