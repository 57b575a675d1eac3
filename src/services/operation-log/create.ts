import type { z } from 'zod';
import { jsonFieldNames, sampleFields, type FieldNamer, type SampleFields } from '../../schemas/field-names.js';
import type { CheckImageRequest, CreateOperationRequest } from '../../schemas/operations.js';
import type { Principal } from '../auth/principal.js';
import type { Surface } from '../../auth/roles.js';
import type { Services } from '../index.js';
import { notFound } from '../errors.js';
import {
  analyseFaces,
  analyseImages,
  faceGatesOf,
  gateImage,
  type AcceptedFace,
  type FaceGates,
} from '../biometrics/face-samples.js';
import { presentChecks } from '../biometrics/present-checks.js';
import { presentOperation, recordOperation, type OperationRecord } from './record.js';
import { countUsage, precheckLicence } from '../licensing/usage.js';
import {
  analyseVoices,
  averagedVoiceTemplate,
  presentVoiceMeasures,
  voiceSampleRow,
  type AcceptedVoice,
} from '../biometrics/voice-samples.js';
import { probeModalities, searchGallery, verifySubject, type MultimodalProbe } from '../biometrics/multimodal.js';
import type { LicensedOperationType } from '../../licensing/document.js';
import { insertProbeImage, insertProbeVoiceSample } from '../../db/repositories/operation-log.js';
import { subjectRefBySubjectId } from '../../db/repositories/subjects/lookup.js';

type Request = z.output<typeof CreateOperationRequest>;
interface Caller {
  principal: Principal;
  surface: Surface;
  /** The request's names for its fields, for the errors and reasons that name a sample (a JSON body's by default). */
  fields?: FieldNamer;
}

/**
 * Perform and record a VERIFY (1:1 against a subject's face samples, best score, and its voice template),
 * IDENTIFY (1:N over the ENROLLED gallery, top-k above the threshold) or CHECK (quality, liveness and ICAO checks only; no
 * template kept). A sample the gates refuse is a recorded operation whose status says why, not an error.
 * VERIFY and IDENTIFY keep their probe images under the operation's UUID for review and audit.
 */
export async function createOperation(
  services: Services,
  request: Request,
  caller: Caller,
  session: { gates?: Partial<FaceGates> } = {},
) {
  const requested = [
    ...(request.faces?.length ? ['FACE' as const] : []),
    ...(request.voices?.length ? ['VOICE' as const] : []),
  ];
  // An expired or used-up licence (or one without a requested modality) refuses before any extraction work.
  await precheckLicence(services, request.type, requested);
  const started = performance.now();
  const uuid = crypto.randomUUID();
  const base: Omit<OperationRecord, 'status'> = {
    uuid,
    type: request.type,
    subjectId: request.subjectId ?? null,
    modalities: requested,
    durationMs: 0,
    principal: caller.principal,
    surface: caller.surface,
    at: services.ctx.now(),
  };
  const images = (request.faces ?? []).map((f) => f.image);
  const faceFields = sampleFields(caller.fields ?? jsonFieldNames, 'faces', 'image');
  if (request.type === 'CHECK') return check(services, base, images, faceFields, request, started, session.gates);

  // The subject of a VERIFY must exist before any extraction work is spent on it.
  const subject =
    request.type === 'VERIFY' ? await subjectRefBySubjectId(services.ctx.db, request.subjectId!) : undefined;
  if (request.type === 'VERIFY' && !subject) throw notFound(`Subject '${request.subjectId}'`);

  const [faces, voices] = await Promise.all([
    images.length
      ? analyseFaces(services, images, {
          fields: faceFields,
          checks: false,
          checkIcao: request.options?.checkIcao,
          detectLiveness: request.options?.detectLiveness,
          overrides: session.gates,
        })
      : { accepted: [] as AcceptedFace[], failure: undefined },
    request.voices?.length
      ? analyseVoices(
          services,
          request.voices.map((v) => v.audio),
          sampleFields(caller.fields ?? jsonFieldNames, 'voices', 'audio'),
        )
      : { accepted: [] as AcceptedVoice[], failure: undefined },
  ]);
  if (faces.failure) {
    return finish(
      services,
      {
        ...base,
        status: faces.failure.status,
        checks: presentChecks(faces.failure.analysis, false),
        details: { reason: faces.failure.reason },
      },
      started,
      [],
    );
  }
  if (voices.failure) {
    const v = voices.failure;
    return finish(
      services,
      {
        ...base,
        status: v.status,
        details: {
          reason: v.reason,
          failedCheck: v.failedCheck,
          sampleIndex: v.index,
          voice: presentVoiceMeasures(v.analysis),
        },
      },
      started,
      [],
    );
  }
  // The probe's recordings make one voice template, as at enrolment (their embeddings averaged).
  const voiceVersion = voices.accepted[0]?.templateVersion ?? null;
  const probe: MultimodalProbe = {
    faces: faces.accepted.map((f) => f.template),
    voice: voiceVersion ? averagedVoiceTemplate(voiceVersion, voices.accepted)!.template : null,
  };
  const threshold = request.options?.threshold ?? (await services.settings.get('matching.threshold'));
  if (request.type === 'VERIFY') {
    const { score, scores } = await verifySubject(services, subject!.id, probe);
    return finish(
      services,
      {
        ...base,
        modalities: probeModalities(probe),
        status: score !== null && score >= threshold ? 'SUCCESS' : 'MATCH_NOT_FOUND',
        score,
        threshold,
        details:
          score === null
            ? { reason: "the subject has no template of the probe's modalities and current template versions" }
            : { scores },
      },
      started,
      faces.accepted,
      voices.accepted,
    );
  }
  const topK = request.options?.maxCandidates ?? (await services.settings.get('identify.maxCandidates'));
  const candidates = await searchGallery(services, probe, { topK, threshold });
  return finish(
    services,
    {
      ...base,
      status: candidates.length ? 'SUCCESS' : 'MATCH_NOT_FOUND',
      score: candidates[0]?.score ?? null,
      threshold,
      candidates,
    },
    started,
    faces.accepted,
    voices.accepted,
  );
}

async function check(
  services: Services,
  base: Omit<OperationRecord, 'status'>,
  images: Uint8Array[],
  fields: SampleFields,
  request: Request,
  started: number,
  overrides?: Partial<FaceGates>,
) {
  const gates = await faceGatesOf(services, {
    checkIcao: request.options?.checkIcao,
    detectLiveness: request.options?.detectLiveness,
    overrides,
  });
  const analyses = await analyseImages(services, images, fields.bytes);
  const gated = analyses.map((a) => gateImage(a, gates));
  const firstFailure = gated.findIndex((g) => 'status' in g);
  const failure =
    firstFailure >= 0 ? (gated[firstFailure] as { status: OperationRecord['status']; reason: string }) : null;
  return finish(
    services,
    {
      ...base,
      status: failure ? failure.status : 'SUCCESS',
      // The checks of the first refused image, or of the first image when all passed.
      checks: presentChecks(analyses[Math.max(0, firstFailure)]!, !failure),
      details: failure ? { reason: `${fields.sample(firstFailure)}: ${failure.reason}` } : null,
    },
    started,
    [],
  );
}

/** Store the operation (and its probe images and recordings) and count it against the licence in one transaction, and answer it. */
async function finish(
  services: Services,
  record: OperationRecord,
  started: number,
  probes: AcceptedFace[],
  voices: AcceptedVoice[] = [],
) {
  const { ctx } = services;
  const row = await ctx.db.transaction().execute(async (trx) => {
    // Counted (and refused over quota) with the operation it counts: a refusal rolls both back.
    await countUsage(trx, services, record.type as LicensedOperationType);
    for (const probe of probes) {
      await insertProbeImage(trx, {
        operation_uuid: record.uuid,
        format: probe.analysis.format.toUpperCase(),
        width: probe.analysis.width,
        height: probe.analysis.height,
        bytes: probe.bytes,
        created_at: record.at,
      });
    }
    for (const voice of voices) {
      await insertProbeVoiceSample(
        trx,
        voiceSampleRow(voice, { subjectRef: null, operationUuid: record.uuid, at: record.at }),
      );
    }
    return recordOperation(trx, { ...record, durationMs: performance.now() - started });
  });
  return presentOperation(row);
}

/** `checkImage`: the checks of one image under the current settings; nothing is stored. */
export async function checkImage(services: Services, request: z.output<typeof CheckImageRequest>) {
  const gates = await faceGatesOf(services, {
    checkIcao: request.options?.checkIcao,
    detectLiveness: request.options?.detectLiveness,
  });
  const [analysis] = await analyseImages(services, [request.image], () => 'body.image');
  const gate = gateImage(analysis!, gates);
  return { ...presentChecks(analysis!, !('status' in gate)), ...('status' in gate ? { reason: gate.reason } : {}) };
}
