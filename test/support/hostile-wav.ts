// Generated hostile WAV files (never committed): headers that lie about sizes, huge or numerous chunks, and
// recordings far longer than a voice sample. See docs/admission.md.

const ascii = (s: string) => [...s].map((c) => c.charCodeAt(0));
const u32 = (v: number) => [v & 255, (v >>> 8) & 255, (v >>> 16) & 255, (v >>> 24) & 255];
const u16 = (v: number) => [v & 255, (v >>> 8) & 255];

/** A `fmt ` chunk: PCM, `channels`, `rate`, `bits`. */
export function fmtChunk(rate = 8000, bits = 8, channels = 1, declaredSize = 16): number[] {
  const align = (bits / 8) * channels;
  return [
    ...ascii('fmt '),
    ...u32(declaredSize),
    ...u16(1),
    ...u16(channels),
    ...u32(rate),
    ...u32(rate * align),
    ...u16(align),
    ...u16(bits),
  ];
}

/** A RIFF/WAVE file of these chunk bytes (the RIFF size set to what follows). */
export function wavFile(chunks: readonly (number[] | Uint8Array)[]): Uint8Array {
  const length = chunks.reduce((n, c) => n + c.length, 0);
  const out = new Uint8Array(12 + length);
  out.set([...ascii('RIFF'), ...u32(4 + length), ...ascii('WAVE')]);
  let at = 12;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

/** A data chunk header declaring `declared` bytes, followed by `present` bytes of quiet samples. */
export function dataChunk(declared: number, present: number): Uint8Array {
  const out = new Uint8Array(8 + present).fill(128);
  out.set([...ascii('data'), ...u32(declared)]);
  return out;
}

/** A WAV whose data chunk declares a gibibyte and holds one kilobyte. */
export const lyingDataWav = () => wavFile([fmtChunk(), dataChunk(2 ** 30, 1024)]);

/** A WAV whose fmt chunk declares 4 GiB (the decoder must not trust it to allocate or skip). */
export const hugeFmtWav = () => wavFile([fmtChunk(8000, 8, 1, 0xffffff00), dataChunk(1024, 1024)]);

/** A WAV with `count` empty `junk` chunks before its fmt and data (each 8 bytes). */
export function manyChunksWav(count: number): Uint8Array {
  const junk = [...ascii('junk'), ...u32(0)];
  return wavFile([...Array.from({ length: count }, () => junk), fmtChunk(), dataChunk(8000, 8000)]);
}

/**
 * A recording of `seconds` of 8-bit samples at 8 kHz, with the data size left open (0xFFFFFFFF, as a streaming
 * writer leaves it): 8 KB per second, so the request body limit would hold over an hour.
 */
export const longWav = (seconds: number) => wavFile([fmtChunk(), dataChunk(0xffffffff, seconds * 8000)]);
