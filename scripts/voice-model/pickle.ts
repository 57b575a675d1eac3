/**
 * A pickle reader that only builds data: it never imports or calls anything named in the file.
 *
 * Why not a general unpickler: a pickle is a program (GLOBAL names any importable function, REDUCE calls it),
 * and a checkpoint downloaded from anywhere must not run code. PyTorch's own `weights_only` loader
 * (torch/_weights_only_unpickler.py) takes the same approach: the opcodes of protocols 0-5 that build
 * containers and scalars, and an allowlist of globals. Here the allowlist is what a state_dict needs, and
 * each allowed global is a constructor of plain data written below, never a lookup:
 * - collections.OrderedDict (a Map; BUILD of its attributes, e.g. a state_dict's `_metadata`, is ignored),
 * - torch._utils._rebuild_tensor_v2 / _rebuild_tensor / _rebuild_parameter (a TensorRef),
 * - torch.<Type>Storage (a storage type, only as part of a persistent id, resolved by the caller).
 * Anything else (another global, INST/OBJ/NEWOBJ, extensions, out-of-band buffers) stops the read with an
 * UnsafePickleError naming it. Persistent ids (BINPERSID) go to the caller's persistentLoad.
 */

/** A Python value as read here: lists and tuples are arrays, dicts are Maps, ints beyond 2^53 bigints. */
export type PyValue =
  | null
  | boolean
  | number
  | bigint
  | string
  | Uint8Array
  | PyValue[]
  | Map<PyValue, PyValue>
  | Set<PyValue>
  | StorageType
  | TensorRef
  | StorageHandle;

/** torch.<Name>Storage named in a pickle: its element type. */
export class StorageType {
  constructor(readonly dtype: DType) {}
}

/** Whatever persistentLoad answered for a storage: kept opaque by the reader. */
export interface StorageHandle {
  readonly kind: 'storage';
}

/** A tensor as _rebuild_tensor_v2 describes it: a view (offset, shape, strides in elements) of a storage. */
export class TensorRef {
  constructor(
    readonly storage: PyValue,
    readonly offset: number,
    readonly shape: number[],
    readonly stride: number[],
  ) {}
}

export type DType =
  | 'float32'
  | 'float16'
  | 'bfloat16'
  | 'float64'
  | 'int64'
  | 'int32'
  | 'int16'
  | 'int8'
  | 'uint8'
  | 'bool';

/** Element size in bytes of each dtype. */
export const ELEMENT_SIZE: Record<DType, number> = {
  float32: 4,
  float16: 2,
  bfloat16: 2,
  float64: 8,
  int64: 8,
  int32: 4,
  int16: 2,
  int8: 1,
  uint8: 1,
  bool: 1,
};

const STORAGE_TYPES: Record<string, DType> = {
  FloatStorage: 'float32',
  HalfStorage: 'float16',
  BFloat16Storage: 'bfloat16',
  DoubleStorage: 'float64',
  LongStorage: 'int64',
  IntStorage: 'int32',
  ShortStorage: 'int16',
  CharStorage: 'int8',
  ByteStorage: 'uint8',
  BoolStorage: 'bool',
};

/** The file asked for something this reader will not do (a global outside the allowlist, an object opcode). */
export class UnsafePickleError extends Error {
  override name = 'UnsafePickleError';
}

/** The file is not a well-formed pickle (truncated, stack underflow, unknown opcode). */
export class PickleFormatError extends Error {
  override name = 'PickleFormatError';
}

interface Global {
  readonly global: string;
}
const MARK = Symbol('mark');
type StackItem = PyValue | Global | typeof MARK;

const isGlobal = (v: unknown): v is Global =>
  typeof v === 'object' && v !== null && 'global' in v && !(v instanceof Map);

function resolveGlobal(module: string, name: string): Global | StorageType {
  if (module === 'torch' && name in STORAGE_TYPES) return new StorageType(STORAGE_TYPES[name]!);
  const full = `${module}.${name}`;
  if (ALLOWED_CALLS[full]) return { global: full };
  throw new UnsafePickleError(
    `the pickle names the global ${full}, which is not allowed (only what a PyTorch state_dict needs: ${[...Object.keys(ALLOWED_CALLS), 'torch.*Storage'].join(', ')})`,
  );
}

const int = (v: PyValue, what: string): number => {
  if (typeof v === 'number' && Number.isInteger(v)) return v;
  if (typeof v === 'bigint' && v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= -BigInt(Number.MAX_SAFE_INTEGER))
    return Number(v);
  throw new PickleFormatError(`${what} is not an integer`);
};
const ints = (v: PyValue, what: string): number[] => {
  if (!Array.isArray(v)) throw new PickleFormatError(`${what} is not a tuple`);
  return v.map((x) => int(x, what));
};

function rebuildTensor(args: PyValue[]): TensorRef {
  const [storage, offset, size, stride] = args;
  if (args.length < 4) throw new PickleFormatError('_rebuild_tensor needs storage, offset, size and stride');
  return new TensorRef(
    storage!,
    int(offset!, 'storage offset'),
    ints(size!, 'tensor size'),
    ints(stride!, 'tensor stride'),
  );
}

/** What each allowed global builds from its REDUCE arguments. */
const ALLOWED_CALLS: Record<string, (args: PyValue[]) => PyValue> = {
  'collections.OrderedDict': (args) => {
    const m = new Map<PyValue, PyValue>();
    const items = args[0];
    if (Array.isArray(items))
      for (const pair of items) if (Array.isArray(pair) && pair.length === 2) m.set(pair[0]!, pair[1]!);
    return m;
  },
  'torch._utils._rebuild_tensor_v2': rebuildTensor,
  'torch._utils._rebuild_tensor': rebuildTensor,
  'torch._utils._rebuild_parameter': (args) => {
    if (!(args[0] instanceof TensorRef)) throw new PickleFormatError('_rebuild_parameter expects a tensor');
    return args[0];
  },
};

export interface PickleReadOptions {
  /** Answers a persistent id (BINPERSID/PERSID): PyTorch's storage references. */
  persistentLoad?: (pid: PyValue) => PyValue;
}

/**
 * Reads one pickle starting at `from`; answers its value and the offset just after its STOP (PyTorch's legacy
 * format is several pickles in a row followed by raw storage bytes).
 * @throws UnsafePickleError for anything outside the allowlist, PickleFormatError for a malformed pickle.
 */
export function readPickle(bytes: Uint8Array, from = 0, opts: PickleReadOptions = {}): { value: PyValue; end: number } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const latin1 = new TextDecoder('latin1');
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  let p = from;
  const stack: StackItem[] = [];
  const memo = new Map<number, StackItem>();

  const need = (n: number) => {
    if (n < 0 || p + n > bytes.length) throw new PickleFormatError(`truncated pickle at byte ${p}`);
  };
  const u8 = () => {
    need(1);
    return bytes[p++]!;
  };
  const u16 = () => {
    need(2);
    const v = view.getUint16(p, true);
    p += 2;
    return v;
  };
  const i32 = () => {
    need(4);
    const v = view.getInt32(p, true);
    p += 4;
    return v;
  };
  const u32 = () => {
    need(4);
    const v = view.getUint32(p, true);
    p += 4;
    return v;
  };
  const u64 = () => {
    need(8);
    const v = view.getBigUint64(p, true);
    p += 8;
    if (v > BigInt(bytes.length)) throw new PickleFormatError(`length ${v} beyond the file`);
    return Number(v);
  };
  const take = (n: number) => {
    need(n);
    const b = bytes.subarray(p, p + n);
    p += n;
    return b;
  };
  const line = () => {
    const end = bytes.indexOf(0x0a, p);
    if (end < 0) throw new PickleFormatError(`unterminated line at byte ${p}`);
    const s = latin1.decode(bytes.subarray(p, end));
    p = end + 1;
    return s;
  };
  const pop = (): StackItem => {
    if (!stack.length) throw new PickleFormatError(`stack underflow at byte ${p}`);
    return stack.pop()!;
  };
  const popValue = (): PyValue => {
    const v = pop();
    if (v === MARK || isGlobal(v))
      throw new PickleFormatError(`unexpected ${v === MARK ? 'mark' : 'global'} at byte ${p}`);
    return v;
  };
  const top = (): StackItem => {
    if (!stack.length) throw new PickleFormatError(`stack underflow at byte ${p}`);
    return stack[stack.length - 1]!;
  };
  const popMark = (): PyValue[] => {
    const at = stack.lastIndexOf(MARK);
    if (at < 0) throw new PickleFormatError(`no mark at byte ${p}`);
    const items = stack.splice(at);
    items.shift();
    for (const v of items) if (isGlobal(v)) throw new PickleFormatError('a global used as a value');
    return items as PyValue[];
  };
  const signedLE = (b: Uint8Array): number | bigint => {
    if (b.length === 0) return 0;
    let v = 0n;
    for (let i = b.length - 1; i >= 0; i--) v = (v << 8n) | BigInt(b[i]!);
    if (b[b.length - 1]! & 0x80) v -= 1n << BigInt(8 * b.length);
    return v >= -BigInt(Number.MAX_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
  };
  const text = (b: Uint8Array) => {
    try {
      return utf8.decode(b);
    } catch {
      throw new PickleFormatError('a string is not valid UTF-8');
    }
  };
  const setItems = (target: StackItem, items: PyValue[]) => {
    if (!(target instanceof Map)) throw new PickleFormatError('SETITEM(S) on something that is not a dict');
    for (let i = 0; i + 1 < items.length; i += 2) target.set(items[i]!, items[i + 1]!);
  };
  const appendTo = (target: StackItem, items: PyValue[]) => {
    if (!Array.isArray(target)) throw new PickleFormatError('APPEND(S) on something that is not a list');
    target.push(...items);
  };
  const persistent = (pid: PyValue) => {
    if (!opts.persistentLoad) throw new UnsafePickleError('the pickle holds a persistent id where none is expected');
    return opts.persistentLoad(pid);
  };

  for (;;) {
    const at = p;
    const op = u8();
    switch (op) {
      case 0x80:
        u8();
        break; // PROTO
      case 0x95:
        u64();
        break; // FRAME: a length hint only
      case 0x2e: {
        // STOP
        const value = popValue();
        if (stack.length) throw new PickleFormatError('values left on the stack at STOP');
        return { value, end: p };
      }
      case 0x28:
        stack.push(MARK);
        break; // MARK
      case 0x30:
        pop();
        break; // POP
      case 0x31:
        popMark();
        break; // POP_MARK
      case 0x32:
        stack.push(top());
        break; // DUP
      case 0x4e:
        stack.push(null);
        break; // NONE
      case 0x88:
        stack.push(true);
        break; // NEWTRUE
      case 0x89:
        stack.push(false);
        break; // NEWFALSE
      case 0x4a:
        stack.push(i32());
        break; // BININT
      case 0x4b:
        stack.push(u8());
        break; // BININT1
      case 0x4d:
        stack.push(u16());
        break; // BININT2
      case 0x8a:
        stack.push(signedLE(take(u8())));
        break; // LONG1
      case 0x8b: {
        const n = i32();
        stack.push(signedLE(take(n)));
        break;
      } // LONG4
      case 0x49: {
        // INT (protocol 0): also True/False as 01/00
        const s = line();
        stack.push(s === '01' ? true : s === '00' ? false : parseIntStrict(s));
        break;
      }
      case 0x4c:
        stack.push(parseIntStrict(line().replace(/L$/, '')));
        break; // LONG (protocol 0)
      case 0x47: {
        need(8);
        stack.push(view.getFloat64(p, false));
        p += 8;
        break;
      } // BINFLOAT (big-endian)
      case 0x46:
        stack.push(Number(line()));
        break; // FLOAT (protocol 0)
      case 0x58:
        stack.push(text(take(u32())));
        break; // BINUNICODE
      case 0x8c:
        stack.push(text(take(u8())));
        break; // SHORT_BINUNICODE
      case 0x8d:
        stack.push(text(take(u64())));
        break; // BINUNICODE8
      case 0x54: {
        const n = i32();
        stack.push(latin1.decode(take(n)));
        break;
      } // BINSTRING (Python 2 str)
      case 0x55:
        stack.push(latin1.decode(take(u8())));
        break; // SHORT_BINSTRING
      case 0x42:
        stack.push(take(u32()).slice());
        break; // BINBYTES
      case 0x43:
        stack.push(take(u8()).slice());
        break; // SHORT_BINBYTES
      case 0x8e:
        stack.push(take(u64()).slice());
        break; // BINBYTES8
      case 0x7d:
        stack.push(new Map());
        break; // EMPTY_DICT
      case 0x5d:
        stack.push([]);
        break; // EMPTY_LIST
      case 0x29:
        stack.push([]);
        break; // EMPTY_TUPLE
      case 0x8f:
        stack.push(new Set());
        break; // EMPTY_SET
      case 0x74:
        stack.push(popMark());
        break; // TUPLE
      case 0x85:
        stack.push([popValue()]);
        break; // TUPLE1
      case 0x86: {
        const b = popValue();
        stack.push([popValue(), b]);
        break;
      } // TUPLE2
      case 0x87: {
        const c = popValue(),
          b = popValue();
        stack.push([popValue(), b, c]);
        break;
      } // TUPLE3
      case 0x6c:
        stack.push(popMark());
        break; // LIST
      case 0x64: {
        const m = new Map<PyValue, PyValue>();
        setItems(m, popMark());
        stack.push(m);
        break;
      } // DICT
      case 0x91:
        stack.push(new Set(popMark()));
        break; // FROZENSET
      case 0x90: {
        // ADDITEMS
        const items = popMark(),
          s = top();
        if (!(s instanceof Set)) throw new PickleFormatError('ADDITEMS on something that is not a set');
        for (const v of items) s.add(v);
        break;
      }
      case 0x73: {
        const v = popValue(),
          k = popValue();
        setItems(top(), [k, v]);
        break;
      } // SETITEM
      case 0x75: {
        const items = popMark();
        setItems(top(), items);
        break;
      } // SETITEMS
      case 0x61: {
        const v = popValue();
        appendTo(top(), [v]);
        break;
      } // APPEND
      case 0x65: {
        const items = popMark();
        appendTo(top(), items);
        break;
      } // APPENDS
      case 0x71:
        memo.set(u8(), top());
        break; // BINPUT
      case 0x72:
        memo.set(u32(), top());
        break; // LONG_BINPUT
      case 0x94:
        memo.set(memo.size, top());
        break; // MEMOIZE
      case 0x70:
        memo.set(Number(parseIntStrict(line())), top());
        break; // PUT
      case 0x68:
      case 0x6a:
      case 0x67: {
        // BINGET, LONG_BINGET, GET
        const key = op === 0x68 ? u8() : op === 0x6a ? u32() : Number(parseIntStrict(line()));
        if (!memo.has(key)) throw new PickleFormatError(`memo ${key} was never stored`);
        stack.push(memo.get(key)!);
        break;
      }
      case 0x63: {
        const module = line();
        stack.push(resolveGlobal(module, line()));
        break;
      } // GLOBAL
      case 0x93: {
        // STACK_GLOBAL
        const name = popValue(),
          module = popValue();
        if (typeof module !== 'string' || typeof name !== 'string')
          throw new PickleFormatError('STACK_GLOBAL needs two strings');
        stack.push(resolveGlobal(module, name));
        break;
      }
      case 0x52: {
        // REDUCE
        const args = popValue(),
          fn = pop();
        if (!isGlobal(fn))
          throw new UnsafePickleError(`REDUCE of something that is not an allowed global at byte ${at}`);
        if (!Array.isArray(args)) throw new PickleFormatError('REDUCE arguments are not a tuple');
        stack.push(ALLOWED_CALLS[fn.global]!(args));
        break;
      }
      case 0x62: {
        // BUILD: only an OrderedDict's attributes, which a state_dict does not need
        const state = popValue();
        const target = top();
        if (!(target instanceof Map))
          throw new UnsafePickleError(
            `BUILD (setting an object's state) on something other than an OrderedDict at byte ${at}`,
          );
        if (state !== null && !(state instanceof Map) && !Array.isArray(state))
          throw new PickleFormatError('BUILD state is not a dict');
        break;
      }
      case 0x51:
        stack.push(persistent(popValue()));
        break; // BINPERSID
      case 0x50:
        stack.push(persistent(line()));
        break; // PERSID
      default:
        throw UNSAFE_OPCODES[op]
          ? new UnsafePickleError(
              `the pickle uses ${UNSAFE_OPCODES[op]} (building arbitrary objects), which is not allowed, at byte ${at}`,
            )
          : new PickleFormatError(`unknown pickle opcode 0x${op.toString(16).padStart(2, '0')} at byte ${at}`);
    }
  }
}

/** Opcodes that build or call arbitrary objects, refused by name. */
const UNSAFE_OPCODES: Record<number, string> = {
  0x69: 'INST',
  0x6f: 'OBJ',
  0x81: 'NEWOBJ',
  0x92: 'NEWOBJ_EX',
  0x82: 'EXT1',
  0x83: 'EXT2',
  0x84: 'EXT4',
  0x96: 'BYTEARRAY8',
  0x97: 'NEXT_BUFFER',
  0x98: 'READONLY_BUFFER',
};

function parseIntStrict(s: string): number | bigint {
  if (!/^[+-]?\d+$/.test(s)) throw new PickleFormatError(`${JSON.stringify(s.slice(0, 40))} is not an integer`);
  const v = BigInt(s);
  return v >= -BigInt(Number.MAX_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
}
