import { encodeFaceTemplate } from '../../biometrics/template.js';
import { type FaceAnalysis, type ImageAnalysis } from '../../biometrics/face/analysis.js';
import { json } from '../../db/json.js';
import type { Queryable } from '../../db/repositories/queryable.js';
import {
  listStoredFaceSamples,
  loadOriginalImages,
  lockSubjectForUpdate,
  replaceSubjectTemplate,
  setSubjectTemplateVersion,
  updateFaceSample,
  type StoredFaceSample,
} from '../../db/repositories/reextract.js';
import { DomainError, notFound } from '../errors.js';
import { analyseImages, faceGatesOf } from '../biometrics/face-samples.js';
import { presentOperation, recordOperation } from '../operation-log/record.js';
import { getSubject } from '../subjects/queries.js';
import { pickStoredFace } from './pick-face.js';
import { refuse, type Caller } from './refuse.js';
import { redoStoredVoices, writeRedoneVoices } from './stored-voices.js';
import { subjectRefBySubjectId } from '../../db/repositories/subjects/lookup.js';
import type { ExtractorProvider } from '../biometrics/extractor-provider.js';
import type { GalleryService } from '../gallery/gallery-service.js';
import type { ServiceContext } from '../context.js';
import type { SettingsService } from '../settings/settings.js';

type Box = { x: number; y: number; width: number; height: number };

/** A sample re-extracted from its original image. */
interface Redone {
  sampleId: number;
  face: FaceAnalysis;
  template: Uint8Array;
}

/**
 * `reextractSubject` for a stored subject: recompute every face template from the sample's stored ORIGINAL
 * image with the current extractor, so that a subject enrolled under older models can be matched again
 * (matching compares only templates of the same version).
 *
 * Decisions:
 * - All or nothing. Images are analysed in the pool first, outside any transaction; then one transaction
 *   rewrites the samples (template, version, box, landmarks, pose, quality, liveness), the subject's compact
 *   template (its best-quality face) and `subjects.template_version`, and records the REEXTRACT operation.
 *   An ENROLLED subject's gallery entry is replaced after the commit.
 * - The quality, liveness and ICAO gates are not applied again: the sample was admitted at enrolment, and
 *   refusing it now because a new model measures quality differently would leave the subject unmatchable.
 *   A stored image in which the current detector finds no face is refused (NO_FACE_DETECTED), since no
 *   template can be made from it.
 * - A sample enrolled from an exported template has no original image. It is kept as it is when its
 *   template is already of the current version; otherwise the whole re-extraction is refused with a 422
 *   naming those samples (`samplesWithoutImage`), because keeping a template of another version would leave
 *   the subject half-matchable; such a subject must be enrolled again from images.
 * - Voice samples: every stored WAV original is run again through the current voice pipeline and the
 *   subject's VOICE template becomes the new embeddings averaged (see {@link redoStoredVoices}); in the same
 *   transaction as the faces.
 * - An ENROLLED subject is announced to the other nodes inside the transaction (the NOTIFY goes with the
 *   commit, so a crash before this node's gallery update cannot leave peers on the old templates).
 * - Token images are left as they are: they show the face, whatever model later reads it.
 * - Every attempt is a REEXTRACT operation; refusals are recorded with the status that says why.
 */
export async function reextractStoredSubject(
  services: { ctx: ServiceContext; settings: SettingsService; extractors: ExtractorProvider; gallery: GalleryService },
  subjectId: string,
  caller: Caller,
) {
  const { ctx } = services;
  const started = performance.now();
  const uuid = crypto.randomUUID();
  const subject = await subjectRefBySubjectId(ctx.db, subjectId);
  if (!subject) throw notFound(`Subject '${subjectId}'`);
  const extractor = await services.extractors.get();
  const current = extractor.templateVersion;
  const fail = (status: 'FAILED' | 'NO_FACE_DETECTED', reason: string, extras: Record<string, unknown> = {}) =>
    refuse(services, { uuid, status, reason, subjectId, started, caller, extras });

  const samples = await listStoredFaceSamples(ctx.db, subject.id);
  const voices = await redoStoredVoices(services, subject.id);
  if (voices.failure) return fail('FAILED', voices.failure.reason, { voiceSampleId: voices.failure.sampleId });
  if (samples.length === 0 && voices.redone.length === 0)
    return fail('FAILED', `subject '${subjectId}' has no face or voice sample to re-extract`);

  const originals = await originalImages(services, samples);
  const withoutImage = samples.filter((s) => !originals.has(s.id));
  const stale = withoutImage.filter((s) => s.template_version !== current);
  if (stale.length) {
    return fail(
      'FAILED',
      `face samples ${stale.map((s) => s.id).join(', ')} of subject '${subjectId}' were enrolled from a template of version ` +
        `${[...new Set(stale.map((s) => s.template_version))].join(', ')} and have no original image to re-extract to ${current}; ` +
        'enrol the subject again from face images',
      { samplesWithoutImage: stale.map((s) => s.id), templateVersion: current },
    );
  }

  const withImage = samples.filter((s) => originals.has(s.id));
  // Liveness as enrolment measures it: only under liveness.mode PASSIVE. Otherwise a stored score stays as it
  // was taken (it describes the capture, not the template version).
  const measureLiveness = (await faceGatesOf(services, {})).requireLiveness;
  let analyses: ImageAnalysis[];
  try {
    analyses = await analyseImages(
      services,
      withImage.map((s) => originals.get(s.id)!),
      (i) => `faceSamples.${withImage[i]!.id}.image`,
      { attributes: false, liveness: measureLiveness },
    );
  } catch (error) {
    // A stored image the engine cannot read is not the caller's bad input: report it as a refused operation.
    if (error instanceof DomainError && error.code === 'validation')
      return fail('FAILED', `a stored original image cannot be read: ${error.detail}`);
    throw error;
  }
  const redone: Redone[] = [];
  for (const [i, sample] of withImage.entries()) {
    const face = pickStoredFace(analyses[i]!.faces, sample.rectangle);
    if (!face) {
      return fail(
        'NO_FACE_DETECTED',
        `the current extractor finds no face in the original image of face sample ${sample.id}`,
        { sampleId: sample.id },
      );
    }
    redone.push({ sampleId: sample.id, face, template: encodeFaceTemplate(current, face) });
  }

  const previousVersions = [...new Set(samples.map((s) => s.template_version))];
  const stored = await services.gallery.transaction(async (trx, changes) => {
    const now = ctx.now();
    // The subject may have been deleted while its images were analysed; the lock keeps it until the commit.
    const row = await lockSubjectForUpdate(trx, subject.id);
    if (!row) throw notFound(`Subject '${subjectId}'`);
    for (const r of redone) {
      const f = r.face;
      await updateFaceSample(trx, subject.id, r.sampleId, {
        template: r.template,
        template_version: current,
        rectangle: json(roundBox(f.rectangle)),
        landmarks: json(f.landmarks),
        yaw: finite(f.yaw),
        pitch: finite(f.pitch),
        roll: finite(f.roll),
        quality: finite(f.quality),
        ...(measureLiveness ? { liveness_score: finite(f.livenessScore) } : {}),
      });
    }
    if (redone.length) await replaceCompactTemplate(trx, subject.id, redone, current, now);
    await writeRedoneVoices(trx, subject.id, voices, now);
    await setSubjectTemplateVersion(trx, subject.id, current, now);
    const operation = await recordOperation(trx, {
      uuid,
      type: 'REEXTRACT',
      status: 'SUCCESS',
      subjectId,
      modalities: [...(samples.length ? ['FACE' as const] : []), ...(voices.averaged ? ['VOICE' as const] : [])],
      durationMs: performance.now() - started,
      principal: caller.principal,
      surface: caller.surface,
      at: now,
      details: {
        templateVersion: current,
        previousVersions,
        reextracted: redone.map((r) => r.sampleId),
        kept: withoutImage.map((s) => s.id),
        ...(voices.averaged
          ? { voiceTemplateVersion: voices.version, reextractedVoices: voices.redone.map((r) => r.sampleId) }
          : {}),
      },
    });
    if (row.status === 'ENROLLED') changes.put(subject.id);
    // Read in the transaction: the answer is what this request committed, whatever a concurrent delete does next.
    return { status: row.status, operation, presented: await getSubject({ ...ctx, db: trx }, { id: subject.id }) };
  });

  return { operation: presentOperation(stored.operation), subject: stored.presented, templateVersion: current };
}

/** The ORIGINAL image bytes of each sample that has one, by sample id. */
async function originalImages(
  services: { ctx: ServiceContext },
  samples: StoredFaceSample[],
): Promise<Map<number, Uint8Array>> {
  const byId = await loadOriginalImages(
    services.ctx.db,
    samples.map((s) => s.image_id).filter((id): id is number => id !== null),
  );
  const out = new Map<number, Uint8Array>();
  for (const s of samples) {
    const bytes = s.image_id !== null ? byId.get(s.image_id) : undefined;
    if (bytes) out.set(s.id, bytes);
  }
  return out;
}

/** The subject's compact FACE template (QR codes, exports) becomes that of its best-quality re-extracted face. */
async function replaceCompactTemplate(
  trx: Queryable,
  subjectRef: number,
  redone: Redone[],
  version: string,
  now: Date,
) {
  const best = redone.reduce((a, b) => (b.face.quality > a.face.quality ? b : a));
  await replaceSubjectTemplate(
    trx,
    subjectRef,
    'FACE',
    { template_version: version, data: best.template, quality: finite(best.face.quality) },
    now,
  );
}

function roundBox(r: Box): Box {
  return { x: Math.round(r.x), y: Math.round(r.y), width: Math.round(r.width), height: Math.round(r.height) };
}

function finite(value: number): number | null {
  return Number.isFinite(value) ? value : null;
}
