// What crosses the wire between the remote extractor (src/extraction/remote.ts) and the Node extraction
// service (remote-service.ts): analyses as JSON, with typed arrays as base64 of their bytes and non-finite
// numbers spelled out, so that embeddings arrive bit-identical (JSON would turn NaN into null, and decimal
// text of a Float32Array into a different array only by luck).
import { fromBase64, toBase64 } from '../encoding/base64.js';

type Encoded = null | boolean | number | string | Encoded[] | { [key: string]: Encoded };

const TYPED = {
  f32: Float32Array,
  f64: Float64Array,
  u8: Uint8Array,
  i8: Int8Array,
  i32: Int32Array,
  u16: Uint16Array,
} as const;
type TypedTag = keyof typeof TYPED;

function tagOf(value: ArrayBufferView): TypedTag | null {
  for (const [tag, type] of Object.entries(TYPED)) if (value instanceof type) return tag as TypedTag;
  return null;
}

/** JSON-safe form of an analysis (any tree of objects, arrays, numbers, strings and typed arrays). */
export function encodeValue(value: unknown): Encoded {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number') return Number.isFinite(value) ? value : { $num: String(value) };
  if (typeof value === 'string' || typeof value === 'boolean') return value;
  if (ArrayBuffer.isView(value)) {
    const tag = tagOf(value);
    if (!tag) throw new TypeError(`cannot encode a ${value.constructor.name}`);
    return { [`$${tag}`]: toBase64(new Uint8Array(value.buffer, value.byteOffset, value.byteLength)) };
  }
  if (Array.isArray(value)) return value.map(encodeValue);
  if (typeof value === 'object') {
    const out: Record<string, Encoded> = {};
    for (const [key, v] of Object.entries(value)) if (v !== undefined) out[key] = encodeValue(v);
    return out;
  }
  throw new TypeError(`cannot encode a ${typeof value}`);
}

/** The value {@link encodeValue} encoded. */
export function decodeValue(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(decodeValue);
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value);
  if (entries.length === 1) {
    const [key, payload] = entries[0]!;
    if (key === '$num') return Number(payload);
    const type = key.startsWith('$') ? TYPED[key.slice(1) as TypedTag] : undefined;
    if (type && typeof payload === 'string') {
      const bytes = fromBase64(payload);
      return new type(bytes.buffer as ArrayBuffer, 0, bytes.byteLength / type.BYTES_PER_ELEMENT);
    }
  }
  return Object.fromEntries(entries.map(([k, v]) => [k, decodeValue(v)]));
}
