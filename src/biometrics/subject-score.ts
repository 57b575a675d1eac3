// How a subject enrolled with several samples is scored against a probe: the one rule of VERIFY, IDENTIFY and
// deduplication, on one gallery, across matcher threads and across the shards of a matcher cluster.
//
// The subject's score is its best sample's cosine, scored as the chance that an impostor reaches it with ANY
// of the subject's k samples: FAR_k = 1 - (1 - FAR_1)^k, score = -12*log10(FAR_k). Why the best sample and not a
// mean: on the development set (docs/calibration.md) the best sample had the lowest EER for k = 2, 3 and 4 and
// beat the best single sample everywhere; the means were no better at a measured FAR. Why the correction: the
// best of k impostor comparisons reaches a cosine about k times as often as one comparison does, so the raw
// best-sample score claimed k times too low a FAR (measured: 2.9e-4 at score 48 with four samples, for a
// claimed 1e-4). With the correction one subject is one comparison on the -12*log10(FAR) scale, whatever its
// number of samples. A subject with one sample keeps exactly the calibrated score of its cosine.
import { MAX_SCORE, farToScore, scoreToFar, type Calibration } from './calibration.js';

/** The score of a subject whose best of `samples` samples scores `bestScore` on its own. */
export function subjectScore(bestScore: number, samples: number): number {
  if (samples <= 1 || bestScore <= 0) return bestScore;
  // 1 - (1 - p)^k without cancellation for the small p that matter
  const far = -Math.expm1(samples * Math.log1p(-scoreToFar(bestScore)));
  return far > 0 ? farToScore(far) : MAX_SCORE;
}

/**
 * The score of a subject against a probe of `photos` photos, from the best of the photos' subject scores
 * (`subjectScore` of each photo's best sample): the best of j photos against k samples is the best of j*k
 * comparisons, and counting the k of each photo's score j times over is exactly counting j*k
 * (1 - (1 - FAR_k)^j = 1 - (1 - FAR_1)^(j*k)). Applied where a request's photos meet, after the per-photo
 * searches (each exact on any number of threads and shards), so every path counts them alike.
 */
export function probeScore(bestPhotoScore: number, photos: number): number {
  return subjectScore(bestPhotoScore, photos);
}

/** The one-sample score a subject with `samples` samples needs for its subject score to reach `threshold`. */
export function sampleScoreFor(threshold: number, samples: number): number {
  if (samples <= 1 || threshold <= 0) return threshold;
  const far = scoreToFar(threshold);
  // FAR_1 = 1 - (1 - FAR_k)^(1/k)
  return farToScore(-Math.expm1(Math.log1p(-far) / samples));
}

/**
 * A calibration's subject scores with the smallest cosines that can reach a threshold, per sample count (a
 * scan asks for them once per row that passes its first cut, so they are kept).
 */
export class SubjectScorer {
  private readonly minCosines = new Map<number, number>();
  constructor(
    readonly calibration: Calibration,
    readonly threshold: number,
  ) {}

  /** Score of a subject of `samples` samples whose best sample has cosine `cosine`. */
  score(cosine: number, samples: number): number {
    return subjectScore(this.calibration.cosineToScore(cosine), samples);
  }

  /** Smallest cosine of the best sample of a subject of `samples` samples that reaches the threshold. */
  minCosine(samples: number): number {
    if (!(this.threshold > 0)) return -Infinity;
    let c = this.minCosines.get(samples);
    if (c === undefined) {
      c = this.calibration.scoreToCosine(sampleScoreFor(this.threshold, samples));
      this.minCosines.set(samples, c);
    }
    return c;
  }
}
