import { findCaseInStore, type CaseRow } from '../../db/repositories/adjudication/cases.js';
import { findAccountUsername } from '../../db/repositories/adjudication/related.js';
import { findOperationByUuid } from '../../db/repositories/operation-log.js';
import type { ServiceContext } from '../context.js';
import { DomainError, notFound } from '../errors.js';
import { presentFaceData, presentImage, presentVoiceData } from '../biometric-data/present.js';
import {
  listFaceDataOfSubject,
  listImagesOfSubject,
  listVoiceDataOfSubject,
} from '../../db/repositories/biometric-data/samples.js';
import { renderPendingTokenImages } from '../biometric-data/token-images.js';
import { presentOperation } from '../operation-log/record.js';
import { getSubject } from '../subjects/queries.js';
import { decisionsOfCases, presentPending, presentSolved } from './present.js';
import type { ExtractorProvider } from '../biometrics/extractor-provider.js';

/** What showing a case uses: the database, and the extractor that renders token images not made yet. */
type ReviewServices = { ctx: ServiceContext; extractors: ExtractorProvider };

/**
 * A case with everything an adjudicator needs to compare faces side by side: the ENROLL operation that
 * opened it and the account (by name) that made it, the probe subject with its face data and images, and
 * each candidate with its images. Image bytes are not inlined; the dashboard fetches them through the image
 * download operations by id. Parts that were deleted since the case was opened (a candidate subject, the
 * operation row, the account) are simply absent.
 */

/** A subject as reads show it, or undefined when it no longer exists. */
async function subjectOrNothing(ctx: ServiceContext, subjectId: string) {
  try {
    return await getSubject(ctx, { subjectId });
  } catch (error) {
    if (error instanceof DomainError && error.code === 'not-found') return undefined;
    throw error;
  }
}

async function imagesOf(services: ReviewServices, subjectRef: number | undefined) {
  if (subjectRef === undefined) return [];
  const { ctx } = services;
  await renderPendingTokenImages(services, { subjectRefs: [subjectRef] });
  return (await listImagesOfSubject(ctx.db, subjectRef)).map(presentImage);
}

async function reviewParts(services: ReviewServices, row: CaseRow) {
  const { ctx } = services;
  const operation = await findOperationByUuid(ctx.db, row.operation_uuid);
  const enroller = operation?.account_id == null ? undefined : await findAccountUsername(ctx.db, operation.account_id);
  const subject = await subjectOrNothing(ctx, row.subject_id);
  const ref = subject?.id;
  const faces = ref === undefined ? [] : (await listFaceDataOfSubject(ctx.db, ref)).map(presentFaceData);
  const voices = ref === undefined ? [] : (await listVoiceDataOfSubject(ctx.db, ref)).map(presentVoiceData);
  const candidates = [];
  for (const candidate of row.candidates) {
    const other = await subjectOrNothing(ctx, candidate.subjectId);
    candidates.push({ candidate, ...(other ? { subject: other } : {}), images: await imagesOf(services, other?.id) });
  }
  return {
    ...(operation ? { operation: presentOperation(operation) } : {}),
    ...(operation?.account_id != null
      ? { enrolledBy: { accountId: operation.account_id, ...(enroller !== undefined ? { username: enroller } : {}) } }
      : {}),
    probe: { ...(subject ? { subject } : {}), faces, voices, images: await imagesOf(services, ref) },
    candidates,
  };
}

/** `AdjudicationPendingOperation` of a case row already read (PENDING or CONFLICTED). */
export async function pendingReview(services: ReviewServices, row: CaseRow) {
  const { ctx } = services;
  const decisions = (await decisionsOfCases(ctx.db, [row.id])).get(row.id) ?? [];
  return { adjudication: presentPending(row, decisions, ctx.now()), ...(await reviewParts(services, row)) };
}

/** `getAdjudicationPending`: a case of the pending store (PENDING or CONFLICTED); 404 otherwise. */
export async function getPendingCase(services: ReviewServices, id: number) {
  const { ctx } = services;
  const row = await findCaseInStore(ctx.db, id, 'pending');
  if (!row) throw notFound(`Pending adjudication case ${id}`);
  return pendingReview(services, row);
}

/** `getAdjudicationSolved`: a case of the solved store; 404 otherwise. */
export async function getSolvedCase(services: ReviewServices, id: number) {
  const { ctx } = services;
  const row = await findCaseInStore(ctx.db, id, 'solved');
  if (!row) throw notFound(`Solved adjudication case ${id}`);
  const decisions = (await decisionsOfCases(ctx.db, [row.id])).get(row.id) ?? [];
  return { adjudication: presentSolved(row, decisions), ...(await reviewParts(services, row)) };
}
