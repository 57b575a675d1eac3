/**
 * Reads a PyTorch checkpoint (`torch.save` output) without Python, through the data-only pickle reader.
 *
 * Both formats torch.load reads today (torch/serialization.py):
 * - zip (torch >= 1.6 default): a zip archive with one top folder holding `data.pkl` (the object, its
 *   tensors' storages as persistent ids ('storage', storage type, key, location, numel)), `data/<key>` (each
 *   storage's raw bytes) and optionally `byteorder` ('little' or 'big').
 * - legacy (torch < 1.6, `_use_new_zipfile_serialization=False`): pickles in a row (the magic number
 *   0x1950a86a20f9469cfc6c, the protocol version 1001, a sys_info dict, the object with persistent ids
 *   ('storage', storage type, root key, location, numel, view metadata), the list of storage keys), then each
 *   listed storage as an int64 little-endian element count followed by its bytes.
 * The older tar format (torch < 0.4) is recognised and refused.
 */
import { unzipSync } from 'fflate';
import {
  ELEMENT_SIZE,
  PickleFormatError,
  readPickle,
  StorageType,
  TensorRef,
  type DType,
  type PyValue,
  type StorageHandle,
} from './pickle.js';
import { halfToFloatBits } from '../../src/extraction/onnx-fold-casts.js';

const LEGACY_MAGIC = 0x1950a86a20f9469cfc6cn;
const LEGACY_PROTOCOL = 1001;

/** The checkpoint is not a PyTorch file this reader understands. */
export class CheckpointFormatError extends Error {
  override name = 'CheckpointFormatError';
}

/** A storage named by a persistent id; its bytes are filled in when the format provides them. */
class StorageRef implements StorageHandle {
  readonly kind = 'storage' as const;
  bytes: Uint8Array | null = null;
  constructor(
    readonly key: string,
    readonly dtype: DType,
    readonly numel: number,
    readonly view: { offset: number; numel: number } | null = null,
  ) {}
}

export interface Checkpoint {
  /** The saved object, tensors as TensorRef (read them with tensorValues). */
  readonly object: PyValue;
  readonly format: 'zip' | 'legacy';
}

const str = (v: PyValue | undefined): string => {
  if (typeof v === 'string') return v;
  if (v instanceof Uint8Array) return new TextDecoder('latin1').decode(v);
  throw new CheckpointFormatError('a persistent id field is not a string');
};
const num = (v: PyValue | undefined, what: string): number => {
  if (typeof v === 'number' && Number.isInteger(v) && v >= 0) return v;
  throw new CheckpointFormatError(`${what} is not a non-negative integer`);
};
const storageType = (v: PyValue | undefined): DType => {
  if (v instanceof StorageType) return v.dtype;
  throw new CheckpointFormatError('a persistent id does not name a torch storage type');
};

const isZip = (b: Uint8Array) => b.length >= 4 && b[0] === 0x50 && b[1] === 0x4b && b[2] === 0x03 && b[3] === 0x04;
const isTar = (b: Uint8Array) => b.length >= 262 && new TextDecoder('latin1').decode(b.subarray(257, 262)) === 'ustar';

/** Reads a checkpoint's object; storages are read fully (a state_dict is small). */
export function readCheckpoint(bytes: Uint8Array): Checkpoint {
  if (isZip(bytes)) return { object: readZip(bytes), format: 'zip' };
  if (isTar(bytes))
    throw new CheckpointFormatError(
      'this is the tar checkpoint format of PyTorch before 0.4, which is not supported: load and save it again with a newer PyTorch',
    );
  if (bytes[0] === 0x80) return { object: readLegacy(bytes), format: 'legacy' };
  throw new CheckpointFormatError('not a PyTorch checkpoint (neither a zip archive nor a legacy pickle stream)');
}

function readZip(bytes: Uint8Array): PyValue {
  let files: Record<string, Uint8Array>;
  try {
    files = unzipSync(bytes);
  } catch (e) {
    throw new CheckpointFormatError(`the zip archive cannot be read (${(e as Error).message})`);
  }
  const pkl = Object.keys(files).filter((n) => /^[^/]+\/data\.pkl$/.test(n));
  if (pkl.length !== 1)
    throw new CheckpointFormatError(
      `a PyTorch zip checkpoint holds one <folder>/data.pkl; this one holds ${pkl.length}`,
    );
  const prefix = pkl[0]!.slice(0, -'data.pkl'.length);
  const order = files[`${prefix}byteorder`];
  if (order && new TextDecoder().decode(order) !== 'little')
    throw new CheckpointFormatError('big-endian checkpoints are not supported');
  const { value } = readPickle(files[pkl[0]!]!, 0, {
    persistentLoad: (pid) => {
      if (!Array.isArray(pid) || pid.length !== 5 || str(pid[0]) !== 'storage')
        throw new CheckpointFormatError('a persistent id is not a storage reference');
      const dtype = storageType(pid[1]);
      const key = str(pid[2]);
      const ref = new StorageRef(key, dtype, num(pid[4], 'storage size'));
      const data = files[`${prefix}data/${key}`];
      if (!data) throw new CheckpointFormatError(`storage ${key} is named but not in the archive`);
      if (data.length < ref.numel * ELEMENT_SIZE[dtype])
        throw new CheckpointFormatError(`storage ${key} is shorter than its ${ref.numel} elements`);
      ref.bytes = data;
      return ref;
    },
  });
  return value;
}

function readLegacy(bytes: Uint8Array): PyValue {
  let p = 0;
  const next = (opts?: Parameters<typeof readPickle>[2]) => {
    const r = readPickle(bytes, p, opts);
    p = r.end;
    return r.value;
  };
  const magic = next();
  if (magic !== LEGACY_MAGIC && !(typeof magic === 'number' && BigInt(magic) === LEGACY_MAGIC))
    throw new CheckpointFormatError('not a PyTorch checkpoint (wrong magic number)');
  const protocol = next();
  if (protocol !== LEGACY_PROTOCOL)
    throw new CheckpointFormatError(`legacy checkpoint protocol ${String(protocol)} is not ${LEGACY_PROTOCOL}`);
  const sysInfo = next();
  if (sysInfo instanceof Map && sysInfo.get('little_endian') === false)
    throw new CheckpointFormatError('big-endian checkpoints are not supported');
  const roots = new Map<string, StorageRef>();
  const object = next({
    persistentLoad: (pid) => {
      if (!Array.isArray(pid) || pid.length !== 6 || str(pid[0]) !== 'storage')
        throw new CheckpointFormatError('a persistent id is not a storage reference');
      const dtype = storageType(pid[1]);
      const key = str(pid[2]);
      const numel = num(pid[4], 'storage size');
      let root = roots.get(key);
      if (!root) roots.set(key, (root = new StorageRef(key, dtype, numel)));
      const view = pid[5];
      if (view === null) return root;
      if (!Array.isArray(view) || view.length !== 3)
        throw new CheckpointFormatError('storage view metadata is not (key, offset, size)');
      return Object.assign(
        new StorageRef(key, dtype, num(view[2], 'view size'), {
          offset: num(view[1], 'view offset'),
          numel: num(view[2], 'view size'),
        }),
        { root },
      );
    },
  });
  const keys = next();
  if (!Array.isArray(keys)) throw new CheckpointFormatError('the storage key list is missing');
  for (const k of keys) {
    const root = roots.get(str(k));
    if (!root) throw new CheckpointFormatError(`storage ${str(k)} is listed but never used`);
    if (p + 8 > bytes.length) throw new CheckpointFormatError(`storage ${root.key} is truncated`);
    const count = new DataView(bytes.buffer, bytes.byteOffset + p, 8).getBigInt64(0, true);
    if (count !== BigInt(root.numel))
      throw new CheckpointFormatError(`storage ${root.key} holds ${count} elements, its reference says ${root.numel}`);
    const n = root.numel * ELEMENT_SIZE[root.dtype];
    if (p + 8 + n > bytes.length) throw new CheckpointFormatError(`storage ${root.key} is truncated`);
    root.bytes = bytes.subarray(p + 8, p + 8 + n);
    p += 8 + n;
  }
  return object;
}

/** A tensor's values as float32, in row-major order of its shape (any strides, float or integer dtype). */
export function tensorValues(t: TensorRef): Float32Array {
  const ref = t.storage as StorageRef & { root?: StorageRef };
  if (!(ref instanceof StorageRef)) throw new CheckpointFormatError('a tensor without a storage');
  const root = ref.root ?? ref;
  if (!root.bytes) throw new CheckpointFormatError(`storage ${root.key} has no data`);
  const base = (ref.view?.offset ?? 0) + t.offset;
  const limit = ref.view ? ref.view.offset + ref.view.numel : root.numel;
  const count = t.shape.reduce((a, b) => a * b, 1);
  const out = new Float32Array(count);
  const dv = new DataView(root.bytes.buffer, root.bytes.byteOffset, root.bytes.byteLength);
  const read = elementReader(dv, root.dtype);
  const idx = new Array<number>(t.shape.length).fill(0);
  for (let i = 0; i < count; i++) {
    let at = base;
    for (let d = 0; d < idx.length; d++) at += idx[d]! * t.stride[d]!;
    if (at < 0 || at >= limit) throw new CheckpointFormatError(`a tensor reads past its storage ${root.key}`);
    out[i] = read(at);
    for (let d = idx.length - 1; d >= 0; d--) {
      if (++idx[d]! < t.shape[d]!) break;
      idx[d] = 0;
    }
  }
  return out;
}

function elementReader(dv: DataView, dtype: DType): (i: number) => number {
  const bits = new DataView(new ArrayBuffer(4));
  switch (dtype) {
    case 'float32':
      return (i) => dv.getFloat32(i * 4, true);
    case 'float64':
      return (i) => dv.getFloat64(i * 8, true);
    case 'float16':
      return (i) => {
        bits.setUint32(0, halfToFloatBits(dv.getUint16(i * 2, true)));
        return bits.getFloat32(0);
      };
    case 'bfloat16':
      return (i) => {
        bits.setUint32(0, dv.getUint16(i * 2, true) << 16);
        return bits.getFloat32(0);
      };
    case 'int64':
      return (i) => Number(dv.getBigInt64(i * 8, true));
    case 'int32':
      return (i) => dv.getInt32(i * 4, true);
    case 'int16':
      return (i) => dv.getInt16(i * 2, true);
    case 'int8':
      return (i) => dv.getInt8(i);
    case 'uint8':
    case 'bool':
      return (i) => dv.getUint8(i);
  }
}

export { PickleFormatError, TensorRef };
