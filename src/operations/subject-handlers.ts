import { z } from '../schemas/common.js';
import { Subject } from '../schemas/subjects.js';
import { clearDb, deleteSubject, deleteSubjects, deleteSubjectsByUuid } from '../services/subjects/deletes.js';
import {
  countSubjects, enrolledModalities, getMultimodalSubject, getSubject, listMultimodalSubjects, listSubjectIds, listSubjects,
  subjectsForDownload,
} from '../services/subjects/queries.js';
import type { HandlerInput } from './types.js';
import { ownerOf } from '../services/ownership.js';
import { findSubject } from '../services/subjects/lookup.js';

/**
 * Handlers of the subject reads, lists, counts and deletes (seed 4.11): each passes validated input to one
 * function of services/subjects. Only the download builds its own Response (an attachment).
 */

type H = (input: HandlerInput) => Promise<unknown>;

const SubjectsFile = z.array(Subject);

export const subjectHandlers = {
  getSubjects: ({ services, query }) => listSubjects(services.ctx, query),
  getSubjectsCount: ({ services, query }) => countSubjects(services.ctx, query),
  getSubjectsIdList: ({ services, query, surface, principal }) => listSubjectIds(services.ctx, query, ownerOf({ surface, principal })),
  getSubjectById: ({ services, params }) => getSubject(services.ctx, { id: params.id }),
  getSubjectBySubjectId: ({ services, params }) => getSubject(services.ctx, { subjectId: params.subjectId }),
  getSubjectByOperationId: ({ services, params, surface, principal }) => getSubject(services.ctx, { operationUuid: params.uuid }, ownerOf({ surface, principal })),
  getMultimodalSubjects: ({ services, query }) => listMultimodalSubjects(services.ctx, query),
  getMultimodalSubjectById: ({ services, params }) => getMultimodalSubject(services.ctx, { id: params.id }),
  getMultimodalSubjectBySubjectId: ({ services, params }) => getMultimodalSubject(services.ctx, { subjectId: params.subjectId }),
  getMultimodalSubjectByOperationId: ({ services, params, surface, principal }) =>
    getMultimodalSubject(services.ctx, { operationUuid: params.uuid }, ownerOf({ surface, principal })),
  getSubjectsEnrolledModalities: ({ services, query, surface, principal }) => enrolledModalities(services.ctx, query.subjectId, ownerOf({ surface, principal })),
  /** The subjects as a `subjects.json` attachment, shaped by the `Subject` schema so no internal field leaks. */
  downloadSubjectsInfoBulk: async ({ services, query }) => {
    const subjects = SubjectsFile.parse(await subjectsForDownload(services.ctx, query.ids));
    return new Response(JSON.stringify(subjects, null, 2), {
      headers: {
        'Content-Type': 'application/json; charset=utf-8',
        'Content-Disposition': 'attachment; filename="subjects.json"',
        'Cache-Control': 'no-store',
      },
    });
  },
  deleteSubject: ({ services, query, surface, principal }) => deleteSubject(services, query, { surface, principal }),
  deleteSubjects: ({ services, body, surface, principal }) => deleteSubjects(services, body.subjectIds, { surface, principal }),
  deleteSubjectsByUUID: ({ services, body, surface, principal }) => deleteSubjectsByUuid(services, body.uuids, { surface, principal }),
  clearDb: ({ services, query, surface, principal }) => clearDb(services, query.prefix, { surface, principal }),
} satisfies Record<string, H>;

/**
 * A handler about one stored subject (named by `subjectIdOf`) that, on the user surface, runs only for the
 * account that enrolled it; for any other caller there the subject answers 404 as if absent
 * (services/ownership.ts). Used where the handler itself belongs to another area (the QR code).
 */
export function forOwnedSubject(handler: (input: HandlerInput) => Promise<unknown>, subjectIdOf: (input: HandlerInput) => string) {
  return async (input: HandlerInput) => {
    const owner = ownerOf(input);
    if (owner) await findSubject(input.services.ctx.db, { subjectId: subjectIdOf(input) }, owner);
    return handler(input);
  };
}
