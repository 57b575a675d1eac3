/**
 * Writes PyTorch checkpoints (`torch.save` output) of plain data and float tensors, in both formats
 * torch.load reads (torch/serialization.py), so the voice-model converter is tested on files laid out as
 * PyTorch lays them out, without Python:
 * - zip: `archive/data.pkl`, `archive/data/<key>` (each storage's raw little-endian bytes), `archive/byteorder`,
 *   `archive/version`; persistent ids ('storage', torch.<T>Storage, key, 'cpu', numel).
 * - legacy: pickles of the magic number, protocol version 1001 and sys_info, then the object with persistent
 *   ids ('storage', torch.<T>Storage, key, 'cpu', numel, None), then the list of keys, then each storage as
 *   an int64 element count and its bytes.
 * The pickles are protocol 2, as torch.save writes them: tensors as torch._utils._rebuild_tensor_v2, state
 * dicts as collections.OrderedDict with a `_metadata` attribute, globals memoized and fetched again.
 */
import { zipSync } from 'fflate';
import { concatBytes as concat } from '../../src/biometrics/bytes.js';
import { floatToHalf } from '../../scripts/voice-model/ge2e-onnx.js';

/** A float tensor to write (row-major values). */
export class Tensor {
  constructor(
    readonly shape: number[],
    readonly values: Float32Array,
  ) {}
}
/** A dict written as collections.OrderedDict (a state_dict). */
export class OrderedDict {
  constructor(readonly entries: [string, PickleValue][]) {}
}
/** A tuple (arrays are written as lists). */
export class Tuple {
  constructor(readonly items: PickleValue[]) {}
}
export type PickleValue =
  | null
  | boolean
  | number
  | bigint
  | string
  | PickleValue[]
  | Tuple
  | Map<string | number, PickleValue>
  | OrderedDict
  | Tensor;

export type StorageDtype = 'float32' | 'float16';

interface Storage {
  key: string;
  dtype: StorageDtype;
  bytes: Uint8Array;
  numel: number;
}

class PickleWriter {
  private readonly out: number[] = [];
  private readonly memo = new Map<string, number>();
  readonly storages: Storage[] = [];

  constructor(
    private readonly format: 'zip' | 'legacy',
    private readonly dtype: StorageDtype = 'float32',
  ) {}

  bytes(): Uint8Array {
    return Uint8Array.from(this.out);
  }

  private op(...b: number[]) {
    this.out.push(...b);
  }
  private u32(n: number) {
    this.op(n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, (n >>> 24) & 0xff);
  }
  private text(s: string) {
    this.op(...new TextEncoder().encode(s));
  }

  private global(module: string, name: string) {
    const id = `${module}.${name}`;
    const at = this.memo.get(id);
    if (at !== undefined) return this.op(0x68, at); // BINGET
    this.op(0x63);
    this.text(`${module}\n${name}\n`); // GLOBAL
    this.memo.set(id, this.memo.size);
    this.op(0x71, this.memo.size - 1); // BINPUT
  }

  private int(v: number | bigint) {
    if (typeof v === 'number' && v >= 0 && v < 256) return this.op(0x4b, v); // BININT1
    if (typeof v === 'number' && v >= 0 && v < 65536) return this.op(0x4d, v & 0xff, v >> 8); // BININT2
    if (typeof v === 'number' && v >= -(2 ** 31) && v < 2 ** 31) {
      this.op(0x4a);
      return this.u32(v >>> 0);
    } // BININT
    let x = BigInt(v);
    const b: number[] = [];
    do {
      b.push(Number(x & 0xffn));
      x >>= 8n;
    } while (x !== 0n && x !== -1n);
    if ((b[b.length - 1]! & 0x80) !== (x < 0n ? 0x80 : 0)) b.push(x < 0n ? 0xff : 0);
    this.op(0x8a, b.length, ...b); // LONG1
  }

  value(v: PickleValue): void {
    if (v === null) return this.op(0x4e);
    if (v === true) return this.op(0x88);
    if (v === false) return this.op(0x89);
    if (typeof v === 'bigint' || (typeof v === 'number' && Number.isInteger(v))) return this.int(v);
    if (typeof v === 'number') {
      const dv = new DataView(new ArrayBuffer(8));
      dv.setFloat64(0, v, false);
      return this.op(0x47, ...new Uint8Array(dv.buffer)); // BINFLOAT
    }
    if (typeof v === 'string') {
      const b = new TextEncoder().encode(v);
      if (b.length < 256) return this.op(0x8c, b.length, ...b); // SHORT_BINUNICODE
      this.op(0x58);
      this.u32(b.length);
      return this.op(...b);
    }
    if (Array.isArray(v)) {
      this.op(0x5d); // EMPTY_LIST
      if (v.length) {
        this.op(0x28);
        v.forEach((x) => this.value(x));
        this.op(0x65);
      } // MARK ... APPENDS
      return;
    }
    if (v instanceof Tuple) {
      if (v.items.length === 0) return this.op(0x29);
      if (v.items.length <= 3) {
        v.items.forEach((x) => this.value(x));
        return this.op(0x84 + v.items.length);
      } // TUPLE1-3
      this.op(0x28);
      v.items.forEach((x) => this.value(x));
      return this.op(0x74); // MARK ... TUPLE
    }
    if (v instanceof Map) {
      this.op(0x7d); // EMPTY_DICT
      if (v.size) {
        this.op(0x28);
        for (const [k, x] of v) {
          this.value(k);
          this.value(x);
        }
        this.op(0x75);
      } // SETITEMS
      return;
    }
    if (v instanceof OrderedDict) {
      this.global('collections', 'OrderedDict');
      this.op(0x29, 0x52); // () REDUCE
      if (v.entries.length) {
        this.op(0x28);
        for (const [k, x] of v.entries) {
          this.value(k);
          this.value(x);
        }
        this.op(0x75);
      }
      if (!v.entries.length) return; // an empty OrderedDict (backward hooks) has no attributes
      // A state_dict's `_metadata` attribute (module versions), set by BUILD as torch.save writes it.
      this.value(new Map([['_metadata', new OrderedDict([])]]));
      return this.op(0x62); // BUILD
    }
    this.tensor(v);
  }

  private tensor(t: Tensor) {
    const key = this.format === 'zip' ? String(this.storages.length) : String(94_000_000 + this.storages.length * 64);
    const bytes =
      this.dtype === 'float32'
        ? new Uint8Array(t.values.buffer.slice(t.values.byteOffset, t.values.byteOffset + t.values.byteLength))
        : (() => {
            const b = new Uint8Array(t.values.length * 2),
              dv = new DataView(b.buffer);
            t.values.forEach((x, i) => dv.setUint16(i * 2, floatToHalf(x), true));
            return b;
          })();
    this.storages.push({ key, dtype: this.dtype, bytes, numel: t.values.length });
    const strides = t.shape.map((_, d) => t.shape.slice(d + 1).reduce((a, b) => a * b, 1));
    this.global('torch._utils', '_rebuild_tensor_v2');
    this.op(0x28); // MARK: the arguments tuple
    this.op(0x28); // MARK: the persistent id tuple
    this.value('storage');
    this.global('torch', this.dtype === 'float32' ? 'FloatStorage' : 'HalfStorage');
    this.value(key);
    this.value('cpu');
    this.value(t.values.length);
    if (this.format === 'legacy') this.value(null); // no view
    this.op(0x74, 0x51); // TUPLE BINPERSID
    this.value(0);
    this.value(new Tuple(t.shape));
    this.value(new Tuple(strides));
    this.value(false);
    this.value(new OrderedDict([]));
    this.op(0x74, 0x52); // TUPLE REDUCE
  }
}

function pickle(v: PickleValue, writer = new PickleWriter('legacy')): Uint8Array {
  writer.value(v);
  return concat([Uint8Array.of(0x80, 2), writer.bytes(), Uint8Array.of(0x2e)]);
}

/** A zip-format checkpoint of `object` (as torch.save writes by default since PyTorch 1.6). */
export function zipCheckpoint(object: PickleValue, dtype: StorageDtype = 'float32'): Uint8Array {
  const w = new PickleWriter('zip', dtype);
  const data = pickle(object, w);
  const files: Record<string, [Uint8Array, { level: 0 }]> = {
    'archive/data.pkl': [data, { level: 0 }],
    'archive/byteorder': [new TextEncoder().encode('little'), { level: 0 }],
    'archive/version': [new TextEncoder().encode('3\n'), { level: 0 }],
  };
  for (const s of w.storages) files[`archive/data/${s.key}`] = [s.bytes, { level: 0 }];
  return zipSync(files);
}

/** A legacy-format checkpoint of `object` (torch.save(..., _use_new_zipfile_serialization=False)). */
export function legacyCheckpoint(object: PickleValue, dtype: StorageDtype = 'float32'): Uint8Array {
  const w = new PickleWriter('legacy', dtype);
  const main = pickle(object, w);
  const parts = [
    pickle(0x1950a86a20f9469cfc6cn),
    pickle(1001),
    pickle(
      new Map<string, PickleValue>([
        ['protocol_version', 1001],
        ['little_endian', true],
        [
          'type_sizes',
          new Map<string, PickleValue>([
            ['short', 2],
            ['int', 4],
            ['long', 4],
          ]),
        ],
      ]),
    ),
    main,
    pickle(w.storages.map((s) => s.key)),
  ];
  for (const s of w.storages) {
    const count = new Uint8Array(8);
    new DataView(count.buffer).setBigInt64(0, BigInt(s.numel), true);
    parts.push(count, s.bytes);
  }
  return concat(parts);
}

/** A legacy pickle stream whose object pickle calls os.system (what a hostile checkpoint does). */
export function hostileCheckpoint(command: string): Uint8Array {
  const text = (s: string) => new TextEncoder().encode(s);
  const cmd = text(command);
  const evil = concat([
    Uint8Array.of(0x80, 2, 0x63),
    text('os\nsystem\n'),
    Uint8Array.of(0x8c, cmd.length),
    cmd,
    Uint8Array.of(0x85, 0x52, 0x2e),
  ]);
  return concat([pickle(0x1950a86a20f9469cfc6cn), pickle(1001), pickle(new Map([['little_endian', true]])), evil]);
}
