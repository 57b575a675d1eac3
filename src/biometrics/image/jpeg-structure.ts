// The marker structure of a JPEG, read without decoding anything: the frame, every scan and the blocks each
// scan makes the decoder visit. What a decode will cost is judged from it before the decode starts
// (image-cost.ts): a progressive file's cost grows with its scans, not with its size (issue 32: 1,000 empty
// scans over a 4000x4000 frame in 12 KB made the decoder visit 250 million blocks).
import { BiometricError } from '../errors.js';

/** One component of the frame: its id and sampling factors. */
interface JpegComponent {
  id: number;
  h: number;
  v: number;
}

/** What the markers of a JPEG say, and the work they promise. */
export interface JpegStructure {
  width: number;
  height: number;
  /** `baseline` (SOF0), `extended` (SOF1, Huffman) or `progressive` (SOF2). */
  coding: 'baseline' | 'extended' | 'progressive';
  components: JpegComponent[];
  /** Adobe APP14 colour transform (0 none/CMYK, 1 YCbCr, 2 YCCK), or -1 without an Adobe segment. */
  adobeTransform: number;
  scans: number;
  /** Blocks the entropy decoder visits, summed over the scans (a block of a component once per scan it is in). */
  scanBlocks: number;
  /** Restart intervals over all scans: the decoder resynchronises at each. */
  restarts: number;
  /** Blocks of every component once: what the inverse DCT and the colour conversion work through. */
  frameBlocks: number;
  /** Bytes of entropy-coded data, over all scans. */
  entropyBytes: number;
}

/** Scans a JPEG may hold: far above any encoder's progression (libjpeg's default script writes 10). */
export const MAX_JPEG_SCANS = 256;
/** Marker segments other than scans (tables, APPn, comments) a JPEG may hold. */
const MAX_JPEG_SEGMENTS = 2048;

const invalid = (why: string) => new BiometricError('INVALID_IMAGE', `corrupt or truncated JPEG: ${why}`);
const unsupported = (why: string) =>
  new BiometricError('UNSUPPORTED_FORMAT', `${why}; send a baseline or progressive JPEG, or a PNG`);
const costly = (why: string) => new BiometricError('IMAGE_TOO_COSTLY', why);

/** Coding processes other than Huffman sequential/progressive, by SOF marker: none is decoded here. */
const OTHER_PROCESSES: Record<number, string> = {
  0xc3: 'lossless',
  0xc5: 'hierarchical (differential sequential)',
  0xc6: 'hierarchical (differential progressive)',
  0xc7: 'hierarchical (differential lossless)',
  0xc9: 'arithmetic-coded sequential',
  0xca: 'arithmetic-coded progressive',
  0xcb: 'arithmetic-coded lossless',
  0xcd: 'arithmetic-coded hierarchical',
  0xce: 'arithmetic-coded hierarchical progressive',
  0xcf: 'arithmetic-coded hierarchical lossless',
};

/**
 * Reads the markers of a JPEG (the bytes start with SOI) up to EOI, skipping each scan's entropy-coded data by
 * looking for its next marker. Costs one pass over the bytes and allocates nothing in proportion to them.
 *
 * @throws BiometricError INVALID_IMAGE for a broken structure (truncated, no frame, a scan of an unknown
 *   component, two frames), UNSUPPORTED_FORMAT for what the decoders do not take (12-bit samples, lossless,
 *   hierarchical or arithmetic coding, 2 or more than 4 components), IMAGE_TOO_COSTLY past
 *   {@link MAX_JPEG_SCANS} scans or {@link MAX_JPEG_SEGMENTS} segments.
 */
export function readJpegStructure(b: Uint8Array): JpegStructure {
  let frame:
    | (Omit<JpegStructure, 'adobeTransform' | 'scans' | 'scanBlocks' | 'restarts' | 'entropyBytes'> & {
        mcusX: number;
        mcusY: number;
        maxH: number;
        maxV: number;
      })
    | null = null;
  let adobeTransform = -1;
  let restartInterval = 0;
  let scans = 0;
  let scanBlocks = 0;
  let restarts = 0;
  let entropyBytes = 0;
  let segments = 0;
  let off = 2;
  for (;;) {
    // Bytes that are not a marker where one is due: libjpeg skips them with a warning, and so do we.
    if (b[off] !== 0xff) {
      off = b.indexOf(0xff, off);
      if (off < 0) throw invalid('no end-of-image marker');
    }
    // Any number of 0xFF fill bytes may precede a marker (ITU T.81 B.1.1.2).
    while (b[off + 1] === 0xff) off++;
    if (off + 1 >= b.length) throw invalid('no end-of-image marker');
    const m = b[off + 1]!;
    if (m === 0xd9) break;
    if ((m >= 0xd0 && m <= 0xd7) || m === 0x01 || m === 0x00) {
      off += 2; // stand-alone markers (and a stray stuffed zero): nothing follows them
      continue;
    }
    if (m === 0xd8) throw invalid('a second start-of-image marker');
    if (off + 4 > b.length) throw invalid('truncated marker segment');
    const len = (b[off + 2]! << 8) | b[off + 3]!;
    const body = off + 4;
    const end = off + 2 + len;
    if (len < 2 || end > b.length) throw invalid(`truncated marker segment 0xFF${m.toString(16).toUpperCase()}`);
    if (m === 0xda) {
      if (!frame) throw invalid('a scan before the frame header');
      if (++scans > MAX_JPEG_SCANS)
        throw costly(`the JPEG holds more than ${MAX_JPEG_SCANS} scans; no encoder writes that many`);
      const ns = b[body]!;
      if (ns < 1 || ns > 4 || len !== 6 + 2 * ns) throw invalid('malformed scan header');
      const members: JpegComponent[] = [];
      for (let i = 0; i < ns; i++) {
        const c = frame.components.find((x) => x.id === b[body + 1 + 2 * i]);
        if (!c) throw invalid('a scan of a component the frame does not have');
        members.push(c);
      }
      // One component alone is scanned block by block over its own size; several are interleaved in MCUs.
      let blocks: number;
      let units: number;
      if (ns === 1) {
        const c = members[0]!;
        units = blocks =
          Math.ceil(Math.ceil((frame.width * c.h) / frame.maxH) / 8) *
          Math.ceil(Math.ceil((frame.height * c.v) / frame.maxV) / 8);
      } else {
        units = frame.mcusX * frame.mcusY;
        blocks = units * members.reduce((n, c) => n + c.h * c.v, 0);
      }
      scanBlocks += blocks;
      if (restartInterval > 0) restarts += Math.ceil(units / restartInterval);
      const data = end;
      off = skipEntropyData(b, data);
      entropyBytes += off - data;
      continue;
    }
    if (++segments > MAX_JPEG_SEGMENTS) throw costly(`the JPEG holds more than ${MAX_JPEG_SEGMENTS} marker segments`);
    if (m === 0xc0 || m === 0xc1 || m === 0xc2) {
      if (frame) throw invalid('more than one frame header');
      frame = readFrame(b, body, len, m);
    } else if (OTHER_PROCESSES[m]) {
      throw unsupported(`${OTHER_PROCESSES[m]} JPEG is not supported`);
    } else if (m === 0xcc) {
      throw unsupported('arithmetic-coded JPEG is not supported');
    } else if (m === 0xdd) {
      if (len !== 4) throw invalid('malformed restart interval');
      restartInterval = (b[body]! << 8) | b[body + 1]!;
    } else if (m === 0xee && len >= 14 && String.fromCharCode(...b.subarray(body, body + 5)) === 'Adobe') {
      adobeTransform = b[body + 11]!;
    }
    off = end;
  }
  if (!frame) throw invalid('no frame header');
  if (scans === 0) throw invalid('no scan');
  const { mcusX: _x, mcusY: _y, maxH: _h, maxV: _v, ...rest } = frame;
  return { ...rest, adobeTransform, scans, scanBlocks, restarts, entropyBytes };
}

function readFrame(b: Uint8Array, body: number, len: number, marker: number) {
  const precision = b[body]!;
  const height = (b[body + 1]! << 8) | b[body + 2]!;
  const width = (b[body + 3]! << 8) | b[body + 4]!;
  const n = b[body + 5]!;
  if (len !== 8 + 3 * n) throw invalid('malformed frame header');
  if (precision !== 8) throw unsupported(`${precision}-bit JPEG is not supported`);
  // Height 0 means "given later by a DNL marker", which neither decoder supports.
  if (width === 0 || height === 0) throw invalid('a frame of zero width or height');
  if (n !== 1 && n !== 3 && n !== 4)
    throw unsupported(`a JPEG of ${n} colour components is not supported (1 grey, 3 colour or 4 CMYK)`);
  const components: JpegComponent[] = [];
  for (let i = 0; i < n; i++) {
    const at = body + 6 + 3 * i;
    const c = { id: b[at]!, h: b[at + 1]! >> 4, v: b[at + 1]! & 15 };
    if (c.h < 1 || c.h > 4 || c.v < 1 || c.v > 4) throw invalid('a sampling factor outside 1..4');
    if (components.some((x) => x.id === c.id)) throw invalid('two components with one id');
    components.push(c);
  }
  const maxH = Math.max(...components.map((c) => c.h));
  const maxV = Math.max(...components.map((c) => c.v));
  const mcusX = Math.ceil(width / (8 * maxH));
  const mcusY = Math.ceil(height / (8 * maxV));
  // The decoders keep every component's blocks padded to whole MCUs.
  const frameBlocks = components.reduce((sum, c) => sum + mcusX * c.h * mcusY * c.v, 0);
  const coding = marker === 0xc2 ? 'progressive' : marker === 0xc1 ? 'extended' : 'baseline';
  return { width, height, coding, components, frameBlocks, mcusX, mcusY, maxH, maxV } as const;
}

/**
 * The offset of the marker that ends the entropy-coded data starting at `from`: the first 0xFF followed by
 * neither a stuffed zero nor a restart marker (fill bytes 0xFF may repeat). The end of the bytes when there is
 * none (the walk then reports the missing end-of-image marker).
 */
function skipEntropyData(b: Uint8Array, from: number): number {
  let at = from;
  for (;;) {
    at = b.indexOf(0xff, at);
    if (at < 0 || at + 1 >= b.length) return b.length;
    const next = b[at + 1]!;
    if (next === 0x00 || (next >= 0xd0 && next <= 0xd7) || next === 0xff) at += next === 0xff ? 1 : 2;
    else return at;
  }
}
