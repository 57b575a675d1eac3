// Probes of several photos (scripts/eval-calibrate.ts --probe-photos, docs/calibration.md): a request with j
// photos against a subject of k samples is scored by the best of its j*k cosines. Groups of j photos of one
// identity are set against groups of k samples of every identity; the best cosine is scored counting k
// comparisons (each photo's subject score, the best taken) and counting j*k (subject-score.ts `probeScore`),
// and each is set beside the FAR it claims, with the share of genuine groups it accepts.
import type { Calibration } from '../src/biometrics/calibration.js';
import { probeScore, subjectScore } from '../src/biometrics/subject-score.js';
import { checkFar, type FarCheck } from '../src/runtime/commands/calibration-table.js';
import type { Sample } from '../src/runtime/commands/eval-lib.js';
import { enrolmentGroups } from '../src/runtime/commands/eval-samples.js';

export interface ProbePhotosFigures {
  photos: number;
  samples: number;
  impostor: number;
  genuine: number;
  /** Counted as k comparisons (the best photo's subject score). */
  countedK: { far: FarCheck[]; tarAt48: number };
  /** Counted as j*k comparisons. */
  countedJK: { far: FarCheck[]; tarAt48: number };
}

/** Groups per identity on each side: 8 x 8 gives about two million impostor comparisons on the pooled set. */
const GROUPS = 8;

export function probePhotosFigures(
  ok: Sample[],
  m: Float32Array,
  j: number,
  k: number,
  calibration: Calibration,
): ProbePhotosFigures {
  const n = ok.length;
  const probes = enrolmentGroups(ok, j, GROUPS, 101);
  const subjects = enrolmentGroups(ok, k, GROUPS, 202);
  const scored = { k: { gen: [] as number[], imp: [] as number[] }, jk: { gen: [] as number[], imp: [] as number[] } };
  for (const [pid, pg] of probes)
    for (const [sid, sg] of subjects) {
      // a genuine probe shares no photo with the subject's samples
      if (pid === sid && pg.some((p) => sg.includes(p))) continue;
      let best = -1;
      for (const p of pg) for (const s of sg) best = Math.max(best, m[p * n + s]!);
      const perPhoto = subjectScore(calibration.cosineToScore(best), k);
      const side = pid === sid ? 'gen' : 'imp';
      scored.k[side].push(perPhoto);
      scored.jk[side].push(probeScore(perPhoto, j));
    }
  const figures = (s: { gen: number[]; imp: number[] }) => ({
    far: checkFar(Float64Array.from(s.imp), [36, 48, 60]),
    tarAt48: s.gen.filter((x) => x >= 48).length / s.gen.length,
  });
  return {
    photos: j,
    samples: k,
    impostor: scored.k.imp.length,
    genuine: scored.k.gen.length,
    countedK: figures(scored.k),
    countedJK: figures(scored.jk),
  };
}
