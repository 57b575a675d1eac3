import { BiometricError } from '../errors.js';
import { decodeWav } from './wav.js';
import { resample } from './resample.js';
import { detectVoice, keepVoiced } from './vad.js';
import { measureVoice, type VoiceMeasures } from './quality.js';
import { MEL, MelSpectrogram } from './mel.js';
import { PARTIAL_FRAMES, partialSlices } from './partials.js';

/** Dimensions of a voice embedding. */
export const VOICE_EMBEDDING_DIMS = 256;

/**
 * Runs the speaker encoder on a batch of partials. The pipeline depends only on this, so the same front
 * end feeds onnxruntime-web in the worker pool, inline, and in the benchmark.
 */
export interface VoiceModelRunner {
  /** mels: batch x 160 x 40 float32; returns batch x 256 L2-normalised embeddings. */
  embed(mels: Float32Array, batch: number): Promise<Float32Array>;
  release(): Promise<void>;
}

/** Options of analyseVoice. */
export interface VoiceAnalyseOptions {
  /** Run the encoder (default true). False: measures only. */
  embed?: boolean;
}

/** Milliseconds spent in each stage (for the benchmark). */
interface VoiceStageTimings {
  decode: number;
  vad: number;
  features: number;
  template: number;
}

/** Everything the voice engine learns from one recording. */
export interface VoiceAnalysis extends VoiceMeasures {
  /** The file's own sample rate, channels and sample format. */
  sampleRate: number;
  channels: number;
  bitsPerSample: number;
  durationMs: number;
  /** Partials averaged into the embedding (0 when not embedded). */
  partials: number;
  /** 256-d L2-normalised utterance embedding, or null when there was no speech or `embed` was false. */
  embedding: Float32Array | null;
  timings: VoiceStageTimings;
}

/** Resemblyzer raises quiet recordings to this average level before anything else (never lowers). */
const TARGET_DBFS = -30;

/** normalize_volume(wav, -30, increase_only=True). */
export function normaliseVolume(samples: Float32Array): Float32Array {
  let e = 0;
  for (let i = 0; i < samples.length; i++) e += samples[i]! * samples[i]!;
  if (e === 0) return samples;
  const change = TARGET_DBFS - 10 * Math.log10(e / samples.length);
  if (change <= 0) return samples;
  const gain = 10 ** (change / 20);
  const out = new Float32Array(samples.length);
  for (let i = 0; i < samples.length; i++) out[i] = samples[i]! * gain;
  return out;
}

let mel: MelSpectrogram | undefined;

/**
 * The utterance embedding of speech already trimmed by the VAD: partials of 160 mel frames, embedded as
 * one batch, averaged and L2-normalised (Resemblyzer's embed_utterance).
 */
async function embedSpeech(
  runner: VoiceModelRunner,
  speech: Float32Array,
  timings?: VoiceStageTimings,
): Promise<{ embedding: Float32Array; partials: number }> {
  let t = performance.now();
  const { starts, paddedLength } = partialSlices(speech.length);
  let audio = speech;
  if (paddedLength > speech.length) {
    audio = new Float32Array(paddedLength);
    audio.set(speech);
  }
  mel ??= new MelSpectrogram();
  const frames = mel.compute(audio);
  const batch = new Float32Array(starts.length * PARTIAL_FRAMES * MEL.bands);
  starts.forEach((s, i) =>
    batch.set(frames.subarray(s * MEL.bands, (s + PARTIAL_FRAMES) * MEL.bands), i * PARTIAL_FRAMES * MEL.bands),
  );
  if (timings) {
    timings.features += performance.now() - t;
    t = performance.now();
  }
  const out = await runner.embed(batch, starts.length);
  const embedding = new Float32Array(VOICE_EMBEDDING_DIMS);
  for (let b = 0; b < starts.length; b++)
    for (let k = 0; k < VOICE_EMBEDDING_DIMS; k++) embedding[k]! += out[b * VOICE_EMBEDDING_DIMS + k]! / starts.length;
  l2normalise(embedding);
  if (timings) timings.template += performance.now() - t;
  return { embedding, partials: starts.length };
}

/** Scales v to unit length in place (a zero vector stays zero). */
export function l2normalise(v: Float32Array): Float32Array {
  let n = 0;
  for (let i = 0; i < v.length; i++) n += v[i]! * v[i]!;
  n = Math.sqrt(n);
  if (n > 0) for (let i = 0; i < v.length; i++) v[i]! /= n;
  return v;
}

/**
 * Decodes a WAV, resamples it to 16 kHz mono, raises its volume to -30 dBFS, finds speech (energy VAD),
 * measures speech duration, SNR, clipping and quality, and (unless `embed` is false or no speech was found)
 * embeds the speech with the GE2E encoder.
 *
 * @throws BiometricError UNSUPPORTED_FORMAT (not WAV, or a WAV encoding not read), INVALID_AUDIO (truncated
 *   or corrupt WAV).
 * @example
 * const a = await analyseVoice(runner, wavBytes);
 * if (a.embedding) encodeVoiceTemplate(version, a);
 */
export async function analyseVoice(
  runner: VoiceModelRunner,
  bytes: Uint8Array,
  opts: VoiceAnalyseOptions = {},
): Promise<VoiceAnalysis> {
  const timings: VoiceStageTimings = { decode: 0, vad: 0, features: 0, template: 0 };
  let t = performance.now();
  const decoded = decodeWav(bytes);
  const audio = normaliseVolume(resample(decoded.samples, decoded.sampleRate, MEL.sampleRate));
  timings.decode = performance.now() - t;
  t = performance.now();
  const vad = detectVoice(audio, MEL.sampleRate);
  const measures = measureVoice(vad, audio.length, MEL.sampleRate, decoded.clippedRatio);
  const speech = keepVoiced(audio, vad);
  timings.vad = performance.now() - t;
  let embedding: Float32Array | null = null;
  let partials = 0;
  if (opts.embed !== false && speech.length > 0) {
    try {
      ({ embedding, partials } = await embedSpeech(runner, speech, timings));
    } catch (e) {
      throw BiometricError.is(e)
        ? e
        : new BiometricError('EXTRACTION_FAILED', `voice encoder failed: ${(e as Error).message}`);
    }
  }
  return {
    ...measures,
    sampleRate: decoded.sampleRate,
    channels: decoded.channels,
    bitsPerSample: decoded.bitsPerSample,
    durationMs: Math.round((decoded.samples.length / decoded.sampleRate) * 1000),
    partials,
    embedding,
    timings,
  };
}
