import { z } from '../schemas/common.js';
import { IdParams, Image, ImageByIdQuery, NumericIdsQuery, UuidQuery, zipDownload } from '../schemas/biometric-data.js';
import { getImageById, getImagesByUuid } from '../services/biometric-data/info.js';
import { answerDownload } from './download-handlers.js';
import { defineOperation } from './types.js';
import { ownerOf } from '../services/ownership.js';
import { extractionProblems } from './extraction-problems.js';

const area = 'Images';
const adminRoot = ['admin', 'root'] as const;
const all = ['admin', 'root', 'user'] as const;
/** These downloads serve stored images only (originals, token images, crops). */
const content = 'images' as const;

/** Seed section 4.4: stored images, read by identifier or UUID and downloaded as ZIP files. */
export const imageOperations = [
  defineOperation({
    id: 'getImageById',
    method: 'get',
    path: '/images/id/',
    surfaces: adminRoot,
    area,
    problems: extractionProblems,
    summary: 'Image information by image identifier and operation identifier',
    description: '404 unless the image belongs to that operation.',
    request: { query: ImageByIdQuery },
    response: { description: 'The image information', schema: Image },
    handle: ({ services, query }) => getImageById(services, query.id, query.operationId),
  }),
  defineOperation({
    id: 'getImageByUUID',
    method: 'get',
    path: '/images/uuid/',
    surfaces: all,
    area,
    problems: extractionProblems,
    summary: 'Image information by UUID',
    description:
      "The images an operation stored (originals, tokens, face crops). On the user surface, only what the calling account owns: the images of subjects it enrolled and of its own operations (404 for another account's operation).",
    request: { query: UuidQuery },
    response: { description: 'The images of the operation', schema: z.array(Image) },
    handle: ({ services, query, surface, principal }) =>
      getImagesByUuid(services, query.uuid, ownerOf({ surface, principal })),
  }),
  defineOperation({
    id: 'downloadImageInfoBulkByOperation',
    method: 'get',
    path: '/images/operation/download',
    surfaces: adminRoot,
    area,
    problems: extractionProblems,
    summary: 'Downloads image data for several operation identifiers',
    description: '`ids` are operation identifiers.',
    request: { query: NumericIdsQuery },
    response: zipDownload('The images of the operations'),
    handle: (input) =>
      answerDownload(input, { selector: { operationIds: input.query.ids }, content, name: ['operations'] }),
  }),
  defineOperation({
    id: 'downloadImageInfoBulkBySubject',
    method: 'get',
    path: '/images/subjects/download',
    surfaces: adminRoot,
    area,
    problems: extractionProblems,
    summary: 'Downloads image data for several subject identifiers',
    description: '`ids` are internal subject identifiers.',
    request: { query: NumericIdsQuery },
    response: zipDownload('The images of the subjects'),
    handle: (input) =>
      answerDownload(input, { selector: { subjectRefs: input.query.ids }, content, name: ['subjects'] }),
  }),
  defineOperation({
    id: 'downloadImageInfoByOperationId',
    method: 'get',
    path: '/images/operation/{id}/download',
    surfaces: adminRoot,
    area,
    problems: extractionProblems,
    summary: 'Downloads image data of one operation',
    request: { params: IdParams },
    response: zipDownload('The images of the operation'),
    handle: (input) =>
      answerDownload(input, {
        selector: { operationIds: [input.params.id] },
        content,
        name: ['operation', input.params.id],
      }),
  }),
  defineOperation({
    id: 'downloadImageInfoBySubjectId',
    method: 'get',
    path: '/images/subject/{id}/download',
    surfaces: adminRoot,
    area,
    problems: extractionProblems,
    summary: 'Downloads image data of one subject',
    description: '`id` is the internal subject identifier.',
    request: { params: IdParams },
    response: zipDownload('The images of the subject'),
    handle: (input) =>
      answerDownload(input, {
        selector: { subjectRefs: [input.params.id] },
        content,
        name: ['subject', input.params.id],
      }),
  }),
];
