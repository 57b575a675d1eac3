import type { VadResult } from './vad.js';

/** Measurements of one recording, computed before the encoder runs. */
export interface VoiceMeasures {
  /** Length of the recording, seconds. */
  durationSeconds: number;
  /** Seconds the VAD kept as speech. */
  speechSeconds: number;
  /** speechSeconds / durationSeconds. */
  speechRatio: number;
  /**
   * Signal-to-noise ratio estimate in dB: mean power of the speech windows over the noise floor (the 10th
   * percentile window power), capped at 60 dB (studio prompts have digital silence between words).
   */
  snrDb: number;
  /** Fraction of samples at full scale (decoder's count). */
  clippedRatio: number;
  /** 0..100, see voiceQuality. */
  quality: number;
}

const SNR_CAP_DB = 60;

/** Speech duration, SNR estimate and quality from the VAD's windows. */
export function measureVoice(vad: VadResult, sampleCount: number, rate: number, clippedRatio: number): VoiceMeasures {
  let speechWindows = 0,
    speechPower = 0;
  for (let w = 0; w < vad.mask.length; w++) {
    if (!vad.mask[w]) continue;
    speechWindows++;
    speechPower += 10 ** (vad.energyDb[w]! / 10);
  }
  const durationSeconds = sampleCount / rate;
  const speechSeconds = (speechWindows * vad.window) / rate;
  const snrDb = speechWindows ? Math.min(SNR_CAP_DB, 10 * Math.log10(speechPower / speechWindows) - vad.floorDb) : 0;
  const speechRatio = durationSeconds > 0 ? Math.min(1, speechSeconds / durationSeconds) : 0;
  return {
    durationSeconds,
    speechSeconds,
    speechRatio,
    snrDb,
    clippedRatio,
    quality: voiceQuality(speechSeconds, snrDb, clippedRatio),
  };
}

/**
 * Quality 0..100 of a recording for speaker recognition: 60% from the SNR (0 at 5 dB, full at 30 dB), 40%
 * from the amount of speech (full at 4 s: one enrolment clip of that length yields three partials), then
 * scaled down by clipping (halved at 1% of samples clipped, zero at 2%). A rough guide for the gate
 * `quality.voice.minimum`; the named gates (speech, SNR, clipping) say what to fix.
 */
function voiceQuality(speechSeconds: number, snrDb: number, clippedRatio: number): number {
  const clamp = (x: number) => Math.max(0, Math.min(1, x));
  const snr = clamp((snrDb - 5) / 25);
  const speech = clamp(speechSeconds / 4);
  const clipping = clamp(1 - clippedRatio * 50);
  return Math.round(100 * (0.6 * snr + 0.4 * speech) * clipping);
}
