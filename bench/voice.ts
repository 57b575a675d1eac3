// npm run bench -- voice [--rounds N]
// Milliseconds of CPU per second of audio for each stage of the voice engine, on real recordings from
// test/fixtures/speech (node scripts/fetch-test-speech.mjs): decode (WAV parse + resampling to 16 kHz +
// volume), VAD (energy VAD, measures, trimming), features (power mel front end, partials) and template
// (the GE2E encoder on onnxruntime-web, one wasm thread, as in a pool worker). CPU time is
// process.cpuUsage() around each stage, on the main thread, with nothing else running in this process.
import { readdirSync, readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { decodeWav } from '../src/biometrics/voice/wav.js';
import { resample } from '../src/biometrics/voice/resample.js';
import { detectVoice, keepVoiced } from '../src/biometrics/voice/vad.js';
import { measureVoice } from '../src/biometrics/voice/quality.js';
import { MEL, MelSpectrogram } from '../src/biometrics/voice/mel.js';
import { PARTIAL_FRAMES, partialSlices } from '../src/biometrics/voice/partials.js';
import { normaliseVolume } from '../src/biometrics/voice/pipeline.js';
import { nodeModelLoader } from '../src/extraction/node-models.js';
import { OrtVoiceRunner } from '../src/extraction/ort-voice-runner.js';
import { processCpuMs as cpuMs } from './thread-cpu.js';

const SPEECH = fileURLToPath(new URL('../test/fixtures/speech/', import.meta.url));

/** A few clips of each kind: 8 kHz telephone prompts and 44.1 kHz joined klettres utterances. */
function clips(): { name: string; bytes: Uint8Array }[] {
  const pick = (speaker: string, n: number) =>
    readdirSync(SPEECH + speaker)
      .filter((f) => f.endsWith('.wav'))
      .sort()
      .slice(0, n)
      .map((f) => ({ name: `${speaker}/${f}`, bytes: new Uint8Array(readFileSync(`${SPEECH}${speaker}/${f}`)) }));
  return [
    ...pick('asterisk-en_US_f_Allison', 4),
    ...pick('asterisk-it_IT_m_Carlo', 4),
    ...pick('klettres-es', 4),
    ...pick('klettres-de', 4),
  ];
}

export async function run(args: string[]) {
  const r = args.indexOf('--rounds');
  const rounds = r >= 0 ? Number(args[r + 1]) : 3;
  const runner = await OrtVoiceRunner.create({ loadModel: nodeModelLoader() });
  const mel = new MelSpectrogram();
  const set = clips();
  const stage = { decode: 0, vad: 0, features: 0, template: 0 };
  let audioSeconds = 0,
    partials = 0;
  const wallStart = performance.now();
  for (let round = 0; round < rounds; round++) {
    for (const clip of set) {
      let t = cpuMs();
      const d = decodeWav(clip.bytes);
      const audio = normaliseVolume(resample(d.samples, d.sampleRate, MEL.sampleRate));
      stage.decode += cpuMs() - t;
      t = cpuMs();
      const vad = detectVoice(audio, MEL.sampleRate);
      measureVoice(vad, audio.length, MEL.sampleRate, d.clippedRatio);
      const speech = keepVoiced(audio, vad);
      stage.vad += cpuMs() - t;
      t = cpuMs();
      const { starts, paddedLength } = partialSlices(speech.length);
      const padded = new Float32Array(Math.max(paddedLength, speech.length));
      padded.set(speech);
      const frames = mel.compute(padded);
      const batch = new Float32Array(starts.length * PARTIAL_FRAMES * MEL.bands);
      starts.forEach((s, i) =>
        batch.set(frames.subarray(s * MEL.bands, (s + PARTIAL_FRAMES) * MEL.bands), i * PARTIAL_FRAMES * MEL.bands),
      );
      stage.features += cpuMs() - t;
      t = cpuMs();
      await runner.embed(batch, starts.length);
      stage.template += cpuMs() - t;
      audioSeconds += d.samples.length / d.sampleRate;
      partials += starts.length;
    }
  }
  const wall = performance.now() - wallStart;
  await runner.release();
  const per = (ms: number) => Number((ms / audioSeconds).toFixed(2));
  const total = stage.decode + stage.vad + stage.features + stage.template;
  return {
    benchmark: 'voice',
    clips: set.length,
    rounds,
    audioSeconds: Number(audioSeconds.toFixed(1)),
    partialsPerAudioSecond: Number((partials / audioSeconds).toFixed(2)),
    cpuMsPerAudioSecond: {
      decode: per(stage.decode),
      vad: per(stage.vad),
      features: per(stage.features),
      template: per(stage.template),
      total: per(total),
    },
    wallMsPerAudioSecond: per(wall),
    machine: { cpu: cpus()[0]?.model, cores: cpus().length, loadavg: loadavg().map((x) => Number(x.toFixed(2))) },
  };
}
