import { binary, CountSchema, z } from '../schemas/common.js';
import { IdParams, NumericIdsQuery, SubjectIdParams, UuidParams, zipDownload } from '../schemas/biometric-data.js';
import { DeletedCount } from '../schemas/primitives.js';
import {
  ClearDbQuery, CreateSubjectRequest, DeleteSubjectQuery, DeleteSubjectsByUuidRequest, DeleteSubjectsRequest, EnrolledModalities,
  GetTemplateModalitiesRequest, MultimodalSubject, ReextractSubjectRequest, ReextractSubjectResult, Subject, SubjectId, SubjectIdListQuery,
  SubjectIdLowerParams, SubjectIdQuery, SubjectQRCode, SubjectsCountQuery, SubjectsQuery, TemplateModalities,
} from '../schemas/subjects.js';
import { defineOperation } from './types.js';

const area = 'Subjects';
const adminRoot = ['admin', 'root'] as const;
const all = ['admin', 'root', 'user'] as const;
const missing = 'the subjects and enrolment service (issue 4)';

/** Seed section 4.11: subjects, their templates and modalities. */
export const subjectOperations = [
  defineOperation({
    id: 'createSubject', method: 'post', path: '/subjects/create', surfaces: all, area,
    summary: 'Creates a subject and stores it',
    description:
      'Extracts every sample (all or nothing), applies the quality gates, then deduplicates: a duplicate makes the subject REJECTED, a possible duplicate PENDING_ADJUDICATION with a pending case, otherwise ENROLLED. Records an ENROLL operation.',
    request: { body: CreateSubjectRequest },
    status: 201,
    response: { description: 'The new subject', schema: Subject },
    missing,
  }),
  defineOperation({
    id: 'getSubjects', method: 'get', path: '/subjects', surfaces: adminRoot, area,
    summary: 'Subjects by a custom filter',
    request: { query: SubjectsQuery },
    response: { description: 'A page of subjects', schema: z.array(Subject) },
    missing,
  }),
  defineOperation({
    id: 'getSubjectsCount', method: 'get', path: '/subjects/count', surfaces: adminRoot, area,
    summary: 'Counts subjects by a filter',
    request: { query: SubjectsCountQuery },
    response: { description: 'How many subjects match', schema: CountSchema },
    missing,
  }),
  defineOperation({
    id: 'getSubjectsIdList', method: 'get', path: '/subjects/id-list', surfaces: all, area,
    summary: 'List of subject identifiers',
    request: { query: SubjectIdListQuery },
    response: { description: 'A page of subject identifiers', schema: z.array(SubjectId) },
    missing,
  }),
  defineOperation({
    id: 'getSubjectById', method: 'get', path: '/subjects/id/{id}', surfaces: adminRoot, area,
    summary: 'Subject by identifier',
    request: { params: IdParams },
    response: { description: 'The subject', schema: Subject },
    missing,
  }),
  defineOperation({
    id: 'getSubjectBySubjectId', method: 'get', path: '/subjects/{subjectId}', surfaces: adminRoot, area,
    summary: 'Subject by subject identifier',
    request: { params: SubjectIdParams },
    response: { description: 'The subject', schema: Subject },
    missing,
  }),
  defineOperation({
    id: 'getSubjectByOperationId', method: 'get', path: '/subjects/operation/{uuid}', surfaces: all, area,
    summary: 'Subject by operation UUID',
    request: { params: UuidParams },
    response: { description: 'The subject the operation concerned', schema: Subject },
    missing,
  }),
  defineOperation({
    id: 'getMultimodalSubjects', method: 'get', path: '/subjects/multimodal', surfaces: adminRoot, area,
    summary: 'Multimodal subjects by a custom filter',
    request: { query: SubjectsQuery },
    response: { description: 'A page of multimodal subjects', schema: z.array(MultimodalSubject) },
    missing,
  }),
  defineOperation({
    id: 'getMultimodalSubjectById', method: 'get', path: '/subjects/multimodal/id/{id}', surfaces: adminRoot, area,
    summary: 'Multimodal subject by identifier',
    request: { params: IdParams },
    response: { description: 'The multimodal subject', schema: MultimodalSubject },
    missing,
  }),
  defineOperation({
    id: 'getMultimodalSubjectBySubjectId', method: 'get', path: '/subjects/multimodal/{subjectId}', surfaces: adminRoot, area,
    summary: 'Multimodal subject by subject identifier',
    request: { params: SubjectIdParams },
    response: { description: 'The multimodal subject', schema: MultimodalSubject },
    missing,
  }),
  defineOperation({
    id: 'getMultimodalSubjectByOperationId', method: 'get', path: '/subjects/multimodal/operation/{uuid}', surfaces: all, area,
    summary: 'Multimodal subject by operation UUID',
    request: { params: UuidParams },
    response: { description: 'The multimodal subject the operation concerned', schema: MultimodalSubject },
    missing,
  }),
  defineOperation({
    id: 'getSubjectsEnrolledModalities', method: 'get', path: '/subjects/modality/types', surfaces: all, area,
    summary: 'Modalities to which the subject is already enrolled',
    request: { query: SubjectIdQuery },
    response: { description: 'The enrolled modalities', schema: EnrolledModalities },
    missing,
  }),
  defineOperation({
    id: 'getSubjectsQRCodeBySubjectId', method: 'get', path: '/subjects/qrcode/{subjectid}', surfaces: all, area,
    summary: 'QR code of the subject template',
    description:
      "The subject's compact face template, signed by the service (Ed25519), as a QR code: PNG by default, SVG on Accept: image/svg+xml, SubjectQRCode on Accept: application/json.",
    request: { params: SubjectIdLowerParams },
    response: { description: 'The QR code', schema: SubjectQRCode, content: { 'image/png': binary, 'image/svg+xml': binary } },
    missing,
  }),
  defineOperation({
    id: 'getTemplateModalities', method: 'post', path: '/subjects/qrcode/modalities', surfaces: all, area,
    summary: 'Modality types contained in a template',
    request: { body: GetTemplateModalitiesRequest },
    response: { description: 'The modalities, template version and signature state', schema: TemplateModalities },
    missing,
  }),
  defineOperation({
    id: 'reextractSubject', method: 'post', path: '/subjects/reextract-subject', surfaces: all, area,
    summary: 'Re-extracts the template to the current template version',
    request: { body: ReextractSubjectRequest },
    response: { description: 'The REEXTRACT operation and its result', schema: ReextractSubjectResult },
    missing,
  }),
  defineOperation({
    id: 'downloadSubjectsInfoBulk', method: 'get', path: '/subjects/download', surfaces: adminRoot, area,
    summary: 'Downloads data of subjects from a list of identifiers',
    description: '`ids` are internal subject identifiers; the ZIP holds each subject as JSON with its samples.',
    request: { query: NumericIdsQuery },
    response: zipDownload('The subjects'),
    missing,
  }),
  defineOperation({
    id: 'deleteSubject', method: 'delete', path: '/subjects/id/', surfaces: adminRoot, area,
    summary: 'Deletes a subject with its operations and biometric data by subject identifier',
    description: 'Names the subject by `subjectId`, or by its internal `id`.',
    request: { query: DeleteSubjectQuery },
    response: { description: 'How many subjects were deleted', schema: DeletedCount },
    missing,
  }),
  defineOperation({
    id: 'deleteSubjects', method: 'delete', path: '/subjects', surfaces: adminRoot, area,
    summary: 'Deletes subjects by subject identifiers',
    request: { body: DeleteSubjectsRequest },
    response: { description: 'How many subjects were deleted', schema: DeletedCount },
    missing,
  }),
  defineOperation({
    id: 'deleteSubjectsByUUID', method: 'delete', path: '/subjects/delete', surfaces: adminRoot, area,
    summary: 'Deletes subjects by operation UUID',
    description: 'Deletes the subjects the given operations concern.',
    request: { body: DeleteSubjectsByUuidRequest },
    response: { description: 'How many subjects were deleted', schema: DeletedCount },
    missing,
  }),
  defineOperation({
    id: 'clearDb', method: 'delete', path: '/subjects/clear-db', surfaces: all, area,
    summary: 'Clears all of the store, or only entries matching a prefix, depending on use',
    description:
      'Removes the subjects (with their operations, images and templates) whose subjectId starts with `prefix`; without a prefix, all of them, which the user surface refuses.',
    request: { query: ClearDbQuery },
    response: { description: 'How many subjects were removed', schema: DeletedCount },
    missing,
  }),
];
