import { clearDb, deleteSubject, deleteSubjects, deleteSubjectsByUuid } from '../services/subjects/deletes.js';
import {
  countSubjects,
  enrolledModalities,
  type getMultimodalSubject,
  type getSubject,
  type listMultimodalSubjects,
  listSubjectIds,
  type listSubjects,
  subjectsForDownload,
  subjectsPageText,
  subjectText,
} from '../services/subjects/queries.js';
import { presentedJson } from './presented-json.js';
import { jsonAnswer, type HandlerInput, type RequestSpec } from './types.js';
import { IdParams, NumericIdsQuery, SubjectIdParams, UuidParams } from '../schemas/biometric-data.js';
import {
  ClearDbQuery,
  DeleteSubjectQuery,
  DeleteSubjectsByUuidRequest,
  DeleteSubjectsRequest,
  SubjectIdListQuery,
  SubjectIdQuery,
  SubjectsCountQuery,
  SubjectsQuery,
} from '../schemas/subject-queries.js';
import { ownerOf } from '../services/ownership.js';
import { findSubject } from '../services/subjects/lookup.js';

/**
 * Handlers of the subject reads, lists, counts and deletes (seed 4.11): each passes validated input to one
 * function of services/subjects. Only the download builds its own Response (an attachment).
 */

/** What the subject reads' texts hold: what their presenters make (`tsc` checks it against the schemas). */
type SubjectPage = Awaited<ReturnType<typeof listSubjects>>;
type MultimodalPage = Awaited<ReturnType<typeof listMultimodalSubjects>>;
type OneSubject = Awaited<ReturnType<typeof getSubject>>;
type OneMultimodal = Awaited<ReturnType<typeof getMultimodalSubject>>;

/** A handler's input, typed from the schemas its operation declares (src/operations/subjects.ts). */
type In<R extends RequestSpec> = HandlerInput<R>;

export const subjectHandlers = {
  getSubjects: async ({ services, query, principal }: In<{ query: typeof SubjectsQuery }>) =>
    presentedJson<SubjectPage>(await subjectsPageText(services.ctx, query, 'subject', principal.accountCheck)),
  getSubjectsCount: ({ services, query }: In<{ query: typeof SubjectsCountQuery }>) =>
    countSubjects(services.ctx, query),
  getSubjectsIdList: ({ services, query, surface, principal }: In<{ query: typeof SubjectIdListQuery }>) =>
    listSubjectIds(services.ctx, query, ownerOf({ surface, principal })),
  getSubjectById: async ({ services, params, principal }: In<{ params: typeof IdParams }>) =>
    presentedJson<OneSubject>(
      await subjectText(services.ctx, { id: params.id }, 'subject', null, principal.accountCheck),
    ),
  getSubjectBySubjectId: async ({ services, params, principal }: In<{ params: typeof SubjectIdParams }>) =>
    presentedJson<OneSubject>(
      await subjectText(services.ctx, { subjectId: params.subjectId }, 'subject', null, principal.accountCheck),
    ),
  getSubjectByOperationId: async ({ services, params, surface, principal }: In<{ params: typeof UuidParams }>) =>
    presentedJson<OneSubject>(
      await subjectText(
        services.ctx,
        { operationUuid: params.uuid },
        'subject',
        ownerOf({ surface, principal }),
        principal.accountCheck,
      ),
    ),
  getMultimodalSubjects: async ({ services, query, principal }: In<{ query: typeof SubjectsQuery }>) =>
    presentedJson<MultimodalPage>(await subjectsPageText(services.ctx, query, 'multimodal', principal.accountCheck)),
  getMultimodalSubjectById: async ({ services, params, principal }: In<{ params: typeof IdParams }>) =>
    presentedJson<OneMultimodal>(
      await subjectText(services.ctx, { id: params.id }, 'multimodal', null, principal.accountCheck),
    ),
  getMultimodalSubjectBySubjectId: async ({ services, params, principal }: In<{ params: typeof SubjectIdParams }>) =>
    presentedJson<OneMultimodal>(
      await subjectText(services.ctx, { subjectId: params.subjectId }, 'multimodal', null, principal.accountCheck),
    ),
  getMultimodalSubjectByOperationId: async ({
    services,
    params,
    surface,
    principal,
  }: In<{ params: typeof UuidParams }>) =>
    presentedJson<OneMultimodal>(
      await subjectText(
        services.ctx,
        { operationUuid: params.uuid },
        'multimodal',
        ownerOf({ surface, principal }),
        principal.accountCheck,
      ),
    ),
  getSubjectsEnrolledModalities: ({ services, query, surface, principal }: In<{ query: typeof SubjectIdQuery }>) =>
    enrolledModalities(services.ctx, query.subjectId, ownerOf({ surface, principal })),
  /** The subjects as a `subjects.json` attachment, shaped by the response schema (`Subject`) so no internal field leaks. */
  downloadSubjectsInfoBulk: async ({ services, query }: In<{ query: typeof NumericIdsQuery }>) =>
    jsonAnswer(await subjectsForDownload(services.ctx, query.ids), {
      'Content-Disposition': 'attachment; filename="subjects.json"',
      'Cache-Control': 'no-store',
    }),
  deleteSubject: ({ services, query, surface, principal }: In<{ query: typeof DeleteSubjectQuery }>) =>
    deleteSubject(services, query, { surface, principal }),
  deleteSubjects: ({ services, body, surface, principal }: In<{ body: typeof DeleteSubjectsRequest }>) =>
    deleteSubjects(services, body.subjectIds, { surface, principal }),
  deleteSubjectsByUUID: ({ services, body, surface, principal }: In<{ body: typeof DeleteSubjectsByUuidRequest }>) =>
    deleteSubjectsByUuid(services, body.uuids, { surface, principal }),
  clearDb: ({
    services,
    query,
    surface,
    principal,
  }: In<{ query: typeof ClearDbQuery; queryOn: RequestSpec['queryOn'] }>) =>
    clearDb(services, query.prefix, { surface, principal }),
};

/**
 * A handler about one stored subject (named by `subjectIdOf`) that, on the user surface, runs only for the
 * account that enrolled it; for any other caller there the subject answers 404 as if absent
 * (services/ownership.ts). Used where the handler itself belongs to another area (the QR code).
 */
export function forOwnedSubject<R extends RequestSpec, A>(
  handler: (input: HandlerInput<R>) => Promise<A>,
  subjectIdOf: (input: HandlerInput<R>) => string,
) {
  return async (input: HandlerInput<R>) => {
    const owner = ownerOf(input);
    if (owner) await findSubject(input.services.ctx.db, { subjectId: subjectIdOf(input) }, owner);
    return handler(input);
  };
}
