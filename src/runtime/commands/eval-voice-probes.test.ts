import { describe, expect, it } from 'vitest';
import { DEFAULT_VOICE_GATES, gateVoice } from '../../biometrics/voice/settings.js';
import { decodeWav, encodeWav16 } from '../../biometrics/voice/wav.js';
import { cutToSpeech, speechSecondsOf } from './eval-voice-probes.js';

/** 8 kHz: quiet hiss, then voiced stretches (a 200 Hz buzz with harmonics) between pauses, as a prompt has them. */
function prompt(): Uint8Array {
  const rate = 8000;
  const parts: [seconds: number, voiced: boolean][] = [
    [0.5, false],
    [1.2, true],
    [0.6, false],
    [1.5, true],
    [0.5, false],
  ];
  const samples: number[] = [];
  let seed = 7;
  const hiss = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return (seed / 2 ** 31 - 0.5) * 0.002;
  };
  for (const [seconds, voiced] of parts)
    for (let i = 0; i < seconds * rate; i++) {
      const t = i / rate;
      const buzz = voiced ? 0.3 * (Math.sin(2 * Math.PI * 200 * t) + 0.5 * Math.sin(2 * Math.PI * 400 * t)) : 0;
      samples.push(buzz + hiss());
    }
  // A chunk after the data, as some writers add (LIST/INFO): the cut must drop it and stay a valid WAV.
  const wav = encodeWav16(samples, rate);
  const list = Uint8Array.of(...new TextEncoder().encode('LIST'), 4, 0, 0, 0, ...new TextEncoder().encode('INFO'));
  const out = new Uint8Array(wav.length + list.length);
  out.set(wav);
  out.set(list, wav.length);
  new DataView(out.buffer).setUint32(4, out.length - 8, true);
  return out;
}

describe('eval --probe-seconds: a recording cut to an amount of speech', () => {
  it('keeps the original samples up to where the VAD has heard that much speech, as a valid WAV', () => {
    const original = prompt();
    const whole = speechSecondsOf(original);
    expect(whole).toBeGreaterThan(2.5);
    for (const seconds of [1, 1.5, 2]) {
      const cut = cutToSpeech(original, seconds)!;
      const heard = speechSecondsOf(cut);
      // The VAD on the cut recording hears about the same speech: at the new end its 8-window smoothing sees
      // zeros past the cut and its 3-window dilation has nothing to reach, so up to 5 windows of 30 ms move.
      expect(Math.abs(heard - seconds), `${seconds} s`).toBeLessThanOrEqual(0.15 + 1e-9);
      const a = decodeWav(original).samples,
        b = decodeWav(cut).samples;
      expect(b.length).toBeLessThan(a.length);
      expect(b).toEqual(a.subarray(0, b.length));
    }
    expect(cutToSpeech(original, whole + 0.5)).toBeNull();
  });

  it('refuses a sample under voice.minSpeechSeconds with the measured reason and what to do', () => {
    const refused = gateVoice({ speechSeconds: 1.42, snrDb: 30, clippedRatio: 0, quality: 80 }, DEFAULT_VOICE_GATES);
    expect(refused?.failure).toBe('TOO_LITTLE_SPEECH');
    expect(refused?.reason).toBe(
      '1.42 s of speech detected, 2 s needed (setting voice.minSpeechSeconds): shorter samples seldom match their own speaker (at the default threshold 10% of genuine 1.5 s samples did, 27% at 2 s, 65% at 3 s; docs/voice.md). Record 3 s or more of speech',
    );
  });
});
