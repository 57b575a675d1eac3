import { MEL } from './mel.js';

/** Frames per partial utterance (1.6 s) fed to the encoder. */
export const PARTIAL_FRAMES = 160;
/** Partials per second of audio. */
const PARTIAL_RATE = 1.3;
/** The last partial is kept only when the audio covers at least this share of it. */
const MIN_COVERAGE = 0.75;

/**
 * Where the partial utterances of `n` samples start (in mel frames), and how many samples the audio must
 * be zero-padded to so that the last partial is complete. Resemblyzer's compute_partial_slices, step for
 * step: a partial every round(16000 / 1.3 / 160) = 77 frames, the last one dropped when less than 75%
 * covered (unless it is the only one).
 */
export function partialSlices(n: number): { starts: number[]; paddedLength: number } {
  const hop = MEL.hop;
  const frames = Math.ceil((n + 1) / hop);
  const step = Math.round(MEL.sampleRate / PARTIAL_RATE / hop);
  const steps = Math.max(1, frames - PARTIAL_FRAMES + step + 1);
  const starts: number[] = [];
  for (let i = 0; i < steps; i += step) starts.push(i);
  const last = starts[starts.length - 1]!;
  const coverage = (n - last * hop) / (PARTIAL_FRAMES * hop);
  if (coverage < MIN_COVERAGE && starts.length > 1) starts.pop();
  return { starts, paddedLength: Math.max(n, (starts[starts.length - 1]! + PARTIAL_FRAMES) * hop) };
}
