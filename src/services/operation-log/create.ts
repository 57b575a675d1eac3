import type { z } from 'zod';
import type { FieldNamer } from '../../schemas/field-names.js';
import type { CheckImageRequest, CreateOperationRequest } from '../../schemas/operations.js';
import type { Principal } from '../auth/principal.js';
import type { Surface } from '../../auth/roles.js';
import type { OperationServices } from '../operation-services.js';
import { notFound } from '../errors.js';
import { analyseImages, faceGatesOf, gateImage, type AcceptedFace } from '../biometrics/face-samples.js';
import { analyseRequestSamples, faceMeasures, type SampleAnalyses } from '../biometrics/analyse-samples.js';
import type { SampleServices } from '../biometrics/sample-services.js';
import { presentChecks } from '../biometrics/present-checks.js';
import { presentOperation, recordOperation, type OperationRecord } from './record.js';
import { countUsage, precheckLicence } from '../licensing/usage.js';
import {
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

/** An operation admitted before any extraction work: the licence allows it, and a VERIFY's subject exists. */
interface AdmittedOperation {
  request: Request;
  /** The operation's record, but for its outcome. */
  base: Omit<OperationRecord, 'status'>;
  /** performance.now() when it was admitted: the operation's duration counts the analysis too. */
  started: number;
  /** VERIFY: the subject's row. */
  subject?: { id: number };
}

/**
 * Perform and record a VERIFY (1:1 against a subject's face samples, best score, and its voice template),
 * IDENTIFY (1:N over the ENROLLED gallery, top-k above the threshold) or CHECK (quality, liveness and ICAO checks only; no
 * template kept) on a request's samples: admit it, analyse them (analyse-samples.ts), then run it
 * ({@link runOperation}).
 */
export async function createOperation(services: OperationServices, request: Request, caller: Caller) {
  const admitted = await admitOperation(services, request, caller);
  const samples = await analyseRequestSamples(services, request, request.type, caller.fields);
  return runOperation(services, admitted, samples);
}

/**
 * An expired or used-up licence (or one without a requested modality), or a VERIFY of a subject that does not
 * exist, refuses before any extraction work is spent.
 */
export async function admitOperation(
  services: OperationServices,
  request: Request,
  caller: Caller,
): Promise<AdmittedOperation> {
  const requested = [
    ...(request.faces?.length ? ['FACE' as const] : []),
    ...(request.voices?.length ? ['VOICE' as const] : []),
  ];
  await precheckLicence(services, request.type, requested);
  const started = performance.now();
  const base: Omit<OperationRecord, 'status'> = {
    uuid: crypto.randomUUID(),
    type: request.type,
    subjectId: request.subjectId ?? null,
    modalities: requested,
    durationMs: 0,
    principal: caller.principal,
    surface: caller.surface,
    at: services.ctx.now(),
  };
  if (request.type !== 'VERIFY') return { request, base, started };
  const subject = await subjectRefBySubjectId(services.ctx.db, request.subjectId!);
  if (!subject) throw notFound(`Subject '${request.subjectId}'`);
  return { request, base, started, subject };
}

/**
 * Run an admitted operation on its analysed samples and record it. A sample the gates refused is a recorded
 * operation whose status says why, not an error. VERIFY and IDENTIFY keep their probe images under the
 * operation's UUID for review and audit; CHECK keeps nothing but the checks of its first refused image (or of
 * its first image when all passed).
 */
export async function runOperation(services: OperationServices, admitted: AdmittedOperation, samples: SampleAnalyses) {
  const { request, base, started } = admitted;
  const refused = samples.refusal;
  if (refused?.modality === 'FACE') {
    const record = {
      ...base,
      status: refused.status,
      checks: presentChecks(refused.analysis, false),
      details: { reason: refused.reason },
    };
    return finish(services, record, started, []);
  }
  if (refused?.modality === 'VOICE') {
    const details = {
      reason: refused.reason,
      failedCheck: refused.failedCheck,
      sampleIndex: refused.index,
      voice: presentVoiceMeasures(refused.analysis),
    };
    return finish(services, { ...base, status: refused.status, details }, started, []);
  }
  const faces = samples.faces!;
  const voices = samples.voices!;
  if (request.type === 'CHECK') {
    const record = {
      ...base,
      status: 'SUCCESS' as const,
      checks: presentChecks(faces[0]!.analysis, true),
      details: null,
    };
    return finish(services, record, started, []);
  }
  // The probe's recordings make one voice template, as at enrolment (their embeddings averaged).
  const voiceVersion = voices[0]?.templateVersion ?? null;
  const probe: MultimodalProbe = {
    faces: faces.map((f) => f.template),
    voice: voiceVersion ? averagedVoiceTemplate(voiceVersion, voices)!.template : null,
  };
  const threshold = request.options?.threshold ?? (await services.settings.get('matching.threshold'));
  if (request.type === 'VERIFY') {
    const { score, scores } = await verifySubject(services, admitted.subject!.id, probe);
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
      faces,
      voices,
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
    faces,
    voices,
  );
}

/** Store the operation (and its probe images and recordings) and count it against the licence in one transaction, and answer it. */
async function finish(
  services: OperationServices,
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

/** `checkImage`: the checks of one image under the current settings, as CHECK measures them; nothing is stored. */
export async function checkImage(services: SampleServices, request: z.output<typeof CheckImageRequest>) {
  const gates = await faceGatesOf(services, {
    checkIcao: request.options?.checkIcao,
    detectLiveness: request.options?.detectLiveness,
  });
  const [analysis] = await analyseImages(services, [request.image], () => 'body.image', faceMeasures('CHECK', gates));
  const gate = gateImage(analysis!, gates);
  return { ...presentChecks(analysis!, !('status' in gate)), ...('status' in gate ? { reason: gate.reason } : {}) };
}
