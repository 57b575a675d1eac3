import { z } from '../schemas/common.js';
import { Subject } from '../schemas/subjects.js';
import { clearDb, deleteSubject, deleteSubjects, deleteSubjectsByUuid } from '../services/subjects/deletes.js';
import {
  countSubjects, enrolledModalities, getMultimodalSubject, getSubject, listMultimodalSubjects, listSubjectIds, listSubjects,
  subjectsForDownload,
} from '../services/subjects/queries.js';
import type { HandlerInput } from './types.js';

/**
 * Handlers of the subject reads, lists, counts and deletes (seed 4.11): each passes validated input to one
 * function of services/subjects. Only the download builds its own Response (an attachment).
 */

type H = (input: HandlerInput) => Promise<unknown>;

const SubjectsFile = z.array(Subject);

export const subjectHandlers = {
  getSubjects: ({ services, query }) => listSubjects(services.ctx, query),
  getSubjectsCount: ({ services, query }) => countSubjects(services.ctx, query),
  getSubjectsIdList: ({ services, query }) => listSubjectIds(services.ctx, query),
  getSubjectById: ({ services, params }) => getSubject(services.ctx, { id: params.id }),
  getSubjectBySubjectId: ({ services, params }) => getSubject(services.ctx, { subjectId: params.subjectId }),
  getSubjectByOperationId: ({ services, params }) => getSubject(services.ctx, { operationUuid: params.uuid }),
  getMultimodalSubjects: ({ services, query }) => listMultimodalSubjects(services.ctx, query),
  getMultimodalSubjectById: ({ services, params }) => getMultimodalSubject(services.ctx, { id: params.id }),
  getMultimodalSubjectBySubjectId: ({ services, params }) => getMultimodalSubject(services.ctx, { subjectId: params.subjectId }),
  getMultimodalSubjectByOperationId: ({ services, params }) => getMultimodalSubject(services.ctx, { operationUuid: params.uuid }),
  getSubjectsEnrolledModalities: ({ services, query }) => enrolledModalities(services.ctx, query.subjectId),
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
  deleteSubject: ({ services, query }) => deleteSubject(services, query),
  deleteSubjects: ({ services, body }) => deleteSubjects(services, body.subjectIds),
  deleteSubjectsByUUID: ({ services, body }) => deleteSubjectsByUuid(services, body.uuids),
  clearDb: ({ services, query, surface }) => clearDb(services, query.prefix, surface),
} satisfies Record<string, H>;
