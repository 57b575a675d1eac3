// `npm run eval`'s figures per image-size band and its worst pairs: where the engine fails is mostly a matter of
// how large the photo is (a 72-px thumbnail, a 150-px face crop, a full-size portrait), so the overall figures
// are split by the longer side of each image, and the pairs that decide the error rates are listed by name.
import { cosineInt8 } from '../../biometrics/template.js';
import { eer, rank1Outcomes, tarAtFar, type Sample } from './eval-lib.js';

/** The size bands, by the longer side of the decoded image in pixels: [name, upper bound (exclusive)]. */
const SIZE_BANDS: readonly (readonly [string, number])[] = [
  ['longer side < 150 px', 150],
  ['longer side < 300 px', 300],
  ['longer side >= 300 px', Infinity],
];

/** A sample with the size of its decoded image (unknown when it could not be decoded). */
export interface SizedSample extends Sample {
  longerSide?: number;
}

/** Index in SIZE_BANDS of an image whose longer side is `longerSide` pixels. */
export function bandOf(longerSide: number): number {
  return SIZE_BANDS.findIndex(([, upper]) => longerSide < upper);
}

/** Figures of one band. */
export interface BandFigures {
  band: string;
  images: number;
  failedToEnrol: number;
  genuinePairs: number;
  impostorPairs: number;
  eer: number | null;
  tarAtFar1e2: number | null;
  tarAtFar1e3: number | null;
  tarAtFar1e4: number | null;
  /** Rank-1 of the band's probes against the whole gallery (every other enrolled image, of any band). */
  rank1: number | null;
  rank1Probes: number;
}

/** One pair of images with its cosine. */
export interface NamedPair {
  a: string;
  b: string;
  cosine: number;
}

/**
 * Figures per size band. A pair belongs to the band of its smaller image (the smaller longer side): the smaller
 * photo is what limits the pair, and so every pair is counted once. A probe for rank-1 belongs to its own band
 * and is searched against every other enrolled image. Images of unknown size (undecodable) are in no band.
 */
export function bandFigures(samples: readonly SizedSample[]): BandFigures[] {
  const ok = samples.filter((s) => s.q && s.longerSide !== undefined);
  const genuine = SIZE_BANDS.map(() => [] as number[]);
  const impostor = SIZE_BANDS.map(() => [] as number[]);
  for (let i = 0; i < ok.length; i++) {
    for (let j = i + 1; j < ok.length; j++) {
      const band = bandOf(Math.min(ok[i]!.longerSide!, ok[j]!.longerSide!));
      const c = cosineInt8(ok[i]!.q!, ok[j]!.q!);
      (ok[i]!.identity === ok[j]!.identity ? genuine : impostor)[band]!.push(c);
    }
  }
  const rank = rank1ByBand(ok);
  const orNull = (v: number, ok: boolean) => (ok ? v : null);
  return SIZE_BANDS.map(([band], b) => {
    const inBand = samples.filter((s) => s.longerSide !== undefined && bandOf(s.longerSide) === b);
    const g = genuine[b]!,
      im = impostor[b]!;
    const both = g.length > 0 && im.length > 0;
    return {
      band,
      images: inBand.length,
      failedToEnrol: inBand.filter((s) => !s.q).length,
      genuinePairs: g.length,
      impostorPairs: im.length,
      eer: orNull(eer(g, im), both),
      tarAtFar1e2: orNull(tarAtFar(g, im, 1e-2), both),
      tarAtFar1e3: orNull(tarAtFar(g, im, 1e-3), both),
      tarAtFar1e4: orNull(tarAtFar(g, im, 1e-4), both),
      rank1: orNull(rank[b]!.hits / rank[b]!.probes, rank[b]!.probes > 0),
      rank1Probes: rank[b]!.probes,
    };
  });
}

/** Rank-1 hits and probes per band: a probe is every enrolled image whose identity has another enrolled image. */
function rank1ByBand(ok: readonly SizedSample[]): { hits: number; probes: number }[] {
  const out = SIZE_BANDS.map(() => ({ hits: 0, probes: 0 }));
  for (const { probe, hit } of rank1Outcomes(ok)) {
    const r = out[bandOf(probe.longerSide!)]!;
    r.probes++;
    if (hit) r.hits++;
  }
  return out;
}

/**
 * The `n` genuine pairs with the lowest cosines and the `n` impostor pairs with the highest: the pairs that
 * set the EER and the TAR at low FAR, to look at by name.
 */
export function worstPairs(samples: readonly Sample[], n: number): { genuine: NamedPair[]; impostor: NamedPair[] } {
  const ok = samples.filter((s) => s.q);
  const genuine: NamedPair[] = [],
    impostor: NamedPair[] = [];
  for (let i = 0; i < ok.length; i++) {
    for (let j = i + 1; j < ok.length; j++) {
      const pair = { a: ok[i]!.file, b: ok[j]!.file, cosine: cosineInt8(ok[i]!.q!, ok[j]!.q!) };
      (ok[i]!.identity === ok[j]!.identity ? genuine : impostor).push(pair);
    }
  }
  genuine.sort((x, y) => x.cosine - y.cosine);
  impostor.sort((x, y) => y.cosine - x.cosine);
  return { genuine: genuine.slice(0, n), impostor: impostor.slice(0, n) };
}
