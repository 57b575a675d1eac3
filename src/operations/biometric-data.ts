import { z } from '../schemas/common.js';
import {
  BiometricFaceData,
  BiometricVoiceData,
  IdParams,
  IdQuery,
  ImageIdQuery,
  NumericIdsQuery,
  SubjectIdParams,
  SubjectIdsQuery,
  UuidParams,
  UuidQuery,
  UuidsQuery,
  zipDownload,
} from '../schemas/biometric-data.js';
import {
  getFaceDataByImageId,
  getFaceDataByUuid,
  getVoiceDataById,
  getVoiceDataByUuid,
} from '../services/biometric-data/info.js';
import { answerDownload } from './download-handlers.js';
import { defineOperation } from './types.js';
import { ownerOf } from '../services/ownership.js';
import { extractionProblems } from './extraction-problems.js';

const area = 'Biometric data';
const admin = ['admin'] as const;
const all = ['admin', 'root', 'user'] as const;
/** These downloads serve face images (originals, token images, crops) and voice recordings. */
const content = 'images-and-voice' as const;

/**
 * Seed section 4.3: stored face and voice data, read by identifier or UUID and downloaded as ZIP files.
 * Reads by id answer one sample or 404; reads by UUID answer every sample of that operation (404 when the
 * UUID names nothing). Template bytes are never part of any answer.
 */
export const biometricDataOperations = [
  defineOperation({
    id: 'getBiometricFaceDataById',
    method: 'get',
    path: '/biometric-data/face/id/',
    surfaces: admin,
    area,
    summary: 'Face data information by image identifier',
    request: { query: ImageIdQuery },
    response: { description: 'The face data found in that image', schema: BiometricFaceData },
    handle: ({ services, query }) => getFaceDataByImageId(services.ctx, query.id),
  }),
  defineOperation({
    id: 'getBiometricFaceDataByUUID',
    method: 'get',
    path: '/biometric-data/face/uuid/',
    surfaces: all,
    area,
    summary: 'Face data information by UUID',
    description:
      "The face data an operation produced, in the order of its images. On the user surface, only what the calling account owns: the samples of subjects it enrolled and of its own operations (404 for another account's operation).",
    request: { query: UuidQuery },
    response: { description: 'The face data of the operation', schema: z.array(BiometricFaceData) },
    handle: ({ services, query, surface, principal }) =>
      getFaceDataByUuid(services.ctx, query.uuid, ownerOf({ surface, principal })),
  }),
  defineOperation({
    id: 'getBiometricVoiceDataById',
    method: 'get',
    path: '/biometric-data/voice/id/',
    surfaces: admin,
    area,
    summary: 'Voice information by identifier',
    request: { query: IdQuery },
    response: { description: 'The voice data', schema: BiometricVoiceData },
    handle: ({ services, query }) => getVoiceDataById(services.ctx, query.id),
  }),
  defineOperation({
    id: 'getBiometricVoiceDataByUUID',
    method: 'get',
    path: '/biometric-data/voice/uuid/',
    surfaces: all,
    area,
    summary: 'Voice information by UUID',
    description:
      "The voice data an operation produced. On the user surface, only what the calling account owns: the samples of subjects it enrolled and of its own operations (404 for another account's operation).",
    request: { query: UuidQuery },
    response: { description: 'The voice data of the operation', schema: z.array(BiometricVoiceData) },
    handle: ({ services, query, surface, principal }) =>
      getVoiceDataByUuid(services.ctx, query.uuid, ownerOf({ surface, principal })),
  }),
  defineOperation({
    id: 'downloadBiometricDataBulkByOperation',
    method: 'get',
    path: '/biometric-data/operation/download',
    surfaces: admin,
    area,
    problems: extractionProblems,
    summary: 'Downloads image data for several operation identifiers',
    request: { query: NumericIdsQuery },
    response: zipDownload('The images and face data of the operations'),
    handle: (input) =>
      answerDownload(input, { selector: { operationIds: input.query.ids }, content, name: ['operations'] }),
  }),
  defineOperation({
    id: 'downloadBiometricDataBulkBySubjectIds',
    method: 'get',
    path: '/biometric-data/subjectids/download',
    surfaces: admin,
    area,
    problems: extractionProblems,
    summary: 'Downloads face data for several subject identifiers',
    description: '`ids` are subject identifiers (subjectId).',
    request: { query: SubjectIdsQuery },
    response: zipDownload('The face data of the subjects'),
    handle: (input) =>
      answerDownload(input, { selector: { subjectIds: input.query.ids }, content, name: ['subjects'] }),
  }),
  defineOperation({
    id: 'downloadBiometricDataBulkByUUID',
    method: 'get',
    path: '/biometric-data/uuid/download',
    surfaces: admin,
    area,
    problems: extractionProblems,
    summary: 'Downloads face data for several operation identifiers',
    description: '`ids` are operation UUIDs.',
    request: { query: UuidsQuery },
    response: zipDownload('The face data of the operations'),
    handle: (input) =>
      answerDownload(input, { selector: { operationUuids: input.query.ids }, content, name: ['operations'] }),
  }),
  defineOperation({
    id: 'downloadBiometricDataBySubjectId',
    method: 'get',
    path: '/biometric-data/subjectid/{subjectId}/download',
    surfaces: admin,
    area,
    problems: extractionProblems,
    summary: 'Downloads face data of one subject',
    request: { params: SubjectIdParams },
    response: zipDownload('The face data of the subject'),
    handle: (input) =>
      answerDownload(input, {
        selector: { subjectIds: [input.params.subjectId] },
        content,
        name: ['subject', input.params.subjectId],
      }),
  }),
  defineOperation({
    id: 'downloadBiometricDataByUUID',
    method: 'get',
    path: '/biometric-data/uuid/{uuid}/download',
    surfaces: admin,
    area,
    problems: extractionProblems,
    summary: 'Downloads face data of one operation',
    request: { params: UuidParams },
    response: zipDownload('The face data of the operation'),
    handle: (input) =>
      answerDownload(input, {
        selector: { operationUuids: [input.params.uuid] },
        content,
        name: ['operation', input.params.uuid],
      }),
  }),
  defineOperation({
    id: 'downloadSubjectsBiometricDataById',
    method: 'get',
    path: '/biometric-data/subject/{id}/download',
    surfaces: admin,
    area,
    problems: extractionProblems,
    summary: 'Downloads biometric data of one subject',
    description: '`id` is the internal subject identifier; the ZIP holds face images and voice recordings.',
    request: { params: IdParams },
    response: zipDownload('The biometric data of the subject'),
    handle: (input) =>
      answerDownload(input, {
        selector: { subjectRefs: [input.params.id] },
        content,
        name: ['subject', input.params.id],
      }),
  }),
  defineOperation({
    id: 'downloadSubjectsBiometricFaceDataBulkById',
    method: 'get',
    path: '/biometric-data/subjects/download',
    surfaces: admin,
    area,
    problems: extractionProblems,
    summary: 'Downloads biometric data for several subject identifiers',
    description: '`ids` are internal subject identifiers.',
    request: { query: NumericIdsQuery },
    response: zipDownload('The biometric data of the subjects'),
    handle: (input) =>
      answerDownload(input, { selector: { subjectRefs: input.query.ids }, content, name: ['subjects'] }),
  }),
];
