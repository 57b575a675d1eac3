// Shared code of `npm run eval` and the calibration builder: dataset loading, extraction, pair scores and
// error rates (the SVG plot is eval-plot.ts).
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { createNodePoolExtractor } from '../../extraction/node-pool.js';
import { quantize, cosineInt8 } from '../../biometrics/template.js';
import { DEFAULT_VOICE_GATES, gateVoice } from '../../biometrics/voice/settings.js';

export type Modality = 'face' | 'voice';

/** One image or recording: its int8 template (as the matcher sees it) and, for voice, the float embedding. */
export interface Sample {
  identity: string;
  file: string;
  q?: Int8Array;
  embedding?: Float32Array;
  error?: string;
  /** Faces: the longer side of the decoded image in pixels (for the size bands), when it could be decoded. */
  longerSide?: number;
  /** Faces: the face's quality 0..100 (without the pose and eye checks, which the eval leaves out). */
  quality?: number;
}

/** Reads DIR/identity/image.{jpg,jpeg,png} (faces) or DIR/speaker/clip.wav (voice). */
export function loadDataset(dir: string, modality: Modality = 'face'): Sample[] {
  const ext = modality === 'voice' ? /\.wav$/i : /\.(jpe?g|png)$/i;
  const out: Sample[] = [];
  for (const id of readdirSync(dir).sort()) {
    const p = join(dir, id);
    if (!statSync(p).isDirectory()) continue;
    for (const f of readdirSync(p).sort()) if (ext.test(f)) out.push({ identity: id, file: join(p, f) });
  }
  return out;
}

/** Extracts one int8 template per image (the most confident face); failures are recorded, not thrown. */
export async function extractAll(
  samples: Sample[],
  workers: number,
  log = (s: string) => process.stderr.write(s),
  cache = false,
  modality: Modality = 'face',
  backend: 'wasm' | 'native' = 'wasm',
  framing = true,
): Promise<void> {
  // Optional cache (.cache/eval/) keyed by image bytes and template version, for repeated runs on one dataset.
  const manifest = JSON.parse(
    readFileSync(
      new URL(
        modality === 'voice' ? '../../../wasm/models/voice-manifest.json' : '../../../wasm/models/manifest.json',
        import.meta.url,
      ),
      'utf8',
    ),
  );
  // The native backend's templates are cached apart (same version, not the same bytes); wasm keys stay as they were.
  const key = (s: Sample) =>
    createHash('sha256')
      .update(manifest.templateVersion)
      .update(backend === 'native' ? 'native' : '')
      .update(framing ? '' : 'unframed')
      .update(readFileSync(s.file))
      .digest('hex');
  const cacheDir = new URL('../../../.cache/eval/', import.meta.url);
  if (cache) {
    mkdirSync(cacheDir, { recursive: true });
    for (const s of samples) {
      const f = new URL(key(s), cacheDir);
      if (existsSync(f)) {
        const v = JSON.parse(readFileSync(f, 'utf8'));
        // An entry written before the size bands has no image size: extracted again, not left out of the bands.
        if (modality === 'face' && v.longerSide === undefined && v.q) continue;
        if (v.q) s.q = Int8Array.from(v.q);
        else s.error = v.error;
        if (v.e) s.embedding = Float32Array.from(v.e);
        if (v.longerSide !== undefined) s.longerSide = v.longerSide;
        if (v.quality !== undefined) s.quality = v.quality;
      }
    }
  }
  const todo = samples.filter((s) => !s.q && !s.error);
  if (todo.length) await extractFresh(todo, workers, log, modality, backend, framing);
  if (cache) {
    for (const s of todo) {
      writeFileSync(
        new URL(key(s), cacheDir),
        JSON.stringify({
          q: s.q ? Array.from(s.q) : null,
          e: s.embedding ? Array.from(s.embedding) : undefined,
          error: s.error,
          longerSide: s.longerSide,
          quality: s.quality,
        }),
      );
    }
  }
}

async function extractFresh(
  samples: Sample[],
  workers: number,
  log: (s: string) => void,
  modality: Modality,
  backend: 'wasm' | 'native',
  framing: boolean,
): Promise<void> {
  const ex = await createNodePoolExtractor({ size: workers, maxQueue: 100000, jobTimeoutMs: 120_000, backend });
  let done = 0;
  try {
    await Promise.all(
      samples.map(async (s) => {
        try {
          if (modality === 'voice') {
            // The service's default gates decide what fails to enrol, as they would for a user.
            const r = await ex.analyseVoice(new Uint8Array(readFileSync(s.file)));
            const refused = gateVoice(r, DEFAULT_VOICE_GATES);
            if (refused) s.error = `${refused.failure}: ${refused.reason}`;
            else if (!r.embedding) s.error = 'no speech';
            else {
              s.embedding = r.embedding;
              s.q = quantize(r.embedding).q;
            }
          } else {
            const r = await ex.analyseFace(new Uint8Array(readFileSync(s.file)), { checks: false, framing });
            s.longerSide = Math.max(r.width, r.height);
            if (r.faces.length === 0) s.error = 'no face';
            else {
              s.q = quantize(r.faces[0].embedding).q;
              s.quality = r.faces[0].quality;
            }
          }
        } catch (e) {
          s.error = (e as Error).message;
        }
        if (++done % 20 === 0) log(`\r${done}/${samples.length}`);
      }),
    );
    log(`\r${done}/${samples.length}\n`);
  } finally {
    await ex.close();
  }
}

export interface Pairs {
  genuine: number[];
  impostor: number[];
}

/** Cosines of every pair of enrolled samples, split into genuine and impostor. */
export function pairCosines(samples: Sample[]): Pairs {
  const ok = samples.filter((s) => s.q);
  const genuine: number[] = [],
    impostor: number[] = [];
  for (let i = 0; i < ok.length; i++) {
    for (let j = i + 1; j < ok.length; j++) {
      const c = cosineInt8(ok[i].q!, ok[j].q!);
      (ok[i].identity === ok[j].identity ? genuine : impostor).push(c);
    }
  }
  return { genuine, impostor };
}

/**
 * Several clips per enrolment, as the service enrols voices: for each identity, disjoint groups of `k`
 * consecutive samples have their float embeddings averaged (and re-normalised, then int8-quantised like a
 * stored template); each group is compared with every sample of its identity outside the group (genuine)
 * and every sample of the other identities (impostor).
 */
export function enrolledPairCosines(samples: Sample[], k: number): Pairs & { enrolments: number } {
  const ok = samples.filter((s) => s.embedding);
  const byId = new Map<string, Sample[]>();
  for (const s of ok) byId.set(s.identity, [...(byId.get(s.identity) ?? []), s]);
  const genuine: number[] = [],
    impostor: number[] = [];
  let enrolments = 0;
  for (const [id, list] of byId) {
    for (let g = 0; g + k <= list.length && list.length - k > 0; g += k) {
      const group = list.slice(g, g + k);
      const mean = new Float32Array(group[0]!.embedding!.length);
      for (const s of group) for (let i = 0; i < mean.length; i++) mean[i]! += s.embedding![i]!;
      const q = quantize(mean).q;
      enrolments++;
      for (const s of ok) {
        if (group.includes(s)) continue;
        (s.identity === id ? genuine : impostor).push(cosineInt8(q, s.q!));
      }
    }
  }
  return { genuine, impostor, enrolments };
}

/** Rank-1 identification rate: each sample of an identity with >= 2 samples is a probe against all others. */
export function rank1(samples: Sample[]): number {
  const outcomes = rank1Outcomes(samples.filter((s) => s.q));
  return outcomes.length ? outcomes.filter((o) => o.hit).length / outcomes.length : NaN;
}

/**
 * Each probe's rank-1 outcome among enrolled samples (all with a template): a probe is every sample whose
 * identity has another; it hits when its nearest other sample is of its identity.
 */
export function rank1Outcomes<S extends Sample>(ok: readonly S[]): { probe: S; hit: boolean }[] {
  const count = new Map<string, number>();
  for (const s of ok) count.set(s.identity, (count.get(s.identity) ?? 0) + 1);
  const outcomes: { probe: S; hit: boolean }[] = [];
  for (const p of ok) {
    if ((count.get(p.identity) ?? 0) < 2) continue;
    let best = -Infinity,
      bestId = '';
    for (const g of ok) {
      if (g === p) continue;
      const c = cosineInt8(p.q!, g.q!);
      if (c > best) {
        best = c;
        bestId = g.identity;
      }
    }
    outcomes.push({ probe: p, hit: bestId === p.identity });
  }
  return outcomes;
}

/** Equal error rate over scores (higher = more similar). */
export function eer(gen: number[], imp: number[]): number {
  const thresholds = [...new Set([...gen, ...imp])].sort((a, b) => a - b);
  const g = [...gen].sort((a, b) => a - b),
    im = [...imp].sort((a, b) => a - b);
  let best = 1,
    bestGap = Infinity,
    gi = 0,
    ii = 0;
  for (const t of thresholds) {
    while (gi < g.length && g[gi] < t) gi++;
    while (ii < im.length && im[ii] < t) ii++;
    const frr = gi / g.length,
      far = (im.length - ii) / im.length;
    const gap = Math.abs(frr - far);
    if (gap < bestGap) {
      bestGap = gap;
      best = (frr + far) / 2;
    }
  }
  return best;
}

/**
 * TAR at a target FAR: the threshold is the smallest score whose empirical FAR <= target. With fewer than
 * 1/target impostor pairs the threshold is just above the highest impostor (the figure is then optimistic
 * about the FAR actually reached).
 */
export function tarAtFar(gen: number[], imp: number[], far: number): number {
  const im = [...imp].sort((a, b) => b - a);
  const allowed = Math.floor(far * im.length); // impostors allowed at or above the threshold
  const thr = allowed >= im.length ? -Infinity : im[allowed];
  return gen.filter((s) => s > thr).length / gen.length;
}
