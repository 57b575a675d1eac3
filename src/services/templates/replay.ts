import { cosineInt8, faceRecord, parseTemplate, type Template } from '../../biometrics/template.js';
import { BiometricError } from '../../biometrics/errors.js';
import { listFaceSampleTemplatesOfVersion, listFaceTemplatesOfVersion } from '../../db/repositories/templates.js';
import type { ServiceContext } from '../context.js';

/**
 * Cosine at or above which a remote verification probe counts as a copy of a template the service holds or
 * handed out, not a fresh capture. Measured on the labelled test photos (face template version
 * `face:faceplugin-fr@0.0.1/p2`, `npx tsx scripts/replay-bound.ts`): over 105 pairs of different photos of
 * one person the highest cosine is 0.963 (two frames of one video, two seconds apart), p99 0.950; one
 * photograph cropped and colour-processed twice gives 0.946. 0.98 leaves that margin and is far above any
 * genuine score the threshold needs (the default threshold 48 is cosine 0.454). See docs/template-format.md.
 */
export const REPLAY_COSINE_BOUND = 0.98;

/** Where a template the probe copies came from. */
type HeldTemplateSource = 'ENCRYPTED_TEMPLATE' | 'SUBJECT_TEMPLATE' | 'FACE_SAMPLE';

/** The held template closest to a probe. */
interface ClosestHeld {
  source: HeldTemplateSource;
  cosine: number;
}

/**
 * The face template closest to `probe` among every one the service may have handed out for a subject: the
 * enrolled template inside the encrypted template, the subject's FACE template rows (what QR codes carry) and
 * its face samples' templates (what its downloadable images give when extracted again). Only templates of the
 * probe's version and length compare; a stored template that no longer parses is skipped (it cannot have
 * been handed out as such).
 */
export async function closestHeldTemplate(
  ctx: ServiceContext,
  subjectRef: number,
  probe: Template,
  enrolled: Template,
): Promise<ClosestHeld | null> {
  const p = faceRecord(probe);
  if (!p) return null;
  const [rows, samples] = await Promise.all([
    listFaceTemplatesOfVersion(ctx.db, subjectRef, probe.templateVersion),
    listFaceSampleTemplatesOfVersion(ctx.db, subjectRef, probe.templateVersion),
  ]);
  const held: [HeldTemplateSource, Template][] = [['ENCRYPTED_TEMPLATE', enrolled]];
  for (const data of rows) pushParsed(held, 'SUBJECT_TEMPLATE', data);
  for (const template of samples) pushParsed(held, 'FACE_SAMPLE', template);
  let closest: ClosestHeld | null = null;
  for (const [source, t] of held) {
    const r = faceRecord(t);
    if (!r || t.templateVersion !== probe.templateVersion || r.q.length !== p.q.length) continue;
    const cosine = cosineInt8(p.q, r.q);
    if (!closest || cosine > closest.cosine) closest = { source, cosine };
  }
  return closest;
}

function pushParsed(into: [HeldTemplateSource, Template][], source: HeldTemplateSource, bytes: Uint8Array) {
  try {
    into.push([source, parseTemplate(new Uint8Array(bytes))]);
  } catch (e) {
    if (!(e instanceof BiometricError)) throw e;
  }
}
