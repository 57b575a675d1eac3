// Over 300 lines on purpose: the route table of the subject operations, declared once as data (one entry per
// operation of the interface document, each a few lines); the handlers it names live in the services.
import { toBase64 } from '../encoding/base64.js';
import { binary, CountSchema, z } from '../schemas/common.js';
import { IdParams, NumericIdsQuery, SubjectIdParams, UuidParams } from '../schemas/biometric-data.js';
import { DeletedCount } from '../schemas/primitives.js';
import {
  ClearDbQuery,
  ClearDbResult,
  DeleteSubjectQuery,
  DeleteSubjectsByUuidRequest,
  DeleteSubjectsRequest,
  SubjectIdListQuery,
  SubjectIdLowerParams,
  SubjectIdQuery,
  SubjectsCountQuery,
  SubjectsQuery,
  UserClearDbQuery,
} from '../schemas/subject-queries.js';
import {
  CreateSubjectRequest,
  EnrolledModalities,
  GetTemplateModalitiesRequest,
  MultimodalSubject,
  ReextractSubjectRequest,
  ReextractSubjectResult,
  Subject,
  SubjectId,
  SubjectQRCode,
  TemplateModalities,
} from '../schemas/subjects.js';
import { handleSubjectQrCode, handleTemplateModalities } from './template-handlers.js';
import { forOwnedSubject, subjectHandlers } from './subject-handlers.js';
import { defineOperation, type ReadHandling } from './types.js';
import { enrolmentForm } from './sample-forms.js';
import { enrolSubject } from '../services/enrolment/enrol.js';
import { reextractSubject } from '../services/reextract/reextract-subject.js';
import { extractionProblems, licenceProblems } from './extraction-problems.js';

const area = 'Subjects';
const adminRoot = ['admin', 'root'] as const;
const all = ['admin', 'root', 'user'] as const;

/** Seed section 4.11: subjects, their templates and modalities. */
/**
 * The subject reads, the hottest reads there are (docs/read-cost.md): reads that change nothing, answers presented
 * in their schema's shape.
 */
const subjectRead: ReadHandling = { checksAccountInStatement: true, presentedInShape: true };

export const subjectOperations = [
  defineOperation({
    id: 'createSubject',
    method: 'post',
    path: '/subjects/create',
    surfaces: all,
    area,
    licensed: true,
    problems: {
      ...extractionProblems,
      ...licenceProblems,
      409: 'A subject with that subjectId exists',
      422: 'The samples or template cannot be enrolled (the detail says why)',
    },
    summary: 'Creates a subject and stores it',
    description:
      'Extracts every sample (all or nothing), applies the quality gates, then deduplicates: a duplicate makes the subject REJECTED, a possible duplicate PENDING_ADJUDICATION with a pending case, otherwise ENROLLED. Records an ENROLL operation.',
    request: { body: CreateSubjectRequest, form: enrolmentForm },
    status: 201,
    response: { description: 'The new subject', schema: Subject },
    handle: ({ services, body, fields, principal, surface }) =>
      enrolSubject(services, body, { principal, surface, fields }),
  }),
  defineOperation({
    id: 'getSubjects',
    method: 'get',
    path: '/subjects',
    surfaces: adminRoot,
    area,
    summary: 'Subjects by a custom filter',
    request: { query: SubjectsQuery },
    response: { description: 'A page of subjects', schema: z.array(Subject) },
    read: subjectRead,
    handle: subjectHandlers.getSubjects,
  }),
  defineOperation({
    id: 'getSubjectsCount',
    method: 'get',
    path: '/subjects/count',
    surfaces: adminRoot,
    area,
    summary: 'Counts subjects by a filter',
    request: { query: SubjectsCountQuery },
    response: { description: 'How many subjects match', schema: CountSchema },
    handle: subjectHandlers.getSubjectsCount,
  }),
  defineOperation({
    id: 'getSubjectsIdList',
    method: 'get',
    path: '/subjects/id-list',
    surfaces: all,
    area,
    summary: 'List of subject identifiers',
    description: 'On the user surface, only the subjects the calling account enrolled (docs/user-surface.md).',
    request: { query: SubjectIdListQuery },
    response: { description: 'A page of subject identifiers', schema: z.array(SubjectId) },
    handle: subjectHandlers.getSubjectsIdList,
  }),
  defineOperation({
    id: 'getSubjectById',
    method: 'get',
    path: '/subjects/id/{id}',
    surfaces: adminRoot,
    area,
    summary: 'Subject by identifier',
    request: { params: IdParams },
    response: { description: 'The subject', schema: Subject },
    read: subjectRead,
    handle: subjectHandlers.getSubjectById,
  }),
  defineOperation({
    id: 'getSubjectBySubjectId',
    method: 'get',
    path: '/subjects/{subjectId}',
    surfaces: adminRoot,
    area,
    summary: 'Subject by subject identifier',
    request: { params: SubjectIdParams },
    response: { description: 'The subject', schema: Subject },
    read: subjectRead,
    handle: subjectHandlers.getSubjectBySubjectId,
  }),
  defineOperation({
    id: 'getSubjectByOperationId',
    method: 'get',
    path: '/subjects/operation/{uuid}',
    surfaces: all,
    area,
    summary: 'Subject by operation UUID',
    request: { params: UuidParams },
    response: { description: 'The subject the operation concerned', schema: Subject },
    read: subjectRead,
    handle: subjectHandlers.getSubjectByOperationId,
  }),
  defineOperation({
    id: 'getMultimodalSubjects',
    method: 'get',
    path: '/subjects/multimodal',
    surfaces: adminRoot,
    area,
    summary: 'Multimodal subjects by a custom filter',
    request: { query: SubjectsQuery },
    response: { description: 'A page of multimodal subjects', schema: z.array(MultimodalSubject) },
    read: subjectRead,
    handle: subjectHandlers.getMultimodalSubjects,
  }),
  defineOperation({
    id: 'getMultimodalSubjectById',
    method: 'get',
    path: '/subjects/multimodal/id/{id}',
    surfaces: adminRoot,
    area,
    summary: 'Multimodal subject by identifier',
    request: { params: IdParams },
    response: { description: 'The multimodal subject', schema: MultimodalSubject },
    read: subjectRead,
    handle: subjectHandlers.getMultimodalSubjectById,
  }),
  defineOperation({
    id: 'getMultimodalSubjectBySubjectId',
    method: 'get',
    path: '/subjects/multimodal/{subjectId}',
    surfaces: adminRoot,
    area,
    summary: 'Multimodal subject by subject identifier',
    request: { params: SubjectIdParams },
    response: { description: 'The multimodal subject', schema: MultimodalSubject },
    read: subjectRead,
    handle: subjectHandlers.getMultimodalSubjectBySubjectId,
  }),
  defineOperation({
    id: 'getMultimodalSubjectByOperationId',
    method: 'get',
    path: '/subjects/multimodal/operation/{uuid}',
    surfaces: all,
    area,
    summary: 'Multimodal subject by operation UUID',
    request: { params: UuidParams },
    response: { description: 'The multimodal subject the operation concerned', schema: MultimodalSubject },
    read: subjectRead,
    handle: subjectHandlers.getMultimodalSubjectByOperationId,
  }),
  defineOperation({
    id: 'getSubjectsEnrolledModalities',
    method: 'get',
    path: '/subjects/modality/types',
    surfaces: all,
    area,
    summary: 'Modalities to which the subject is already enrolled',
    request: { query: SubjectIdQuery },
    response: { description: 'The enrolled modalities', schema: EnrolledModalities },
    handle: subjectHandlers.getSubjectsEnrolledModalities,
  }),
  defineOperation({
    id: 'getSubjectsQRCodeBySubjectId',
    method: 'get',
    path: '/subjects/qrcode/{subjectid}',
    surfaces: all,
    area,
    summary: 'QR code of the subject template',
    description:
      "The subject's compact face template, signed by the service (Ed25519), as a QR code: PNG by default, SVG on Accept: image/svg+xml, SubjectQRCode on Accept: application/json (with a new encrypted template for remoteVerify). " +
      'Anyone who reads the code reads the clear template; with the qrcode.clearTemplate setting off, the code carries the encrypted template (the JWE text, payloadType ENCRYPTED_TEMPLATE) instead, usable with remoteVerify only. 404 when the subject or its face template does not exist. Codes are issued for ENROLLED subjects only: a REJECTED or PENDING_ADJUDICATION subject is a 409 whose `subjectStatus` names its status.',
    problems: {
      409: 'The subject is not ENROLLED (REJECTED or PENDING_ADJUDICATION): `subjectStatus` names its status',
    },
    request: { params: SubjectIdLowerParams },
    response: {
      description: 'The QR code',
      schema: SubjectQRCode,
      content: { 'image/png': binary, 'image/svg+xml': binary },
    },
    handle: forOwnedSubject(handleSubjectQrCode, ({ params }) => params.subjectid),
  }),
  defineOperation({
    id: 'getTemplateModalities',
    method: 'post',
    path: '/subjects/qrcode/modalities',
    surfaces: all,
    area,
    problems: { 422: 'The template cannot be read (`reason` says why)' },
    summary: 'Modality types contained in a template',
    description:
      'Takes a bare template, a signed QR payload, or an encrypted QR payload (the JWE text): 400 naming the field for bytes that are none of them, 422 for an encrypted template the service cannot vouch for.',
    request: { body: GetTemplateModalitiesRequest },
    response: { description: 'The modalities, template version and signature state', schema: TemplateModalities },
    handle: handleTemplateModalities,
  }),
  defineOperation({
    id: 'reextractSubject',
    method: 'post',
    path: '/subjects/reextract-subject',
    surfaces: all,
    area,
    problems: { ...extractionProblems, 422: 'The subject cannot be re-extracted as asked (the detail says why)' },
    summary: 'Re-extracts the template to the current template version',
    description:
      "With `subjectId`: recomputes every face template of the stored subject from its stored original images, and every voice template from its stored WAV originals (the subject's VOICE template becomes their average again), with the current models, in one transaction with a REEXTRACT operation (the gallery follows for an ENROLLED subject). A sample enrolled from a template has no image: it is kept when already of the current version, otherwise the request is refused with 422 naming it (`samplesWithoutImage`). With `template` and `faces`: the new samples must each match the old template (same template version only; another version is a 422, since models of different versions cannot be compared) and the new template is answered. Refusals are 422 with `operationUuid` and `operationStatus` (MATCH_NOT_FOUND, NO_FACE_DETECTED, FAILED...). New `voices` with a template: 422 naming `body.voices` (a template is proven with faces). The whole gallery is re-extracted by `npm run reextract`.",
    request: { body: ReextractSubjectRequest },
    response: { description: 'The REEXTRACT operation and its result', schema: ReextractSubjectResult },
    handle: async ({ services, body, principal, surface }) => {
      const result = await reextractSubject(services, body, { principal, surface });
      // The new template's bytes are written as base64 here, at the edge, as every sample arrives as bytes.
      return 'template' in result ? { ...result, template: toBase64(result.template) } : result;
    },
  }),
  defineOperation({
    id: 'downloadSubjectsInfoBulk',
    method: 'get',
    path: '/subjects/download',
    surfaces: adminRoot,
    area,
    summary: 'Downloads data of subjects from a list of identifiers',
    description:
      '`ids` are internal subject identifiers. Answers a `subjects.json` attachment: the subjects as `Subject` JSON with their sample descriptions, in the order asked (no image, audio or template bytes; the biometric data downloads serve those). Unknown identifiers: 404 naming all of them.',
    request: { query: NumericIdsQuery },
    response: {
      description: 'The subjects (Content-Disposition: attachment; filename="subjects.json")',
      schema: z.array(Subject),
    },
    handle: subjectHandlers.downloadSubjectsInfoBulk,
  }),
  defineOperation({
    id: 'deleteSubject',
    method: 'delete',
    path: '/subjects/id/',
    surfaces: adminRoot,
    area,
    summary: 'Deletes a subject with its operations and biometric data by subject identifier',
    description:
      'Names the subject by `subjectId`, or by its internal `id`. Removes, in one transaction, the subject, its samples, images and templates, its operations (those naming it, its enrolment, and those that stored its samples) with their unowned samples, and its open (pending or conflicted) adjudication cases as probe; solved cases stay as the audit. 404 when it does not exist.',
    request: { query: DeleteSubjectQuery },
    response: { description: 'How many subjects were deleted', schema: DeletedCount },
    handle: subjectHandlers.deleteSubject,
  }),
  defineOperation({
    id: 'deleteSubjects',
    method: 'delete',
    path: '/subjects',
    surfaces: adminRoot,
    area,
    summary: 'Deletes subjects by subject identifiers',
    description:
      'All or nothing: an unknown subjectId is a 404 naming every unknown one (`missing`), and nothing is deleted. Each subject goes as deleteSubject describes.',
    request: { body: DeleteSubjectsRequest },
    response: { description: 'How many subjects were deleted', schema: DeletedCount },
    handle: subjectHandlers.deleteSubjects,
  }),
  defineOperation({
    id: 'deleteSubjectsByUUID',
    method: 'delete',
    path: '/subjects/delete',
    surfaces: adminRoot,
    area,
    summary: 'Deletes subjects by operation UUID',
    description:
      'Deletes the subjects the given operations concern (their enrolment, samples, or the operation naming them), as deleteSubject describes. All or nothing: a UUID that concerns no subject is a 404 naming every such UUID (`missing`).',
    request: { body: DeleteSubjectsByUuidRequest },
    response: { description: 'How many subjects were deleted', schema: DeletedCount },
    handle: subjectHandlers.deleteSubjectsByUUID,
  }),
  defineOperation({
    id: 'clearDb',
    method: 'delete',
    path: '/subjects/clear-db',
    surfaces: all,
    area,
    summary: 'Clears all of the store, or only entries matching a prefix, depending on use',
    description:
      'Removes the subjects whose subjectId starts with `prefix` (matched literally), each as deleteSubject describes (operations, samples, images, templates, open adjudication cases); without a prefix (or an empty one), every subject, which the user surface refuses with a 400 naming `query.prefix`. On the user surface only the subjects the calling account enrolled are removed (docs/user-surface.md). Answers the rows removed per table.',
    request: { query: ClearDbQuery, queryOn: { user: UserClearDbQuery } },
    response: { description: 'How many subjects were removed, and the rows removed per table', schema: ClearDbResult },
    handle: subjectHandlers.clearDb,
  }),
];
