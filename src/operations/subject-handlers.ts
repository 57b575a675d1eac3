import { clearDb, deleteSubject, deleteSubjects, deleteSubjectsByUuid } from '../services/subjects/deletes.js';
import {
  countSubjects, enrolledModalities, getMultimodalSubject, getSubject, listMultimodalSubjects, listSubjectIds, listSubjects,
  subjectsForDownload,
} from '../services/subjects/queries.js';
import { jsonAnswer, type HandlerInput, type RequestSpec } from './types.js';
import { IdParams, NumericIdsQuery, SubjectIdParams, UuidParams } from '../schemas/biometric-data.js';
import {
  ClearDbQuery, DeleteSubjectQuery, DeleteSubjectsByUuidRequest, DeleteSubjectsRequest, SubjectIdListQuery, SubjectIdQuery, SubjectsCountQuery,
  SubjectsQuery,
} from '../schemas/subjects.js';
import { ownerOf } from '../services/ownership.js';
import { findSubject } from '../services/subjects/lookup.js';

/**
 * Handlers of the subject reads, lists, counts and deletes (seed 4.11): each passes validated input to one
 * function of services/subjects. Only the download builds its own Response (an attachment).
 */

/** A handler's input, typed from the schemas its operation declares (src/operations/subjects.ts). */
type In<R extends RequestSpec> = HandlerInput<R>;

export const subjectHandlers = {
  getSubjects: ({ services, query, principal }: In<{ query: typeof SubjectsQuery }>) => listSubjects(services.ctx, query, principal.accountCheck),
  getSubjectsCount: ({ services, query }: In<{ query: typeof SubjectsCountQuery }>) => countSubjects(services.ctx, query),
  getSubjectsIdList: ({ services, query, surface, principal }: In<{ query: typeof SubjectIdListQuery }>) => listSubjectIds(services.ctx, query, ownerOf({ surface, principal })),
  getSubjectById: ({ services, params, principal }: In<{ params: typeof IdParams }>) => getSubject(services.ctx, { id: params.id }, null, principal.accountCheck),
  getSubjectBySubjectId: ({ services, params, principal }: In<{ params: typeof SubjectIdParams }>) => getSubject(services.ctx, { subjectId: params.subjectId }, null, principal.accountCheck),
  getSubjectByOperationId: ({ services, params, surface, principal }: In<{ params: typeof UuidParams }>) => getSubject(services.ctx, { operationUuid: params.uuid }, ownerOf({ surface, principal }), principal.accountCheck),
  getMultimodalSubjects: ({ services, query, principal }: In<{ query: typeof SubjectsQuery }>) => listMultimodalSubjects(services.ctx, query, principal.accountCheck),
  getMultimodalSubjectById: ({ services, params, principal }: In<{ params: typeof IdParams }>) => getMultimodalSubject(services.ctx, { id: params.id }, null, principal.accountCheck),
  getMultimodalSubjectBySubjectId: ({ services, params, principal }: In<{ params: typeof SubjectIdParams }>) => getMultimodalSubject(services.ctx, { subjectId: params.subjectId }, null, principal.accountCheck),
  getMultimodalSubjectByOperationId: ({ services, params, surface, principal }: In<{ params: typeof UuidParams }>) =>
    getMultimodalSubject(services.ctx, { operationUuid: params.uuid }, ownerOf({ surface, principal }), principal.accountCheck),
  getSubjectsEnrolledModalities: ({ services, query, surface, principal }: In<{ query: typeof SubjectIdQuery }>) => enrolledModalities(services.ctx, query.subjectId, ownerOf({ surface, principal })),
  /** The subjects as a `subjects.json` attachment, shaped by the response schema (`Subject`) so no internal field leaks. */
  downloadSubjectsInfoBulk: async ({ services, query }: In<{ query: typeof NumericIdsQuery }>) =>
    jsonAnswer(await subjectsForDownload(services.ctx, query.ids), { 'Content-Disposition': 'attachment; filename="subjects.json"', 'Cache-Control': 'no-store' }),
  deleteSubject: ({ services, query, surface, principal }: In<{ query: typeof DeleteSubjectQuery }>) => deleteSubject(services, query, { surface, principal }),
  deleteSubjects: ({ services, body, surface, principal }: In<{ body: typeof DeleteSubjectsRequest }>) => deleteSubjects(services, body.subjectIds, { surface, principal }),
  deleteSubjectsByUUID: ({ services, body, surface, principal }: In<{ body: typeof DeleteSubjectsByUuidRequest }>) => deleteSubjectsByUuid(services, body.uuids, { surface, principal }),
  clearDb: ({ services, query, surface, principal }: In<{ query: typeof ClearDbQuery; queryOn: RequestSpec['queryOn'] }>) => clearDb(services, query.prefix, { surface, principal }),
};

/**
 * A handler about one stored subject (named by `subjectIdOf`) that, on the user surface, runs only for the
 * account that enrolled it; for any other caller there the subject answers 404 as if absent
 * (services/ownership.ts). Used where the handler itself belongs to another area (the QR code).
 */
export function forOwnedSubject<R extends RequestSpec, A>(handler: (input: HandlerInput<R>) => Promise<A>, subjectIdOf: (input: HandlerInput<R>) => string) {
  return async (input: HandlerInput<R>) => {
    const owner = ownerOf(input);
    if (owner) await findSubject(input.services.ctx.db, { subjectId: subjectIdOf(input) }, owner);
    return handler(input);
  };
}
