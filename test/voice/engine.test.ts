// The voice engine on real recordings (node scripts/fetch-test-speech.mjs): genuine and impostor scores on
// held-apart clips, the quality gates on damaged recordings, and the worker pool agreeing with the inline
// extractor bit for bit.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VOICE_CALIBRATION } from '../../src/biometrics/calibration.js';
import { cosine } from '../../src/biometrics/template.js';
import { decodeWav, encodeWav16 } from '../../src/biometrics/voice/wav.js';
import { gateVoice, DEFAULT_VOICE_GATES } from '../../src/biometrics/voice/settings.js';
import { type VoiceAnalysis } from '../../src/biometrics/voice/pipeline.js';
import { l2normalise } from '../../src/biometrics/voice/pipeline.js';
import { createExtractor } from '../../src/extraction/index.js';
import { type Extractor } from '../../src/extraction/extractor.js';
import { nodeModelLoader } from '../../src/extraction/node-models.js';

const speech = (path: string) => new Uint8Array(readFileSync(new URL(`../fixtures/speech/${path}`, import.meta.url)));
const ALLISON = 'asterisk-en_US_f_Allison',
  CARLO = 'asterisk-it_IT_m_Carlo',
  JUNE = 'asterisk-fr_CA_f_June';

let pool: Extractor;
let inline: Extractor;
beforeAll(async () => {
  pool = await createExtractor({ mode: 'worker-threads', size: 1 });
  inline = await createExtractor({ mode: 'inline', loadModel: nodeModelLoader() });
}, 120_000);
afterAll(async () => {
  await pool?.close();
  await inline?.close();
});

const embed = async (path: string) => (await pool.analyseVoice(speech(path))).embedding!;
const mean = (vs: Float32Array[]) => {
  const m = new Float32Array(256);
  for (const v of vs) for (let i = 0; i < 256; i++) m[i]! += v[i]!;
  return l2normalise(m);
};

describe('voice engine on real speech', () => {
  it('scores a held-apart clip of the enrolled speaker above FAR 1% and other speakers below', async () => {
    const enrolled = mean(
      await Promise.all(
        ['agent-alreadyon.wav', 'conf-getconfno.wav', 'demo-instruct.wav'].map((f) => embed(`${ALLISON}/${f}`)),
      ),
    );
    const same = VOICE_CALIBRATION.cosineToScore(cosine(enrolled, await embed(`${ALLISON}/vm-newuser.wav`)));
    const others = await Promise.all(
      [`${CARLO}/conf-getconfno.wav`, `${JUNE}/conf-invalid.wav`, 'klettres-de/utterance-03.wav'].map(async (p) =>
        VOICE_CALIBRATION.cosineToScore(cosine(enrolled, await embed(p))),
      ),
    );
    expect(same).toBeGreaterThanOrEqual(24); // FAR 1e-2
    for (const s of others) expect(s).toBeLessThan(24);
  }, 60_000);

  it('gives bit-identical results in a pool worker and inline', async () => {
    for (const p of [`${ALLISON}/vm-newuser.wav`, 'klettres-es/utterance-02.wav']) {
      const [a, b] = await Promise.all([pool.analyseVoice(speech(p)), inline.analyseVoice(speech(p))]);
      expect(Array.from(a.embedding!)).toEqual(Array.from(b.embedding!));
      expect({ ...a, timings: 0 }).toEqual({ ...b, timings: 0 });
    }
  }, 60_000);
});

describe('voice quality gates', () => {
  const gate = (a: VoiceAnalysis) => gateVoice(a, DEFAULT_VOICE_GATES)?.failure ?? 'PASSED';
  const real = decodeWav(speech(`${ALLISON}/vm-newuser.wav`));

  it('passes a clean recording', async () => {
    expect(gate(await pool.analyseVoice(speech(`${ALLISON}/vm-newuser.wav`)))).toBe('PASSED');
  });

  it('refuses silence and noise without speech as TOO_LITTLE_SPEECH', async () => {
    expect(gate(await pool.analyseVoice(encodeWav16(new Float32Array(16000 * 3), 16000)))).toBe('TOO_LITTLE_SPEECH');
    let seed = 7;
    const noise = Float32Array.from(
      { length: 16000 * 4 },
      () => ((seed = (seed * 16807) % 2147483647) / 2147483647 - 0.5) * 0.2,
    );
    expect(gate(await pool.analyseVoice(encodeWav16(noise, 16000)))).toBe('TOO_LITTLE_SPEECH');
  });

  it('refuses speech drowned in noise as TOO_NOISY', async () => {
    let seed = 11;
    const rms = Math.sqrt(real.samples.reduce((a, x) => a + x * x, 0) / real.samples.length);
    const noisy = real.samples.map((x) => x + ((seed = (seed * 16807) % 2147483647) / 2147483647 - 0.5) * rms * 1.2);
    const a = await pool.analyseVoice(encodeWav16(noisy, real.sampleRate));
    expect(gate(a)).toBe('TOO_NOISY');
    expect(a.snrDb).toBeLessThan(DEFAULT_VOICE_GATES.minSnrDb);
  });

  it('refuses a recording driven into full scale as CLIPPED', async () => {
    const loud = real.samples.map((x) => Math.max(-1, Math.min(1, x * 20)));
    const a = await pool.analyseVoice(encodeWav16(loud, real.sampleRate));
    expect(gate(a)).toBe('CLIPPED');
    expect(a.clippedRatio).toBeGreaterThan(DEFAULT_VOICE_GATES.maxClippedRatio);
  });

  it('refuses a truncated WAV as INVALID_AUDIO and Ogg as UNSUPPORTED_FORMAT', async () => {
    const bytes = speech(`${ALLISON}/vm-newuser.wav`);
    await expect(pool.analyseVoice(bytes.subarray(0, bytes.length >> 1))).rejects.toMatchObject({
      code: 'INVALID_AUDIO',
      message: expect.stringMatching(/truncated/),
    });
    await expect(pool.analyseVoice(new TextEncoder().encode('OggS\0\x02 a page'))).rejects.toMatchObject({
      code: 'UNSUPPORTED_FORMAT',
    });
  });
});
