import type { z } from 'zod';
import { FACE_CALIBRATION, cosineInt8, faceRecord, parseTemplate } from '../../biometrics/index.js';
import type { CheckImageRequest, CreateOperationRequest } from '../../schemas/operations.js';
import type { Principal } from '../../auth/principal.js';
import type { Surface } from '../../operations/types.js';
import type { Services } from '../index.js';
import { DomainError, notFound } from '../errors.js';
import { analyseFaces, analyseImages, base64Bytes, faceGatesOf, gateImage, type AcceptedFace } from '../biometrics/face-samples.js';
import { presentChecks } from '../biometrics/present-checks.js';
import { presentOperation, recordOperation, type OperationRecord, type StoredCandidate } from './record.js';
import { countUsage, precheckLicence } from '../licensing/usage.js';
import type { LicensedOperationType } from '../../licensing/document.js';

type Request = z.output<typeof CreateOperationRequest>;
interface Caller {
  principal: Principal;
  surface: Surface;
}

const round = (score: number) => Math.round(score * 100) / 100;

/**
 * Perform and record a VERIFY (1:1 against a subject's face samples, best score), IDENTIFY (1:N over the
 * ENROLLED gallery, top-k above the threshold) or CHECK (quality, liveness and ICAO checks only; no
 * template kept). A sample the gates refuse is a recorded operation whose status says why, not an error.
 * VERIFY and IDENTIFY keep their probe images under the operation's UUID for review and audit.
 */
export async function createOperation(services: Services, request: Request, caller: Caller) {
  if (request.voices?.length) {
    throw new DomainError('unprocessable', 'body.voices: voice operations need the voice engine, which is not built yet (issue 6)', {
      errors: [{ field: 'body.voices', message: 'voice operations are not available yet' }],
    });
  }
  // An expired or used-up licence refuses before any extraction work is spent.
  await precheckLicence(services, request.type);
  const started = performance.now();
  const uuid = crypto.randomUUID();
  const base: Omit<OperationRecord, 'status'> = {
    uuid,
    type: request.type,
    subjectId: request.subjectId ?? null,
    modalities: ['FACE'],
    durationMs: 0,
    principal: caller.principal,
    surface: caller.surface,
    at: services.ctx.now(),
  };
  const images = (request.faces ?? []).map((f) => f.image);
  if (request.type === 'CHECK') return check(services, base, images, request, started);

  // The subject of a VERIFY must exist before any extraction work is spent on it.
  const subject = request.type === 'VERIFY'
    ? await services.ctx.db.selectFrom('subjects').select(['id', 'subject_id']).where('subject_id', '=', request.subjectId!).executeTakeFirst()
    : undefined;
  if (request.type === 'VERIFY' && !subject) throw notFound(`Subject '${request.subjectId}'`);

  const faces = await analyseFaces(services, images, {
    field: 'body.faces',
    checks: false,
    checkIcao: request.options?.checkIcao,
    detectLiveness: request.options?.detectLiveness,
  });
  if (faces.failure) {
    return finish(services, { ...base, status: faces.failure.status, checks: presentChecks(faces.failure.analysis, false), details: { reason: faces.failure.reason } }, started, []);
  }
  const threshold = request.options?.threshold ?? (await services.settings.get('matching.threshold'));
  if (request.type === 'VERIFY') {
    const score = await verifyScore(services, subject!.id, faces.accepted);
    return finish(services, {
      ...base,
      status: score !== null && score >= threshold ? 'SUCCESS' : 'MATCH_NOT_FOUND',
      score: score === null ? null : round(score),
      threshold,
      details: score === null ? { reason: 'the subject has no face template of the current template version' } : null,
    }, started, faces.accepted);
  }
  const topK = request.options?.maxCandidates ?? (await services.settings.get('identify.maxCandidates'));
  const candidates = await identify(services, faces.accepted, topK, threshold);
  return finish(services, {
    ...base,
    status: candidates.length ? 'SUCCESS' : 'MATCH_NOT_FOUND',
    score: candidates[0]?.score ?? null,
    threshold,
    candidates,
  }, started, faces.accepted);
}

/** Best score of any probe against any face sample of the subject (same template version only). */
async function verifyScore(services: Services, subjectRef: number, probes: AcceptedFace[]): Promise<number | null> {
  const rows = await services.ctx.db
    .selectFrom('face_samples')
    .select(['template', 'template_version'])
    .where('subject_ref', '=', subjectRef)
    .where('template', 'is not', null)
    .execute();
  let best: number | null = null;
  for (const probe of probes) {
    const probeTemplate = parseTemplate(probe.template);
    const probeRecord = faceRecord(probeTemplate)!;
    for (const row of rows) {
      if (row.template_version !== probeTemplate.templateVersion) continue;
      const record = faceRecord(parseTemplate(row.template!));
      if (!record) continue;
      const score = FACE_CALIBRATION.cosineToScore(cosineInt8(probeRecord.q, record.q));
      best = best === null ? score : Math.max(best, score);
    }
  }
  return best;
}

/** Every probe searched in the gallery; a subject's score is its best over the probes. */
async function identify(services: Services, probes: AcceptedFace[], topK: number, threshold: number): Promise<StoredCandidate[]> {
  const best = new Map<string, number>();
  for (const probe of probes) {
    for (const match of await services.gallery.identify(probe.template, { topK, threshold })) {
      best.set(match.subjectId, Math.max(best.get(match.subjectId) ?? 0, match.score));
    }
  }
  return [...best.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, topK)
    .map(([subjectId, score], i) => ({ subjectId, score: round(score), scores: { FACE: round(score) }, rank: i + 1 }));
}

async function check(services: Services, base: Omit<OperationRecord, 'status'>, images: string[], request: Request, started: number) {
  const gates = await faceGatesOf(services, { checkIcao: request.options?.checkIcao, detectLiveness: request.options?.detectLiveness });
  const analyses = await analyseImages(services, images.map(base64Bytes), (i) => `body.faces.${i}.image`);
  const gated = analyses.map((a) => gateImage(a, gates));
  const firstFailure = gated.findIndex((g) => 'status' in g);
  const failure = firstFailure >= 0 ? (gated[firstFailure] as { status: OperationRecord['status']; reason: string }) : null;
  return finish(services, {
    ...base,
    status: failure ? failure.status : 'SUCCESS',
    // The checks of the first refused image, or of the first image when all passed.
    checks: presentChecks(analyses[Math.max(0, firstFailure)]!, !failure),
    details: failure ? { reason: `body.faces.${firstFailure}: ${failure.reason}` } : null,
  }, started, []);
}

/** Store the operation (and its probe images) and count it against the licence in one transaction, and answer it. */
async function finish(services: Services, record: OperationRecord, started: number, probes: AcceptedFace[]) {
  const { ctx } = services;
  const row = await ctx.db.transaction().execute(async (trx) => {
    // Counted (and refused over quota) with the operation it counts: a refusal rolls both back.
    await countUsage(trx, services, record.type as LicensedOperationType);
    for (const probe of probes) {
      await trx
        .insertInto('images')
        .values({
          operation_uuid: record.uuid, subject_ref: null, kind: 'ORIGINAL', format: probe.analysis.format.toUpperCase(),
          width: probe.analysis.width, height: probe.analysis.height, bytes: probe.bytes, created_at: record.at,
        })
        .execute();
    }
    return recordOperation(trx, { ...record, durationMs: performance.now() - started });
  });
  return presentOperation(row);
}

/** `checkImage`: the checks of one image under the current settings; nothing is stored. */
export async function checkImage(services: Services, request: z.output<typeof CheckImageRequest>) {
  const gates = await faceGatesOf(services, { checkIcao: request.options?.checkIcao, detectLiveness: request.options?.detectLiveness });
  const [analysis] = await analyseImages(services, [base64Bytes(request.image)], () => 'body.image');
  const gate = gateImage(analysis!, gates);
  return { ...presentChecks(analysis!, !('status' in gate)), ...('status' in gate ? { reason: gate.reason } : {}) };
}
