import type { z } from 'zod';
import { jsonFieldNames, type FieldNamer } from '../../schemas/field-names.js';
import { parseTemplate } from '../../biometrics/template.js';
import { json } from '../../db/json.js';
import { insertAdjudicationCase, insertSubjectUnlessTaken } from '../../db/repositories/enrolment.js';
import { subjectIdTaken } from '../../db/repositories/subjects/lookup.js';
import type { CreateSubjectRequest } from '../../schemas/subjects.js';
import type { Principal } from '../auth/principal.js';
import type { Surface } from '../../auth/roles.js';
import type { OperationServices } from '../operation-services.js';
import { DomainError, conflict } from '../errors.js';
import { analyseRequestSamples, type SampleAnalyses } from '../biometrics/analyse-samples.js';
import { presentChecks } from '../biometrics/present-checks.js';
import { recordOperation, type OperationStatus, type StoredCandidate } from '../operation-log/record.js';
import { deduplicate, deduplicationRules, type DedupOutcome, type DedupRules } from './deduplicate.js';
import { serialised } from './serialise.js';
import { encryptTemplateForDevice } from '../templates/encrypted.js';
import { getSubject } from '../subjects/queries.js';
import { countUsage, precheckLicence } from '../licensing/usage.js';
import { averagedVoiceTemplate, presentVoiceMeasures } from '../biometrics/voice-samples.js';
import { probeModalities } from '../biometrics/multimodal.js';
import { importedFaceTemplate } from './imported-template.js';
import { storeSamples } from './stored-samples.js';

type Request = z.output<typeof CreateSubjectRequest>;

/** Deduplication rules one enrolment is held to instead of the service's: a capture session's Advanced init params. */
interface SessionOverrides {
  deduplication?: Partial<DedupRules>;
}

interface Caller {
  principal: Principal;
  surface: Surface;
  /** The request's names for its fields, for the errors and reasons that name a sample (a JSON body's by default). */
  fields?: FieldNamer;
}

const statusOfOutcome: Record<DedupOutcome['status'], OperationStatus> = {
  ENROLLED: 'SUCCESS',
  PENDING_ADJUDICATION: 'PENDING_ADJUDICATION',
  REJECTED: 'DUPLICATE_FOUND',
};

/** An enrolment admitted before any extraction work: its subjectId free and the licence allowing it. */
interface AdmittedEnrolment {
  request: Request;
  uuid: string;
  /** performance.now() when it was admitted: the operation's duration counts the analysis too. */
  started: number;
  /** The modalities its samples (or template) are of. */
  requested: ('FACE' | 'VOICE')[];
}

/**
 * Enrol a subject from a request's samples: admit it, analyse every face and voice recording (all or nothing,
 * outside any transaction, analyse-samples.ts), then store it ({@link storeEnrolment}).
 */
export async function enrolSubject(services: OperationServices, request: Request, caller: Caller) {
  const admitted = await admitEnrolment(services, request);
  const samples = await analyseRequestSamples(services, request, 'ENROLL', caller.fields);
  return storeEnrolment(services, admitted, samples, caller);
}

/** A subjectId already taken, or a licence expired or used up, refuses before any extraction work is spent. */
export async function admitEnrolment(services: OperationServices, request: Request): Promise<AdmittedEnrolment> {
  const started = performance.now();
  const uuid = crypto.randomUUID();
  if (await subjectIdTaken(services.ctx.db, request.subjectId))
    throw conflict(`A subject with subjectId '${request.subjectId}' already exists`);
  const requested = [
    ...(request.faces?.length || request.template ? ['FACE' as const] : []),
    ...(request.voices?.length ? ['VOICE' as const] : []),
  ];
  await precheckLicence(services, 'ENROLL', requested);
  return { request, uuid, started, requested };
}

/**
 * Store an admitted enrolment from its analysed samples: a refused sample is recorded as the operation (its
 * status says why) and answered 422 naming the reason; otherwise deduplicate against the ENROLLED gallery of the
 * same template versions (face and voice scores fused), then store the subject, its samples, images, recordings
 * and templates, the ENROLL operation and (for a possible duplicate) a pending adjudication case in one
 * transaction. Only an ENROLLED subject joins the gallery, after the commit. Several voice recordings make one
 * voice template: their embeddings averaged.
 */
export async function storeEnrolment(
  services: OperationServices,
  admitted: AdmittedEnrolment,
  samples: SampleAnalyses,
  caller: Caller,
  session: SessionOverrides = {},
) {
  const { ctx } = services;
  const { request, uuid, started, requested } = admitted;
  const names = caller.fields ?? jsonFieldNames;
  const fail = async (status: OperationStatus, reason: string, extras: Record<string, unknown> = {}) => {
    await recordOperation(ctx.db, {
      uuid,
      type: 'ENROLL',
      status,
      subjectId: request.subjectId,
      modalities: requested,
      details: { reason, ...(extras.failedCheck ? { failedCheck: extras.failedCheck, voice: extras.voice } : {}) },
      durationMs: performance.now() - started,
      principal: caller.principal,
      surface: caller.surface,
      at: ctx.now(),
      checks: extras.checks,
    });
    throw new DomainError('unprocessable', reason, { operationUuid: uuid, operationStatus: status, ...extras });
  };
  const refused = samples.refusal;
  if (refused?.modality === 'FACE') {
    await fail(refused.status, refused.reason, {
      sampleIndex: refused.index,
      checks: presentChecks(refused.analysis, false),
    });
  }
  if (refused?.modality === 'VOICE') {
    await fail(refused.status, refused.reason, {
      modality: 'VOICE',
      sampleIndex: refused.index,
      failedCheck: refused.failedCheck,
      voice: presentVoiceMeasures(refused.analysis),
    });
  }
  const accepted = samples.faces!;
  const acceptedVoices = samples.voices!;
  const voiceVersion = acceptedVoices[0]?.templateVersion ?? null;
  const voiceTemplate = voiceVersion ? averagedVoiceTemplate(voiceVersion, acceptedVoices) : null;

  // An exported template may stand in for (or add to) the face images; it must be of the current version.
  const extraTemplates = request.template ? [await importedFaceTemplate(services, request.template)] : [];
  const templates = [...accepted.map((a) => a.template), ...extraTemplates];
  if (templates.length === 0 && !voiceTemplate) {
    throw new DomainError(
      'validation',
      `${names(['faces'])}: give at least one face image, voice recording or a template`,
      {
        errors: [{ field: names(['faces']), message: 'is required' }],
      },
    );
  }
  // The subject's template version is its face version; a voice-only subject's is its voice version.
  const templateVersion = templates.length ? parseTemplate(templates[0]!).templateVersion : voiceVersion!;

  // Deduplication and the insert run one enrolment at a time: in this process (the queue) and across every
  // process on the database (a lock held to the commit), so two near-identical enrolments arriving together,
  // on one node or two, cannot both miss each other.
  const dedup = request.options?.deduplicate !== false;
  const rules = dedup ? { ...(await deduplicationRules(services)), ...session.deduplication } : null;
  return serialised(async () => {
    // Apply what committed before now (deletions, adjudications) while no transaction holds a connection:
    // PGlite has one, which the catch-up needs.
    if (dedup) await services.gallery.catchUp();
    const stored = await services.gallery.transaction(async (trx, changes) => {
      if (rules) await services.gallery.lockForDeduplication(trx);
      const outcome: DedupOutcome = rules
        ? await deduplicate(services, { faces: templates, voice: voiceTemplate?.template ?? null }, rules)
        : { status: 'ENROLLED', candidates: [] };
      const candidates: StoredCandidate[] = outcome.candidates;
      const best = candidates[0];
      const now = ctx.now();
      // Counted (and refused over quota) in the enrolment's own transaction: a refusal rolls everything back.
      await countUsage(trx, services, 'ENROLL');
      const subject = await insertSubjectUnlessTaken(trx, {
        subject_id: request.subjectId,
        status: outcome.status,
        metadata: json(request.metadata ?? {}),
        template_version: templateVersion,
        enrollment_operation_uuid: uuid,
        created_at: now,
        updated_at: now,
      });
      if (!subject) throw conflict(`A subject with subjectId '${request.subjectId}' already exists`);
      const { compact, gallery } = await storeSamples(trx, {
        subjectRef: subject.id,
        subjectId: subject.subject_id,
        operationUuid: uuid,
        at: now,
        templateVersion,
        faces: accepted,
        importedTemplates: extraTemplates,
        voices: acceptedVoices,
        voiceTemplate: voiceTemplate && { version: voiceVersion!, ...voiceTemplate },
      });
      await recordOperation(trx, {
        uuid,
        type: 'ENROLL',
        status: statusOfOutcome[outcome.status],
        subjectId: request.subjectId,
        modalities: probeModalities({ faces: templates, voice: voiceTemplate?.template ?? null }),
        score: best?.score ?? null,
        threshold: outcome.threshold ?? null,
        candidates,
        durationMs: performance.now() - started,
        principal: caller.principal,
        surface: caller.surface,
        at: now,
        details: {
          samples: accepted.length + extraTemplates.length,
          ...(acceptedVoices.length ? { voices: acceptedVoices.map((v) => presentVoiceMeasures(v.analysis)) } : {}),
        },
      });
      if (outcome.status === 'PENDING_ADJUDICATION') {
        await insertAdjudicationCase(trx, {
          operation_uuid: uuid,
          subject_id: request.subjectId,
          candidates: json(candidates),
          created_at: now,
        });
      }
      // With its templates as committed: this node applies the change without reading it back.
      if (outcome.status === 'ENROLLED') changes.put(subject.id, gallery);
      // Answered exactly as the subject reads show it, read in the transaction: what this request committed,
      // whatever a concurrent request (a delete) does once it has.
      const presented = await getSubject({ ...ctx, db: trx }, { id: subject.id });
      return { subject, presented, outcome, compact: compact ?? extraTemplates[0] ?? null };
    });
    const { outcome } = stored;
    // The enrolled template, encrypted for the service alone, for devices that verify remotely.
    // (Face only: the browser SDK verifies faces; a voice-only subject has no such template.)
    const encryptedTemplate =
      outcome.status === 'REJECTED' || !stored.compact
        ? undefined
        : await encryptTemplateForDevice(services, stored.subject, stored.compact);
    return { ...stored.presented, candidates: outcome.candidates, ...(encryptedTemplate ? { encryptedTemplate } : {}) };
  });
}
