// Generated hostile JPEG files (never committed: every test and benchmark makes its own). Each is a small file
// whose structure promises far more decoding work than its size suggests; see docs/admission.md for the bound
// that refuses each, and test/biometrics/hostile-decode.test.ts for what the decoders do with them.

/** One marker segment: FF marker, then the 16-bit length (which counts itself) and the payload. */
export function segment(marker: number, payload: ArrayLike<number>): number[] {
  const length = payload.length + 2;
  return [0xff, marker, length >> 8, length & 0xff, ...Array.from(payload)];
}

const SOI = [0xff, 0xd8];
const EOI = [0xff, 0xd9];

/** A frame component: id, sampling factors (h, v) and its quantisation table. */
export interface FrameComponent {
  id: number;
  h: number;
  v: number;
}

/** SOFn (default SOF2, progressive Huffman) for `components` at `precision` bits. */
export function frameHeader(
  width: number,
  height: number,
  components: readonly FrameComponent[],
  { marker = 0xc2, precision = 8 }: { marker?: number; precision?: number } = {},
): number[] {
  return segment(marker, [
    precision,
    height >> 8,
    height & 0xff,
    width >> 8,
    width & 0xff,
    components.length,
    ...components.flatMap((c) => [c.id, (c.h << 4) | c.v, 0]),
  ]);
}

/** DQT: one table (0) of ones. */
export const quantTable = (): number[] => segment(0xdb, [0x00, ...new Array(64).fill(1)]);

/**
 * DHT: DC table 0 and AC table 0, each a single symbol with a one-bit code. The AC symbol is 0xE0 (an EOB
 * run of 2^14 plus 14 extra bits), so a few bytes end the bands of tens of thousands of blocks.
 */
export function huffmanTables(): number[] {
  const table = (cls: number, symbol: number) => [cls, 1, ...new Array(15).fill(0), symbol];
  return segment(0xc4, [...table(0x00, 0x00), ...table(0x10, 0xe0)]);
}

/** SOS for the given component ids with spectral selection `ss..se` and successive approximation ah/al. */
export function scanHeader(ids: readonly number[], ss: number, se: number, ah = 0, al = 0): number[] {
  return segment(0xda, [ids.length, ...ids.flatMap((id) => [id, 0x00]), ss, se, (ah << 4) | al]);
}

const grey: FrameComponent[] = [{ id: 1, h: 1, v: 1 }];
const ycc420: FrameComponent[] = [
  { id: 1, h: 2, v: 2 },
  { id: 2, h: 1, v: 1 },
  { id: 3, h: 1, v: 1 },
];

/**
 * The JPEG of issue 32's first finding: a progressive frame declaring `width`x`height` and `scans` AC scans that
 * carry no entropy-coded data at all. The decoder still walks every block of the scanned component once per
 * scan: 1,000 scans over 4000x4000 are 250 million block visits in about 12 KB.
 */
export function emptyScansJpeg(
  width: number,
  height: number,
  scans: number,
  { colour = false }: { colour?: boolean } = {},
): Uint8Array {
  const components = colour ? ycc420 : grey;
  const body: number[] = [];
  for (let s = 0; s < scans; s++) body.push(...scanHeader([components[s % components.length]!.id], 1, 63));
  return Uint8Array.from([
    ...SOI,
    ...quantTable(),
    ...frameHeader(width, height, components),
    ...huffmanTables(),
    ...body,
    ...EOI,
  ]);
}

/**
 * A sequential (baseline) frame whose one component is scanned `scans` times, each scan empty: a decoder that
 * accepts repeated scans of a component in sequential mode visits every block each time.
 */
export function repeatedBaselineScansJpeg(width: number, height: number, scans: number): Uint8Array {
  const body: number[] = [];
  for (let s = 0; s < scans; s++) body.push(...scanHeader([1], 0, 63));
  return Uint8Array.from([
    ...SOI,
    ...quantTable(),
    ...frameHeader(width, height, grey, { marker: 0xc0 }),
    ...huffmanTables(),
    ...body,
    ...EOI,
  ]);
}

/**
 * A progressive frame with a restart interval of one MCU and scans without any restart marker: the decoder
 * looks for a marker after every MCU.
 */
export function restartTrickJpeg(width: number, height: number, scans: number): Uint8Array {
  const body: number[] = [];
  for (let s = 0; s < scans; s++) body.push(...scanHeader([1], 1, 63));
  return Uint8Array.from([
    ...SOI,
    ...quantTable(),
    ...frameHeader(width, height, grey),
    ...huffmanTables(),
    ...segment(0xdd, [0, 1]),
    ...body,
    ...EOI,
  ]);
}

/** A frame of `count` components (each scanned once, empty), e.g. 4 for CMYK or 10 for "many components". */
export function manyComponentsJpeg(
  width: number,
  height: number,
  count: number,
  { adobe = false, marker = 0xc2 }: { adobe?: boolean; marker?: number } = {},
): Uint8Array {
  const components = Array.from({ length: count }, (_, i) => ({ id: i + 1, h: 1, v: 1 }));
  // APP14 "Adobe": version 100, flags, transform 2 (YCCK) so a decoder converts to RGB through CMYK.
  const app14 = adobe ? segment(0xee, [0x41, 0x64, 0x6f, 0x62, 0x65, 0, 100, 0, 0, 0, 0, 2]) : [];
  const body: number[] = [];
  for (const c of components) body.push(...(marker === 0xc2 ? scanHeader([c.id], 0, 0) : scanHeader([c.id], 0, 63)));
  return Uint8Array.from([
    ...SOI,
    ...app14,
    ...quantTable(),
    ...frameHeader(width, height, components, { marker }),
    ...huffmanTables(),
    ...body,
    ...EOI,
  ]);
}

/** A frame of another coding process (arithmetic SOF9/10, lossless SOF3, hierarchical SOF5...) or precision. */
export function codingProcessJpeg(width: number, height: number, marker: number, precision = 8): Uint8Array {
  return Uint8Array.from([
    ...SOI,
    ...quantTable(),
    ...frameHeader(width, height, grey, { marker, precision }),
    ...huffmanTables(),
    ...scanHeader([1], 0, marker === 0xc3 || marker === 0xcb ? 1 : 63),
    ...EOI,
  ]);
}

/** Two or more frame headers in one file, each followed by an empty scan. */
export function manyFramesJpeg(width: number, height: number, frames: number): Uint8Array {
  const body: number[] = [];
  for (let f = 0; f < frames; f++) body.push(...frameHeader(width, height, grey), ...scanHeader([1], 0, 0));
  return Uint8Array.from([...SOI, ...quantTable(), ...huffmanTables(), ...body, ...EOI]);
}

/** Thousands of tiny table segments (DHT) before one empty scan over a small frame. */
export function manySegmentsJpeg(segments: number): Uint8Array {
  const tables: number[] = [];
  for (let i = 0; i < segments; i++) tables.push(...huffmanTables());
  return Uint8Array.from([
    ...SOI,
    ...quantTable(),
    ...frameHeader(64, 64, grey),
    ...tables,
    ...scanHeader([1], 0, 0),
    ...EOI,
  ]);
}

/** APP1 EXIF whose first IFD claims `entries` entries and whose next-IFD pointers form a loop. */
export function exifLoopJpeg(entries: number): Uint8Array {
  const tiff = [0x4d, 0x4d, 0x00, 0x2a, 0, 0, 0, 8, entries >> 8, entries & 0xff];
  // Entries that are not Orientation, then a next-IFD offset pointing back at the first IFD.
  for (let i = 0; i < Math.min(entries, 2000); i++) tiff.push(0x01, 0x00, 0, 3, 0, 0, 0, 1, 0, 0, 0, 0);
  tiff.push(0, 0, 0, 8);
  const app1 = segment(0xe1, [0x45, 0x78, 0x69, 0x66, 0, 0, ...tiff]);
  return Uint8Array.from([
    ...SOI,
    ...app1,
    ...quantTable(),
    ...frameHeader(64, 64, grey),
    ...huffmanTables(),
    ...scanHeader([1], 0, 0),
    ...EOI,
  ]);
}
