import { cosineInt8, parseTemplate } from '../../biometrics/template.js';
import { fuseScores, type ModalityScores } from '../../biometrics/fusion.js';
import { calibrationOf } from '../../biometrics/calibration.js';
import { probeScore, subjectScore } from '../../biometrics/subject-score.js';
import {
  listFaceSampleTemplates,
  listVoiceTemplates,
  type VersionedTemplate,
} from '../../db/repositories/templates.js';
import type { ServiceContext } from '../context.js';
import type { GalleryService } from '../gallery/gallery-service.js';
import type { StoredCandidate } from '../operation-log/record.js';

/** What a probe brings: face templates (one per image) and at most one voice template (its recordings averaged). */
export interface MultimodalProbe {
  faces: Uint8Array[];
  voice: Uint8Array | null;
}

const round = (score: number) => Math.round(score * 100) / 100;

/** The modalities a probe carries, as operations record them. */
export function probeModalities(probe: MultimodalProbe): ('FACE' | 'VOICE')[] {
  return [...(probe.faces.length ? ['FACE' as const] : []), ...(probe.voice ? ['VOICE' as const] : [])];
}

function rounded(scores: ModalityScores): ModalityScores {
  return {
    ...(scores.FACE !== undefined ? { FACE: round(scores.FACE) } : {}),
    ...(scores.VOICE !== undefined ? { VOICE: round(scores.VOICE) } : {}),
  };
}

/**
 * 1:N over the ENROLLED gallery with score-level fusion (src/biometrics/fusion.ts). Each modality of the
 * probe is searched exhaustively in its own partition for its best `wide` subjects with no threshold; a
 * subject found by one modality is then scored 1:1 in the other, so that every candidate has every score the
 * two sides share (a modality missing on either side is absent). The fused score decides: at or above
 * `threshold`, best `topK`. A subject outside the best `wide` (4 x topK, at least 50) of every modality is
 * not considered: with scores on the false-acceptance scale, such a subject cannot plausibly fuse above one
 * that is.
 */
export async function searchGallery(
  services: { gallery: GalleryService },
  probe: MultimodalProbe,
  options: { topK: number; threshold: number; excludeRefs?: number[] },
): Promise<StoredCandidate[]> {
  const wide = Math.max(50, options.topK * 4);
  // Once per search, not per lookup: on Workers this reads the change log so that other nodes' enrolments
  // and deletions committed before now are seen.
  await services.gallery.upToDate();
  const found = new Map<number, { subjectId: string; scores: ModalityScores }>();
  const note = (ref: number, subjectId: string, modality: 'FACE' | 'VOICE', score: number) => {
    const entry = found.get(ref) ?? { subjectId, scores: {} };
    entry.scores[modality] = Math.max(entry.scores[modality] ?? 0, score);
    found.set(ref, entry);
  };
  for (const template of probe.faces) {
    for (const m of await services.gallery.identify(template, {
      topK: wide,
      threshold: 0,
      excludeRefs: options.excludeRefs,
    }))
      note(m.subjectRef, m.subjectId, 'FACE', m.score);
  }
  if (probe.voice) {
    for (const m of await services.gallery.identify(probe.voice, {
      topK: wide,
      threshold: 0,
      excludeRefs: options.excludeRefs,
    }))
      note(m.subjectRef, m.subjectId, 'VOICE', m.score);
  }
  for (const [ref, entry] of found) {
    if (probe.faces.length && entry.scores.FACE === undefined) {
      for (const template of probe.faces) {
        const m = await services.gallery.verify(template, ref);
        if (m) entry.scores.FACE = Math.max(entry.scores.FACE ?? 0, m.score);
      }
    }
    if (probe.voice && entry.scores.VOICE === undefined) {
      const m = await services.gallery.verify(probe.voice, ref);
      if (m) entry.scores.VOICE = m.score;
    }
  }
  // A subject's face score is the best over the probe's photos: counted as that many more comparisons.
  for (const e of found.values())
    if (e.scores.FACE !== undefined) e.scores.FACE = probeScore(e.scores.FACE, probe.faces.length);
  return [...found.values()]
    .map((e) => ({ subjectId: e.subjectId, scores: rounded(e.scores), score: fuseScores(e.scores) ?? 0 }))
    .filter((c) => c.score >= options.threshold)
    .sort((a, b) => b.score - a.score)
    .slice(0, options.topK)
    .map((c, i) => ({ ...c, score: round(c.score), rank: i + 1 }));
}

/**
 * 1:1 against one subject, whatever its status, from its stored templates: every face sample of the probe's
 * face template version (best score over probes and samples) and the subject's voice template of the probe's
 * voice template version. Null fused score when the two sides share no modality.
 */
export async function verifySubject(
  services: { ctx: ServiceContext },
  subjectRef: number,
  probe: MultimodalProbe,
): Promise<{ score: number | null; scores: ModalityScores }> {
  const scores: ModalityScores = {};
  if (probe.faces.length) {
    scores.FACE = bestScore(probe.faces, await listFaceSampleTemplates(services.ctx.db, subjectRef), 'face');
  }
  if (probe.voice) {
    scores.VOICE = bestScore([probe.voice], await listVoiceTemplates(services.ctx.db, subjectRef), 'voice');
  }
  if (scores.FACE === undefined) delete scores.FACE;
  if (scores.VOICE === undefined) delete scores.VOICE;
  const fused = fuseScores(scores);
  return { score: fused === null ? null : round(fused), scores: rounded(scores) };
}

/**
 * The subject's score for the best probe: per probe, its samples of the probe's version scored as the gallery
 * scores a subject (best sample, counted: biometrics/subject-score.ts), so VERIFY from the database agrees with
 * IDENTIFY and deduplication from the matcher.
 */
function bestScore(probes: Uint8Array[], stored: VersionedTemplate[], modality: 'face' | 'voice'): number | undefined {
  let best: number | undefined,
    compared = 0;
  for (const p of probes) {
    const pt = parseTemplate(p);
    const a = pt.records.find((r) => r.modality === modality);
    if (!a) continue;
    let cosine = -Infinity,
      samples = 0;
    for (const s of stored) {
      if (s.version !== pt.templateVersion) continue;
      const b = parseTemplate(s.template).records.find((r) => r.modality === modality);
      if (!b) continue;
      samples++;
      cosine = Math.max(cosine, cosineInt8(a.q, b.q));
    }
    if (samples === 0) continue;
    compared++;
    const score = subjectScore(calibrationOf(modality).cosineToScore(cosine), samples);
    best = best === undefined ? score : Math.max(best, score);
  }
  // the best of several probe photos, counted as that many more comparisons (as searchGallery counts them)
  return best === undefined ? best : probeScore(best, compared);
}
