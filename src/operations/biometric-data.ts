import { z } from '../schemas/common.js';
import {
  BiometricFaceData, BiometricVoiceData, IdParams, IdQuery, ImageIdQuery, NumericIdsQuery, SubjectIdParams, SubjectIdsQuery, UuidParams, UuidQuery,
  UuidsQuery, zipDownload,
} from '../schemas/biometric-data.js';
import { defineOperation } from './types.js';

const area = 'Biometric data';
const admin = ['admin'] as const;
const all = ['admin', 'root', 'user'] as const;
const missing = 'the subjects and enrolment service (issue 4)';

/** Seed section 4.3: stored face and voice data, read by identifier or UUID and downloaded as ZIP files. */
export const biometricDataOperations = [
  defineOperation({
    id: 'getBiometricFaceDataById', method: 'get', path: '/biometric-data/face/id/', surfaces: admin, area,
    summary: 'Face data information by image identifier',
    request: { query: ImageIdQuery },
    response: { description: 'The face data found in that image', schema: BiometricFaceData },
    missing,
  }),
  defineOperation({
    id: 'getBiometricFaceDataByUUID', method: 'get', path: '/biometric-data/face/uuid/', surfaces: all, area,
    summary: 'Face data information by UUID',
    description: 'The face data an operation produced, in the order of its images.',
    request: { query: UuidQuery },
    response: { description: 'The face data of the operation', schema: z.array(BiometricFaceData) },
    missing,
  }),
  defineOperation({
    id: 'getBiometricVoiceDataById', method: 'get', path: '/biometric-data/voice/id/', surfaces: admin, area,
    summary: 'Voice information by identifier',
    request: { query: IdQuery },
    response: { description: 'The voice data', schema: BiometricVoiceData },
    missing,
  }),
  defineOperation({
    id: 'getBiometricVoiceDataByUUID', method: 'get', path: '/biometric-data/voice/uuid/', surfaces: all, area,
    summary: 'Voice information by UUID',
    description: 'The voice data an operation produced.',
    request: { query: UuidQuery },
    response: { description: 'The voice data of the operation', schema: z.array(BiometricVoiceData) },
    missing,
  }),
  defineOperation({
    id: 'downloadBiometricDataBulkByOperation', method: 'get', path: '/biometric-data/operation/download', surfaces: admin, area,
    summary: 'Downloads image data for several operation identifiers',
    request: { query: NumericIdsQuery },
    response: zipDownload('The images and face data of the operations'),
    missing,
  }),
  defineOperation({
    id: 'downloadBiometricDataBulkBySubjectIds', method: 'get', path: '/biometric-data/subjectids/download', surfaces: admin, area,
    summary: 'Downloads face data for several subject identifiers',
    description: '`ids` are subject identifiers (subjectId).',
    request: { query: SubjectIdsQuery },
    response: zipDownload('The face data of the subjects'),
    missing,
  }),
  defineOperation({
    id: 'downloadBiometricDataBulkByUUID', method: 'get', path: '/biometric-data/uuid/download', surfaces: admin, area,
    summary: 'Downloads face data for several operation identifiers',
    description: '`ids` are operation UUIDs.',
    request: { query: UuidsQuery },
    response: zipDownload('The face data of the operations'),
    missing,
  }),
  defineOperation({
    id: 'downloadBiometricDataBySubjectId', method: 'get', path: '/biometric-data/subjectid/{subjectId}/download', surfaces: admin, area,
    summary: 'Downloads face data of one subject',
    request: { params: SubjectIdParams },
    response: zipDownload('The face data of the subject'),
    missing,
  }),
  defineOperation({
    id: 'downloadBiometricDataByUUID', method: 'get', path: '/biometric-data/uuid/{uuid}/download', surfaces: admin, area,
    summary: 'Downloads face data of one operation',
    request: { params: UuidParams },
    response: zipDownload('The face data of the operation'),
    missing,
  }),
  defineOperation({
    id: 'downloadSubjectsBiometricDataById', method: 'get', path: '/biometric-data/subject/{id}/download', surfaces: admin, area,
    summary: 'Downloads biometric data of one subject',
    description: '`id` is the internal subject identifier; the ZIP holds face images and voice recordings.',
    request: { params: IdParams },
    response: zipDownload('The biometric data of the subject'),
    missing,
  }),
  defineOperation({
    id: 'downloadSubjectsBiometricFaceDataBulkById', method: 'get', path: '/biometric-data/subjects/download', surfaces: admin, area,
    summary: 'Downloads biometric data for several subject identifiers',
    description: '`ids` are internal subject identifiers.',
    request: { query: NumericIdsQuery },
    response: zipDownload('The biometric data of the subjects'),
    missing,
  }),
];
