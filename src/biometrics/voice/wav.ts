import { BiometricError } from '../errors.js';

/** A decoded recording: channels mixed down to mono, samples as floats in [-1, 1]. */
interface DecodedAudio {
  sampleRate: number;
  /** Channels in the file (the samples below are their average). */
  channels: number;
  /** Bits per sample in the file and whether they were float. */
  bitsPerSample: number;
  float: boolean;
  samples: Float32Array;
  /**
   * Fraction of samples (over every channel) sitting at the format's full scale: the signature of a
   * recording clipped by its ADC or by a gain stage. Float files count |x| >= 1.
   */
  clippedRatio: number;
}

/**
 * Limits of the decoder. `maxSeconds`: the analysis costs in proportion to the recording's length (the speaker
 * encoder embeds every 1.6 s of speech), so a WAV of 8-bit samples at 8 kHz would hold over an hour in the
 * request body limit; two minutes is far more than an enrolment or a probe needs.
 */
const WAV_LIMITS = Object.freeze({ minSampleRate: 8000, maxSampleRate: 48000, maxChannels: 2, maxSeconds: 120 });

/** Where a WAV's samples lie and how they are encoded, read from its chunks without decoding them. */
interface WavLayout {
  /** 1 PCM or 3 IEEE float (the sub-format of WAVE_FORMAT_EXTENSIBLE). */
  format: number;
  channels: number;
  sampleRate: number;
  bitsPerSample: number;
  /** Byte offset of the first sample frame. */
  start: number;
  /** Sample frames (one sample per channel each). */
  frames: number;
}

const PCM = 1;
const IEEE_FLOAT = 3;
const EXTENSIBLE = 0xfffe;

const invalid = (why: string) => new BiometricError('INVALID_AUDIO', `not a readable WAV file: ${why}`);
const unsupported = (why: string) => new BiometricError('UNSUPPORTED_FORMAT', why);

const ascii = (b: Uint8Array, o: number) => String.fromCharCode(b[o]!, b[o + 1]!, b[o + 2]!, b[o + 3]!);

/** Names the container of bytes that are not WAV, so the client learns what it sent. */
function containerOf(b: Uint8Array): string | null {
  if (b.length >= 4 && ascii(b, 0) === 'OggS') return 'Ogg';
  if (b.length >= 4 && ascii(b, 0) === 'fLaC') return 'FLAC';
  if (b.length >= 3 && ascii(b, 0).startsWith('ID3')) return 'MP3';
  if (b.length >= 2 && b[0] === 0xff && (b[1]! & 0xe0) === 0xe0) return 'MPEG audio';
  if (b.length >= 8 && ascii(b, 4) === 'ftyp') return 'MP4/M4A';
  if (b.length >= 4 && b[0] === 0x1a && b[1] === 0x45 && b[2] === 0xdf && b[3] === 0xa3) return 'WebM/Matroska';
  if (b.length >= 4 && ascii(b, 0) === 'FORM') return 'AIFF';
  return null;
}

/**
 * Reads a RIFF/WAVE file's chunks: PCM 8 (unsigned), 16, 24 and 32-bit integer, IEEE float 32 and 64-bit, plain
 * or WAVE_FORMAT_EXTENSIBLE, mono or stereo, 8 to 48 kHz, at most {@link WAV_LIMITS}.maxSeconds long. Nothing is
 * decoded: what the analysis will cost is known from this (the extraction pool weighs voice jobs by it).
 *
 * Anything else is refused rather than guessed at: another container or codec is UNSUPPORTED_FORMAT; a
 * WAV whose chunks are cut short or inconsistent is INVALID_AUDIO (a truncated upload must not be enrolled
 * as a shorter recording); a longer recording is AUDIO_TOO_LONG. A data chunk whose size field is 0 or
 * 0xFFFFFFFF (streaming writers that never went back to fill it in) runs to the end of the file.
 */
export function readWavLayout(bytes: Uint8Array): WavLayout {
  if (bytes.length < 12 || ascii(bytes, 0) !== 'RIFF' || ascii(bytes, 8) !== 'WAVE') {
    if (bytes.length >= 4 && (ascii(bytes, 0) === 'RIFX' || ascii(bytes, 0) === 'RF64'))
      throw unsupported(`${ascii(bytes, 0)} (big-endian or 64-bit) WAV is not supported; send a RIFF/WAVE file`);
    if (bytes.length >= 4 && ascii(bytes, 0) === 'RIFF')
      throw invalid(bytes.length < 12 ? 'truncated header' : 'RIFF file that is not WAVE');
    const kind = containerOf(bytes);
    throw unsupported(`${kind ? `${kind} audio` : 'the bytes'} cannot be read: send a WAV file (PCM or float)`);
  }
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let fmt: { format: number; channels: number; rate: number; align: number; bits: number } | null = null;
  let data: { start: number; length: number } | null = null;
  let o = 12;
  while (o + 8 <= bytes.length) {
    const id = ascii(bytes, o);
    const size = dv.getUint32(o + 4, true);
    const body = o + 8;
    if (id === 'data') {
      const open = size === 0 || size === 0xffffffff;
      if (!open && body + size > bytes.length)
        throw invalid(`truncated: the data chunk declares ${size} bytes, ${bytes.length - body} are present`);
      data = { start: body, length: open ? bytes.length - body : size };
      if (fmt) break;
    } else if (id === 'fmt ') {
      if (size < 16 || body + size > bytes.length) throw invalid('truncated fmt chunk');
      let format = dv.getUint16(body, true);
      const bits = dv.getUint16(body + 14, true);
      if (format === EXTENSIBLE) {
        if (size < 40) throw invalid('WAVE_FORMAT_EXTENSIBLE fmt chunk shorter than 40 bytes');
        format = dv.getUint16(body + 24, true); // first two bytes of the sub-format GUID
      }
      fmt = {
        format,
        channels: dv.getUint16(body + 2, true),
        rate: dv.getUint32(body + 4, true),
        align: dv.getUint16(body + 12, true),
        bits,
      };
    } else if (body + size > bytes.length) {
      throw invalid(`truncated ${JSON.stringify(id)} chunk`);
    }
    o = body + size + (size & 1); // chunks are word-aligned
  }
  if (!fmt) throw invalid('no fmt chunk');
  if (!data) throw invalid('no data chunk');
  const { format, channels, rate, bits } = fmt;
  const isFloat = format === IEEE_FLOAT;
  if (format !== PCM && !isFloat)
    throw unsupported(`WAV encoding ${format} (compressed) is not supported; send PCM or float samples`);
  if (isFloat ? bits !== 32 && bits !== 64 : ![8, 16, 24, 32].includes(bits))
    throw unsupported(`${bits}-bit ${isFloat ? 'float' : 'PCM'} WAV is not supported`);
  if (channels < 1 || channels > WAV_LIMITS.maxChannels)
    throw unsupported(`${channels} channels: mono or stereo expected`);
  if (rate < WAV_LIMITS.minSampleRate || rate > WAV_LIMITS.maxSampleRate)
    throw unsupported(`sample rate ${rate} Hz is outside ${WAV_LIMITS.minSampleRate}..${WAV_LIMITS.maxSampleRate} Hz`);
  const frameBytes = (bits / 8) * channels;
  if (fmt.align !== frameBytes)
    throw invalid(`block align ${fmt.align} does not match ${channels} x ${bits}-bit samples`);
  if (data.length % frameBytes !== 0) throw invalid('truncated: the data chunk ends inside a sample frame');
  const frames = data.length / frameBytes;
  if (frames === 0) throw invalid('the data chunk holds no samples');
  if (frames / rate > WAV_LIMITS.maxSeconds)
    throw new BiometricError(
      'AUDIO_TOO_LONG',
      `the recording lasts ${(frames / rate).toFixed(1)} s; at most ${WAV_LIMITS.maxSeconds} s are accepted`,
    );
  return { format, channels, sampleRate: rate, bitsPerSample: bits, start: data.start, frames };
}

/**
 * Decodes a WAV that {@link readWavLayout} accepts; channels are averaged.
 *
 * @throws BiometricError as readWavLayout, and INVALID_AUDIO for float samples that are not finite.
 * @example
 * const { samples, sampleRate } = decodeWav(bytes);
 */
export function decodeWav(bytes: Uint8Array): DecodedAudio {
  const { format, channels, sampleRate, bitsPerSample: bits, start, frames } = readWavLayout(bytes);
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const isFloat = format === IEEE_FLOAT;
  const full = isFloat ? 1 : 1 - 1 / 2 ** (bits - 1); // the largest positive code, scaled
  const out = new Float32Array(frames);
  const clipped = readSamples(dv, start, frames, channels, isFloat ? -bits : bits, full, out);
  if (isFloat)
    for (let i = 0; i < frames; i++)
      if (!Number.isFinite(out[i]!)) throw invalid('float samples that are not finite numbers');
  return {
    sampleRate,
    channels,
    bitsPerSample: bits,
    float: isFloat,
    samples: out,
    clippedRatio: clipped / (frames * channels),
  };
}

/**
 * Averages the channels of each frame into `out`, scaled to [-1, 1); returns how many samples sit at full
 * scale. `kind` is the bit depth, negative for float. One loop with the format switch inside: a reader
 * closure per format made this call site megamorphic and the decoder ten times slower (1.1 against 0.11 ms
 * per second of audio).
 */
function readSamples(
  dv: DataView,
  start: number,
  frames: number,
  channels: number,
  kind: number,
  full: number,
  out: Float32Array,
): number {
  const width = Math.abs(kind) / 8;
  let clipped = 0;
  for (let i = 0, p = start; i < frames; i++) {
    let s = 0;
    for (let c = 0; c < channels; c++, p += width) {
      let v: number;
      switch (kind) {
        case 16:
          v = dv.getInt16(p, true) / 32768;
          break;
        case 8:
          v = (dv.getUint8(p) - 128) / 128;
          break; // 8-bit WAV is unsigned
        case 24:
          v = (dv.getUint8(p) | (dv.getUint8(p + 1) << 8) | (dv.getInt8(p + 2) << 16)) / 8388608;
          break;
        case 32:
          v = dv.getInt32(p, true) / 2147483648;
          break;
        case -32:
          v = dv.getFloat32(p, true);
          break;
        default:
          v = dv.getFloat64(p, true);
      }
      if (v >= full || v <= -1) clipped++;
      s += v;
    }
    out[i] = s / channels;
  }
  return clipped;
}

/**
 * Encodes mono float samples as a 16-bit PCM WAV (tests, fixtures, the evaluation's joined utterances).
 * Samples are clamped to [-1, 1].
 */
export function encodeWav16(samples: ArrayLike<number>, sampleRate: number): Uint8Array {
  const out = new Uint8Array(44 + samples.length * 2);
  const dv = new DataView(out.buffer);
  const put = (o: number, s: string) => {
    for (let i = 0; i < 4; i++) out[o + i] = s.charCodeAt(i);
  };
  put(0, 'RIFF');
  dv.setUint32(4, 36 + samples.length * 2, true);
  put(8, 'WAVE');
  put(12, 'fmt ');
  dv.setUint32(16, 16, true);
  dv.setUint16(20, PCM, true);
  dv.setUint16(22, 1, true);
  dv.setUint32(24, sampleRate, true);
  dv.setUint32(28, sampleRate * 2, true);
  dv.setUint16(32, 2, true);
  dv.setUint16(34, 16, true);
  put(36, 'data');
  dv.setUint32(40, samples.length * 2, true);
  for (let i = 0; i < samples.length; i++) {
    const v = Math.max(-1, Math.min(1, samples[i]!));
    dv.setInt16(44 + i * 2, Math.round(v < 0 ? v * 32768 : v * 32767), true);
  }
  return out;
}
