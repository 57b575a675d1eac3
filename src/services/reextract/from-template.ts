import { FACE_CALIBRATION } from '../../biometrics/calibration.js';
import { cosineInt8, faceRecord, parseTemplate, type TemplateRecord } from '../../biometrics/template.js';
import { invalid } from '../errors.js';
import { analyseFaces } from '../biometrics/face-samples.js';
import { jsonFieldNames, sampleFields } from '../../schemas/field-names.js';
import { presentChecks } from '../biometrics/present-checks.js';
import { presentOperation, recordOperation } from '../operation-log/record.js';
import { refuse, type Caller } from './refuse.js';
import type { ExtractorProvider } from '../biometrics/extractor-provider.js';
import type { ServiceContext } from '../context.js';
import type { SettingsService } from '../settings/settings.js';

const round = (score: number) => Math.round(score * 100) / 100;

/**
 * `reextractSubject` with an old template and new face samples: the holder of a template (a card, a QR
 * code, a device) proves with fresh photos that they are its owner, and gets a new template made from them.
 *
 * Decisions:
 * - Embeddings of different model versions live in different spaces, so the old template can be compared
 *   only with a new sample of its own version. When its version is not the current one, nothing can prove
 *   that the new photos show the template's owner: the answer is a 422 explaining that a stored subject must
 *   be re-extracted from its stored samples instead (`subjectId` mode), or enrolled again.
 * - The new samples pass the same gates as at enrolment (they are new biometric data), and every one of them
 *   must match the old template at the `matching.threshold` setting; one photo of someone else refuses the
 *   whole request (MATCH_NOT_FOUND, 422 with the weakest score and the threshold). The operation's score is
 *   the weakest sample's.
 * - The new template is made from the best-quality sample and answered as bytes (written as base64 by the operation); nothing biometric is stored
 *   (no subject is concerned), only the REEXTRACT operation.
 */
export async function reextractFromTemplate(
  services: { ctx: ServiceContext; settings: SettingsService; extractors: ExtractorProvider },
  request: { template: Uint8Array; faces?: { image: Uint8Array }[] },
  caller: Caller,
) {
  const started = performance.now();
  const uuid = crypto.randomUUID();
  const old = oldFaceRecord(request.template);
  const extractor = await services.extractors.get();
  const current = extractor.templateVersion;
  const base = { uuid, started, caller };
  if (old.templateVersion !== current) {
    return refuse(services, {
      ...base,
      status: 'FAILED',
      reason:
        `body.template: the template is of version ${old.templateVersion} and new samples are extracted as ${current}; templates of ` +
        'different model versions cannot be compared, so the new samples cannot be checked against it. Re-extract the stored subject ' +
        'from its stored samples instead (reextractSubject with subjectId), or enrol it again',
      extras: {
        templateVersion: current,
        oldTemplateVersion: old.templateVersion,
        errors: [{ field: 'body.template', message: 'template version differs from the current one' }],
      },
    });
  }
  if (!request.faces?.length)
    throw invalid('body.faces', 'give at least one new face sample that matches the template');

  const faces = await analyseFaces(
    services,
    request.faces.map((f) => f.image),
    { fields: sampleFields(jsonFieldNames, 'faces', 'image') },
  );
  if (faces.failure) {
    const f = faces.failure;
    return refuse(services, {
      ...base,
      status: f.status,
      reason: f.reason,
      checks: presentChecks(f.analysis, false),
      extras: { sampleIndex: f.index },
    });
  }
  const threshold = await services.settings.get('matching.threshold');
  const scores = faces.accepted.map((a) =>
    round(FACE_CALIBRATION.cosineToScore(cosineInt8(old.record.q, faceRecord(parseTemplate(a.template))!.q))),
  );
  const weakest = Math.min(...scores);
  if (weakest < threshold) {
    const index = scores.indexOf(weakest);
    return refuse(services, {
      ...base,
      status: 'MATCH_NOT_FOUND',
      reason: `body.faces.${index}: the new sample does not match the template (score ${weakest} below the threshold ${threshold}, setting matching.threshold)`,
      score: weakest,
      threshold,
      extras: { sampleIndex: index, scores },
    });
  }

  const best = faces.accepted.reduce((a, b) => (b.face.quality > a.face.quality ? b : a));
  const operation = await services.ctx.db.transaction().execute((trx) =>
    recordOperation(trx, {
      uuid,
      type: 'REEXTRACT',
      status: 'SUCCESS',
      modalities: ['FACE'],
      score: weakest,
      threshold,
      durationMs: performance.now() - started,
      principal: caller.principal,
      surface: caller.surface,
      at: services.ctx.now(),
      details: { templateVersion: current, samples: faces.accepted.length, scores, templateFrom: best.index },
    }),
  );
  return { operation: presentOperation(operation), template: best.template, templateVersion: current };
}

/** The face record of the client's old template; unreadable bytes or a template without a face are a 400 naming the field. */
function oldFaceRecord(bytes: Uint8Array): { templateVersion: string; record: TemplateRecord } {
  let parsed;
  try {
    parsed = parseTemplate(bytes);
  } catch (error) {
    throw invalid('body.template', error instanceof Error ? error.message : 'unreadable template');
  }
  const record = faceRecord(parsed);
  if (!record) throw invalid('body.template', 'the template holds no face record');
  return { templateVersion: parsed.templateVersion, record };
}
