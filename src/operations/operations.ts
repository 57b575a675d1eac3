import { CountSchema, z } from '../schemas/common.js';
import { IdQuery, UuidQuery } from '../schemas/biometric-data.js';
import {
  CheckImageRequest,
  ChecksFromImage,
  CreateOperationRequest,
  DeleteOperationsRequest,
  Operation,
  OperationsCountQuery,
  OperationsQuery,
  RemoteVerifyRequest,
  RemoteVerifyResult,
} from '../schemas/operations.js';
import { DeletedCount } from '../schemas/primitives.js';
import { deleteOperation, deleteOperations } from '../services/operation-log/delete.js';
import { countOperations, listOperations, operationById, operationByUuid } from '../services/operation-log/query.js';
import { ownerOf } from '../services/ownership.js';
import { handleRemoteVerify } from './template-handlers.js';
import { defineOperation } from './types.js';
import { checkImageForm, operationForm } from './sample-forms.js';
import { checkImage, createOperation } from '../services/operation-log/create.js';
import { extractionProblems, licenceProblems } from './extraction-problems.js';

const area = 'Operations';
const adminRoot = ['admin', 'root'] as const;
const all = ['admin', 'root', 'user'] as const;

/** Seed section 4.10: biometric operations (verify, identify, check, remote verify) and their log. */
export const operationOperations = [
  defineOperation({
    id: 'createOperation',
    method: 'post',
    path: '/operations/create',
    surfaces: adminRoot,
    area,
    licensed: true,
    problems: { ...extractionProblems, ...licenceProblems },
    summary: 'Creates an operation and stores it',
    description:
      'VERIFY (1:1 against a subject), IDENTIFY (1:N over the enrolled gallery) or CHECK (quality and liveness only; stores no template).',
    request: { body: CreateOperationRequest, form: operationForm },
    status: 201,
    response: { description: 'The recorded operation', schema: Operation },
    handle: ({ services, body, fields, principal, surface }) =>
      createOperation(services, body, { principal, surface, fields }),
  }),
  defineOperation({
    id: 'checkImage',
    method: 'post',
    path: '/operations/checkimage',
    surfaces: adminRoot,
    area,
    problems: extractionProblems,
    summary: 'Performs checks on an image',
    request: { body: CheckImageRequest, form: checkImageForm },
    response: { description: 'The checks of the image', schema: ChecksFromImage },
    handle: ({ services, body }) => checkImage(services, body),
  }),
  defineOperation({
    id: 'getLog',
    method: 'get',
    path: '/operations',
    surfaces: adminRoot,
    area,
    summary: 'Log of operations by a custom filter',
    description:
      'Newest first unless `sort` says otherwise; operations without the sorted value (no score, no subject) come last.',
    request: { query: OperationsQuery },
    response: { description: 'A page of operations', schema: z.array(Operation) },
    handle: ({ services, query }) => listOperations(services.ctx, query),
  }),
  defineOperation({
    id: 'getLogCount',
    method: 'get',
    path: '/operations/count',
    surfaces: adminRoot,
    area,
    summary: 'Counts operations by a filter',
    request: { query: OperationsCountQuery },
    response: { description: 'How many operations match', schema: CountSchema },
    handle: ({ services, query }) => countOperations(services.ctx, query),
  }),
  defineOperation({
    id: 'getOperationById',
    method: 'get',
    path: '/operations/id/',
    surfaces: adminRoot,
    area,
    summary: 'Operation by identifier',
    request: { query: IdQuery },
    response: { description: 'The operation', schema: Operation },
    handle: ({ services, query }) => operationById(services.ctx, query.id),
  }),
  defineOperation({
    id: 'getOperationByUUID',
    method: 'get',
    path: '/operations/uuid/',
    surfaces: all,
    area,
    summary: 'Operation by UUID',
    description:
      "On the user surface, only the operations recorded for the calling account are found; another account's answers 404.",
    request: { query: UuidQuery },
    response: { description: 'The operation', schema: Operation },
    handle: ({ services, query, surface, principal }) =>
      operationByUuid(services.ctx, query.uuid, ownerOf({ surface, principal })),
  }),
  defineOperation({
    id: 'deleteOperation',
    method: 'delete',
    path: '/operations/uuid/',
    surfaces: adminRoot,
    area,
    problems: { 409: 'A stored subject depends on the operation' },
    summary: 'Deletes an operation by UUID',
    description:
      'With the probe images and samples stored under its UUID that belong to no subject. An operation holding the enrolment or samples of a stored subject is refused with 409 naming the subject (delete the subject instead).',
    request: { query: UuidQuery },
    response: { description: 'How many operations were deleted', schema: DeletedCount },
    handle: ({ services, query }) => deleteOperation(services.ctx, query.uuid),
  }),
  defineOperation({
    id: 'deleteOperations',
    method: 'delete',
    path: '/operations',
    surfaces: adminRoot,
    area,
    problems: { 409: 'A stored subject depends on one of the operations' },
    summary: 'Deletes operations by a list of UUIDs',
    description:
      'All or nothing: unknown UUIDs are one 404 naming them (`missing`); an operation a stored subject depends on is a 409, as for deleteOperation.',
    request: { body: DeleteOperationsRequest },
    response: { description: 'How many operations were deleted', schema: DeletedCount },
    handle: ({ services, body }) => deleteOperations(services.ctx, body.uuids),
  }),
  defineOperation({
    id: 'remoteVerify',
    method: 'post',
    path: '/operations/remote-verify',
    surfaces: all,
    area,
    problems: { 422: 'The template or encrypted template cannot be used (`reason` says why)' },
    summary:
      'Remotely verifies a face verification template together with an encrypted template created locally with the matcher SDK',
    description:
      'The device extracts a fresh template with the client SDK and sends it with the enrolled template the service encrypted for itself (JWE); the service decrypts, matches and records a REMOTE_VERIFY operation. No sample leaves the device. ' +
      'The encrypted template is bound to the enrolment that issued it and the probe must be a fresh capture; every refusal names its `reason` in the problem body and is recorded as a FAILED operation: ' +
      '400 for a malformed JWE or template; 404 SUBJECT_DELETED; 422 TEMPLATE_INVALID (foreign, tampered or unsigned), TEMPLATE_UNBOUND (older unbound format: fetch a new one), SUBJECT_MISMATCH (`subjectId`), ' +
      'SUBJECT_REENROLLED (the subjectId was deleted and enrolled again), SUBJECT_REJECTED, TEMPLATE_REEXTRACTED, TEMPLATE_EXPIRED (remoteVerify.encryptedTemplateTtlDays), TEMPLATE_VERSION_MISMATCH, PROBE_INVALID, ' +
      'PROBE_REPLAYED (the probe is a copy of a template the service holds or handed out for the subject, cosine >= 0.98). See docs/template-format.md.',
    request: { body: RemoteVerifyRequest },
    response: { description: 'The verification result', schema: RemoteVerifyResult },
    handle: handleRemoteVerify,
  }),
];
