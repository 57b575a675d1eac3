import { BiometricError } from './errors.js';
import { crc32 } from './crc32.js';

/** Modalities a template record can hold. */
export type Modality = 'face' | 'voice';
const MODALITY_CODE: Record<Modality, number> = { face: 1, voice: 2 };
const CODE_MODALITY: Record<number, Modality> = { 1: 'face', 2: 'voice' };

/** Magic bytes "BIMT". */
export const TEMPLATE_MAGIC = [0x42, 0x49, 0x4d, 0x54] as const;
/** Binary format version written by `encodeTemplate`. */
export const TEMPLATE_FORMAT_VERSION = 1;

/** One modality's quantised embedding. */
export interface TemplateRecord {
  modality: Modality;
  /** Quality 0..100, or null when unknown. */
  quality: number | null;
  /** int8 components; the embedding is approximately `q[i] * scale`. */
  q: Int8Array;
  /** Dequantisation scale (float32). */
  scale: number;
}

/** A parsed template. */
export interface Template {
  formatVersion: number;
  /** Model set, version and pipeline revision that made the embeddings, e.g. "face:faceplugin-fr@0.0.1/p1". */
  templateVersion: string;
  records: TemplateRecord[];
}

/** Quantises a float embedding symmetrically to int8: scale = max|v| / 127, q = round(v / scale). */
export function quantize(v: ArrayLike<number>): { q: Int8Array; scale: number } {
  let max = 0;
  for (let i = 0; i < v.length; i++) max = Math.max(max, Math.abs(v[i]));
  const scale = max > 0 ? max / 127 : 1;
  const q = new Int8Array(v.length);
  for (let i = 0; i < v.length; i++) q[i] = Math.max(-127, Math.min(127, Math.round(v[i] / scale)));
  return { q, scale: Math.fround(scale) };
}

export { crc32 };

/** Input of `encodeTemplate`: a float embedding per modality (quantised here) or an already quantised record. */
export interface TemplateInput {
  templateVersion: string;
  records: Array<{ modality: Modality; quality?: number | null; embedding: ArrayLike<number> } | TemplateRecord>;
}

/**
 * Encodes a template in format v1 (docs/template-format.md). Embeddings are int8-quantised.
 * @example
 * const bytes = encodeTemplate({ templateVersion: ex.templateVersion, records: [{ modality: 'face', quality: f.quality, embedding: f.embedding }] });
 */
export function encodeTemplate(t: TemplateInput): Uint8Array {
  const version = new TextEncoder().encode(t.templateVersion);
  if (version.length === 0 || version.length > 255)
    throw new BiometricError('INVALID_TEMPLATE', 'template version must be 1..255 bytes');
  if (t.records.length === 0 || t.records.length > 255)
    throw new BiometricError('INVALID_TEMPLATE', 'a template holds 1..255 records');
  const recs = t.records.map((r) => {
    const rec = 'q' in r ? r : { modality: r.modality, quality: r.quality ?? null, ...quantize(r.embedding) };
    if (rec.q.length === 0 || rec.q.length > 65535)
      throw new BiometricError('INVALID_TEMPLATE', 'embedding length must be 1..65535');
    return rec;
  });
  const size = 4 + 1 + 1 + version.length + 1 + recs.reduce((a, r) => a + 8 + r.q.length, 0) + 4;
  const out = new Uint8Array(size);
  const dv = new DataView(out.buffer);
  out.set(TEMPLATE_MAGIC, 0);
  out[4] = TEMPLATE_FORMAT_VERSION;
  out[5] = version.length;
  out.set(version, 6);
  let o = 6 + version.length;
  out[o++] = recs.length;
  for (const r of recs) {
    out[o] = MODALITY_CODE[r.modality];
    const q = r.quality;
    out[o + 1] = q === null || q === undefined || !Number.isFinite(q) ? 255 : Math.max(0, Math.min(100, Math.round(q)));
    dv.setUint16(o + 2, r.q.length, true);
    dv.setFloat32(o + 4, r.scale, true);
    out.set(new Uint8Array(r.q.buffer, r.q.byteOffset, r.q.length), o + 8);
    o += 8 + r.q.length;
  }
  dv.setUint32(o, crc32(out.subarray(0, o)), true);
  return out;
}

/**
 * Template bytes for one analysed face (what enrolment stores).
 * @example
 * const { faces } = await extractor.analyseFace(jpeg);
 * const bytes = encodeFaceTemplate(extractor.templateVersion, faces[0]);
 */
export function encodeFaceTemplate(
  templateVersion: string,
  face: { embedding: ArrayLike<number>; quality?: number | null },
): Uint8Array {
  return encodeTemplate({
    templateVersion,
    records: [{ modality: 'face', quality: face.quality ?? null, embedding: face.embedding }],
  });
}

/**
 * Template bytes for one analysed voice recording (a VOICE record of the 256-d speaker embedding).
 * @example
 * const a = await extractor.analyseVoice(wav);
 * const bytes = encodeVoiceTemplate(extractor.voiceTemplateVersion, { embedding: a.embedding!, quality: a.quality });
 */
export function encodeVoiceTemplate(
  templateVersion: string,
  voice: { embedding: ArrayLike<number>; quality?: number | null },
): Uint8Array {
  return encodeTemplate({
    templateVersion,
    records: [{ modality: 'voice', quality: voice.quality ?? null, embedding: voice.embedding }],
  });
}

const bad = (why: string) => new BiometricError('INVALID_TEMPLATE', `invalid template: ${why}`);

/**
 * Parses and validates template bytes.
 * @throws BiometricError INVALID_TEMPLATE for foreign (bad magic), unknown format version, truncated,
 *   trailing or tampered (checksum mismatch) bytes.
 */
export function parseTemplate(bytes: Uint8Array): Template {
  if (bytes.length < 4 || TEMPLATE_MAGIC.some((m, i) => bytes[i] !== m)) throw bad('not a BIMS template (magic)');
  if (bytes.length < 7) throw bad('truncated');
  if (bytes[4] !== TEMPLATE_FORMAT_VERSION) throw bad(`unsupported format version ${bytes[4]}`);
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const vlen = bytes[5];
  let o = 6 + vlen;
  if (vlen === 0 || o + 1 > bytes.length) throw bad('truncated');
  const templateVersion = new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(6, o));
  const n = bytes[o++];
  if (n === 0) throw bad('no records');
  const records: TemplateRecord[] = [];
  for (let i = 0; i < n; i++) {
    if (o + 8 > bytes.length) throw bad('truncated');
    const modality = CODE_MODALITY[bytes[o]];
    if (!modality) throw bad(`unknown modality ${bytes[o]}`);
    const qual = bytes[o + 1];
    if (qual > 100 && qual !== 255) throw bad('quality out of range');
    const dims = dv.getUint16(o + 2, true);
    const scale = dv.getFloat32(o + 4, true);
    if (dims === 0 || !(scale > 0) || !Number.isFinite(scale)) throw bad('bad record header');
    if (o + 8 + dims > bytes.length) throw bad('truncated');
    // A copy through Int8Array (not `bytes.slice().buffer`): Node Buffers from drivers are views into a shared
    // pool, where `slice` does not copy and `.buffer` is the whole pool.
    records.push({
      modality,
      quality: qual === 255 ? null : qual,
      q: new Int8Array(bytes.buffer, bytes.byteOffset + o + 8, dims).slice(),
      scale,
    });
    o += 8 + dims;
  }
  if (o + 4 !== bytes.length) throw bad(o + 4 > bytes.length ? 'truncated' : 'trailing bytes');
  if (dv.getUint32(o, true) !== crc32(bytes.subarray(0, o))) throw bad('checksum mismatch (corrupt or tampered)');
  return { formatVersion: TEMPLATE_FORMAT_VERSION, templateVersion, records };
}

/** The face record of a template, or undefined. */
export function faceRecord(t: Template): TemplateRecord | undefined {
  return t.records.find((r) => r.modality === 'face');
}

/** Cosine similarity of two int8 vectors (scales cancel out). */
export function cosineInt8(a: Int8Array, b: Int8Array): number {
  if (a.length !== b.length) throw new BiometricError('TEMPLATE_VERSION_MISMATCH', 'embeddings of different length');
  let d = 0,
    na = 0,
    nb = 0;
  for (let i = 0; i < a.length; i++) {
    d += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return na && nb ? d / Math.sqrt(na * nb) : 0;
}

/** Cosine similarity of two float vectors. */
export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let d = 0,
    na = 0,
    nb = 0;
  for (let i = 0; i < a.length; i++) {
    d += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return na && nb ? d / Math.sqrt(na * nb) : 0;
}
