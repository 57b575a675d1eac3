import { detectVoice } from '../../biometrics/voice/vad.js';
import { encodeWav16 } from '../../biometrics/voice/wav.js';

/** The decoder's audio: 16 kHz mono signed 16-bit PCM (src/sidecar/decoders/rtp-decoder.ts). */
const CAPTURE_PCM_RATE = 16_000;
/** The speech kept for the operation: the newest minute (a long session's early silence is of no use). */
const MAX_SECONDS = 60;
/** The VAD runs again after this much new audio: well under a millisecond per second of audio each time. */
const MEASURE_EVERY_SAMPLES = CAPTURE_PCM_RATE / 2;

/**
 * The voice of a multimodal capture session: the decoded PCM as it arrives, and how much of it is speech by
 * the voice pipeline's own VAD (src/biometrics/voice/vad.ts), so the session knows when it has heard enough
 * (`minSpeechMs`). The recording then goes to the operation as a WAV, where the pipeline applies its VAD and
 * quality gates (speech, clipping, SNR, quality) exactly as to an uploaded recording.
 */
export class VoiceCollector {
  private samples = new Float32Array(CAPTURE_PCM_RATE * 4);
  private length = 0;
  private sinceMeasure = 0;
  /** Milliseconds of speech the VAD found in the kept audio. */
  speechMs = 0;

  constructor(readonly minSpeechMs: number) {}

  /** One chunk of s16le PCM; true when the speech heard passed another half second (worth telling the client). */
  push(chunk: Uint8Array): boolean {
    const view = new DataView(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const count = chunk.byteLength >> 1;
    this.reserve(count);
    for (let i = 0; i < count; i++) this.samples[this.length + i] = view.getInt16(i * 2, true) / 32768;
    this.length += count;
    this.sinceMeasure += count;
    if (this.sinceMeasure < MEASURE_EVERY_SAMPLES) return false;
    this.sinceMeasure = 0;
    const before = this.speechMs;
    const vad = detectVoice(this.samples.subarray(0, this.length), CAPTURE_PCM_RATE);
    this.speechMs = Math.round((vad.mask.reduce((n, f) => n + f, 0) * vad.window * 1000) / CAPTURE_PCM_RATE);
    return Math.floor(this.speechMs / 500) !== Math.floor(before / 500);
  }

  get ready(): boolean {
    return this.speechMs >= this.minSpeechMs;
  }

  get durationMs(): number {
    return Math.round((this.length * 1000) / CAPTURE_PCM_RATE);
  }

  /** The kept audio as a 16-bit PCM WAV, as a client would upload it. */
  wav(): Uint8Array {
    return encodeWav16(this.samples.subarray(0, this.length), CAPTURE_PCM_RATE);
  }

  private reserve(count: number): void {
    const max = CAPTURE_PCM_RATE * MAX_SECONDS;
    if (this.length + count > max) {
      // Keep the newest minute: drop the oldest samples.
      const drop = this.length + count - max;
      this.samples.copyWithin(0, drop, this.length);
      this.length -= drop;
    }
    if (this.length + count > this.samples.length) {
      const grown = new Float32Array(Math.min(max, Math.max(this.samples.length * 2, this.length + count)));
      grown.set(this.samples.subarray(0, this.length));
      this.samples = grown;
    }
  }
}
