// `npm run eval -- --modality voice --probe-seconds 1,1.5,2`: what short probes cost. Each clip enrolled at
// its normal length (the default gates) is compared with every other clip cut to S seconds of speech: the
// recording is cut where the VAD has heard S seconds (the cut keeps the file's own samples, so clipping and
// noise measure as in the original), analysed as the service would, and refused only by the gates other than
// the speech minimum (that minimum is what the figures are for). Figures per S: probes tried, failures to
// acquire (FTA, by gate), the speech the cut probes measured, EER and TAR of one enrolment clip and of three
// averaged (as the service enrols several recordings) against the short probes.
import { readFileSync } from 'node:fs';
import { createNodePoolExtractor } from '../../extraction/node-pool.js';
import { cosineInt8, quantize } from '../../biometrics/template.js';
import { DEFAULT_VOICE_GATES, gateVoice } from '../../biometrics/voice/settings.js';
import { decodeWav } from '../../biometrics/voice/wav.js';
import { resample } from '../../biometrics/voice/resample.js';
import { normaliseVolume } from '../../biometrics/voice/pipeline.js';
import { detectVoice } from '../../biometrics/voice/vad.js';
import { MEL } from '../../biometrics/voice/mel.js';
import { VOICE_CALIBRATION } from '../../biometrics/calibration.js';
import { settingsRegistry } from '../../services/settings/registry.js';
import { eer, tarAtFar, type Pairs, type Sample } from './eval-lib.js';

/** The service's default acceptance score (matching.threshold), where voice alone claims FAR 1e-4. */
const DEFAULT_THRESHOLD = settingsRegistry['matching.threshold'].default;

/** A clip cut to S seconds of speech, with what the service measured on it. */
interface Probe {
  source: Sample;
  q?: Int8Array;
  speechSeconds?: number;
  refusedBy?: string;
}

/** The figures of one probe length. */
export interface ProbeLengthFigures {
  /** Seconds of speech, or "full" for the clips as recorded. */
  length: string;
  /** Clips holding less speech than that (refused as TOO_LITTLE_SPEECH were it the minimum). */
  shorter: number;
  /** Clips with at least S seconds of speech (the others cannot be cut to S). */
  probes: number;
  /** Share of those whose cut was refused (another gate, or no speech found on the cut). */
  fta: number;
  refusedBy: Record<string, number>;
  /** Speech the service measured on the accepted cuts: median and 10th percentile, seconds. */
  speechMedian: number;
  speechP10: number;
  genuinePairs: number;
  impostorPairs: number;
  eer: number;
  tarAtFar1e2: number;
  tarAtFar1e3: number;
  /** One enrolment clip at the default threshold: share of genuine pairs accepted, of impostor pairs accepted. */
  tarAtThreshold: number;
  farAtThreshold: number;
  /** Three enrolment clips averaged against the short probes. */
  enrol3: { eer: number; tarAtFar1e2: number; tarAtFar1e3: number; tarAtThreshold: number; genuinePairs: number };
}

/** Byte offset and frame size of a PCM/float WAV's data chunk (the file already decoded once, so well formed). */
function dataChunk(b: Uint8Array): { start: number; frameBytes: number } {
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  let frameBytes = 0;
  for (let o = 12; o + 8 <= b.length; ) {
    const id = String.fromCharCode(b[o]!, b[o + 1]!, b[o + 2]!, b[o + 3]!);
    const size = dv.getUint32(o + 4, true);
    if (id === 'fmt ') frameBytes = dv.getUint16(o + 8 + 12, true);
    if (id === 'data') return { start: o + 8, frameBytes };
    o += 8 + size + (size & 1);
  }
  throw new Error('no data chunk');
}

/** The recording decoded and the service's VAD over it (at the encoder's rate, after the volume is raised). */
function voiced(bytes: Uint8Array) {
  const decoded = decodeWav(bytes);
  const audio = normaliseVolume(resample(decoded.samples, decoded.sampleRate, MEL.sampleRate));
  return { decoded, vad: detectVoice(audio, MEL.sampleRate) };
}

/** Seconds of speech the service's VAD hears in a recording. */
export function speechSecondsOf(bytes: Uint8Array): number {
  const { vad } = voiced(bytes);
  return (vad.mask.reduce((a, m) => a + m, 0) * vad.window) / MEL.sampleRate;
}

/**
 * The WAV up to the point where the service's VAD (on the whole recording) has heard `seconds` of speech, or
 * null when the recording holds less. The bytes before the data chunk are kept; the sizes are rewritten.
 */
export function cutToSpeech(bytes: Uint8Array, seconds: number): Uint8Array | null {
  const { decoded, vad } = voiced(bytes);
  const needed = Math.ceil((seconds * MEL.sampleRate) / vad.window);
  let heard = 0,
    end = -1;
  for (let w = 0; w < vad.mask.length && end < 0; w++) if (vad.mask[w] && ++heard === needed) end = w + 1;
  if (end < 0) return null;
  const frames = Math.min(decoded.samples.length, Math.ceil((end * vad.window * decoded.sampleRate) / MEL.sampleRate));
  const { start, frameBytes } = dataChunk(bytes);
  const out = new Uint8Array(start + frames * frameBytes);
  out.set(bytes.subarray(0, out.length));
  const dv = new DataView(out.buffer);
  dv.setUint32(4, out.length - 8, true);
  dv.setUint32(start - 4, frames * frameBytes, true);
  return out;
}

/** Every accepted enrolment clip against every accepted probe cut from another clip. */
function crossPairs(enrolled: Sample[], probes: Probe[]): Pairs {
  const genuine: number[] = [],
    impostor: number[] = [];
  for (const e of enrolled)
    for (const p of probes) {
      if (p.source === e) continue;
      (p.source.identity === e.identity ? genuine : impostor).push(cosineInt8(e.q!, p.q!));
    }
  return { genuine, impostor };
}

/** Disjoint groups of three consecutive clips of a speaker, averaged, against the probes cut from other clips. */
function crossEnrol3(enrolled: Sample[], probes: Probe[]): Pairs {
  const bySpeaker = new Map<string, Sample[]>();
  for (const s of enrolled) bySpeaker.set(s.identity, [...(bySpeaker.get(s.identity) ?? []), s]);
  const genuine: number[] = [],
    impostor: number[] = [];
  for (const [id, list] of bySpeaker)
    for (let g = 0; g + 3 <= list.length; g += 3) {
      const group = list.slice(g, g + 3);
      const mean = new Float32Array(group[0]!.embedding!.length);
      for (const s of group) for (let i = 0; i < mean.length; i++) mean[i]! += s.embedding![i]!;
      const q = quantize(mean).q;
      for (const p of probes) {
        if (group.includes(p.source)) continue;
        (p.source.identity === id ? genuine : impostor).push(cosineInt8(q, p.q!));
      }
    }
  return { genuine, impostor };
}

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(q * (s.length - 1)))]! : Number.NaN;
};

/** Share of pairs whose calibrated score reaches the default threshold. */
const accepted = (cosines: number[]) =>
  cosines.filter((c) => VOICE_CALIBRATION.cosineToScore(c) >= DEFAULT_THRESHOLD).length / cosines.length;

function figures(enrolled: Sample[], tried: Probe[]): Omit<ProbeLengthFigures, 'length' | 'shorter'> {
  const ok = tried.filter((p) => p.q);
  const refusedBy: Record<string, number> = {};
  for (const p of tried) if (!p.q) refusedBy[p.refusedBy!] = (refusedBy[p.refusedBy!] ?? 0) + 1;
  const one = crossPairs(enrolled, ok),
    three = crossEnrol3(enrolled, ok);
  const speech = ok.flatMap((p) => (p.speechSeconds === undefined ? [] : [p.speechSeconds]));
  return {
    probes: tried.length,
    fta: tried.length ? (tried.length - ok.length) / tried.length : Number.NaN,
    refusedBy,
    speechMedian: quantile(speech, 0.5),
    speechP10: quantile(speech, 0.1),
    genuinePairs: one.genuine.length,
    impostorPairs: one.impostor.length,
    eer: eer(one.genuine, one.impostor),
    tarAtFar1e2: tarAtFar(one.genuine, one.impostor, 1e-2),
    tarAtFar1e3: tarAtFar(one.genuine, one.impostor, 1e-3),
    tarAtThreshold: accepted(one.genuine),
    farAtThreshold: accepted(one.impostor),
    enrol3: {
      eer: eer(three.genuine, three.impostor),
      tarAtFar1e2: tarAtFar(three.genuine, three.impostor, 1e-2),
      tarAtFar1e3: tarAtFar(three.genuine, three.impostor, 1e-3),
      tarAtThreshold: accepted(three.genuine),
      genuinePairs: three.genuine.length,
    },
  };
}

/**
 * The figures at each probe length (seconds of speech), over samples already extracted by `extractAll`
 * (voice), then at the normal length (`full`: the clips as recorded, the default gates, the same protocol).
 * Every length is measured on the same probes: the clips that hold at least the longest length of speech.
 */
export async function probeLengthFigures(
  samples: Sample[],
  lengths: number[],
  workers: number,
): Promise<ProbeLengthFigures[]> {
  const enrolled = samples.filter((s) => s.q && s.embedding);
  const cuts = samples.map((s) => {
    const bytes = new Uint8Array(readFileSync(s.file));
    return lengths.map((seconds) => cutToSpeech(bytes, seconds));
  });
  const common = samples.filter((_, i) => cuts[i]!.every((c) => c));
  const out: ProbeLengthFigures[] = [];
  const ex = await createNodePoolExtractor({ size: workers, maxQueue: 100000, jobTimeoutMs: 120_000 });
  // The speech minimum is what is measured here; every other gate applies as in the service.
  const gates = { ...DEFAULT_VOICE_GATES, minSpeechSeconds: 0 };
  try {
    for (const [k, seconds] of lengths.entries()) {
      const tried = await Promise.all(
        common.map(async (source): Promise<Probe> => {
          const r = await ex.analyseVoice(cuts[samples.indexOf(source)]![k]!);
          const refused = gateVoice(r, gates);
          if (refused) return { source, refusedBy: refused.failure };
          if (!r.embedding) return { source, refusedBy: 'NO_SPEECH' };
          return { source, q: quantize(r.embedding).q, speechSeconds: r.speechSeconds };
        }),
      );
      const shorter = cuts.filter((c) => !c[k]).length;
      out.push({ length: String(seconds), shorter, ...figures(enrolled, tried) });
    }
  } finally {
    await ex.close();
  }
  // The normal length: what the service does today (its refusals, the speech minimum included, are the FTA).
  const asRecorded = samples
    .filter((s) => common.includes(s))
    .map(
      (s): Probe =>
        s.q
          ? { source: s, q: s.q, speechSeconds: speechSecondsOf(new Uint8Array(readFileSync(s.file))) }
          : { source: s, refusedBy: s.error?.split(':')[0] ?? 'OTHER' },
    );
  out.push({ length: 'full', shorter: Number.NaN, ...figures(enrolled, asRecorded) });
  return out;
}

/** The figures as a table, one line per probe length. */
export function probeTable(rows: ProbeLengthFigures[]): string[] {
  const n = (v: number, d = 3) => (Number.isNaN(v) ? '-' : v.toFixed(d));
  return [
    `probe speech (s)  shorter  probes  FTA    speech p10/median  EER     TAR@1e-2 TAR@1e-3 TAR/FAR@${DEFAULT_THRESHOLD}       | enrol3 EER  TAR@1e-2 TAR@1e-3 TAR@${DEFAULT_THRESHOLD}`,
    ...rows.map(
      (f) =>
        `${f.length.padEnd(17)} ${n(f.shorter, 0).padEnd(8)} ${String(f.probes).padEnd(7)} ${n(f.fta)}  ${`${n(f.speechP10, 2)}/${n(f.speechMedian, 2)}`.padEnd(18)} ${n(f.eer, 4)}  ${n(f.tarAtFar1e2)}    ${n(f.tarAtFar1e3)}    ${`${n(f.tarAtThreshold)}/${f.farAtThreshold.toExponential(1)}`.padEnd(15)} | ${n(f.enrol3.eer, 4)}      ${n(f.enrol3.tarAtFar1e2)}    ${n(f.enrol3.tarAtFar1e3)}    ${n(f.enrol3.tarAtThreshold)}` +
        (Object.keys(f.refusedBy).length ? `  refused: ${JSON.stringify(f.refusedBy)}` : ''),
    ),
  ];
}
