import { CountSchema, z } from '../schemas/common.js';
import {
  ExceptionCallStack,
  ExceptionClearResult,
  ExceptionIdQuery,
  ExceptionImportRequest,
  ExceptionImportResult,
  ExceptionModel,
  ExceptionRecord,
  ExceptionsCountQuery,
  ExceptionsQuery,
} from '../schemas/exceptions.js';
import { countExceptions, getException, getExceptionCallStack, listExceptions } from '../services/exceptions/query.js';
import { clearExceptions, exportExceptions, importExceptions } from '../services/exceptions/transfer.js';
import { defineOperation, streamedJson } from './types.js';

const area = 'Exceptions';
// The root surface has these without a prefix, and requiredRole() demands ADMIN there: call stacks and the
// ability to clear the log are for administrators only.
const adminAndRoot = ['admin', 'root'] as const;

/** Seed section 4.5: the exception log, on the admin and root surfaces. */
export const exceptionOperations = [
  defineOperation({
    id: 'getExceptionLog',
    method: 'get',
    path: '/exceptions',
    surfaces: adminAndRoot,
    area,
    summary: 'Log of exceptions by a custom filter',
    description:
      'Filters: type (exact), operationId, path (prefix), surface, from/to (timestamp range). Newest first unless sorted.',
    request: { query: ExceptionsQuery },
    response: { description: 'A page of exceptions, without call stacks', schema: z.array(ExceptionModel) },
    handle: ({ services, query }) => listExceptions(services.ctx, query),
  }),
  defineOperation({
    id: 'getExceptionLogCount',
    method: 'get',
    path: '/exceptions/count',
    surfaces: adminAndRoot,
    area,
    summary: 'Count of exceptions by a custom filter',
    request: { query: ExceptionsCountQuery },
    response: { description: 'How many exceptions match', schema: CountSchema },
    handle: ({ services, query }) => countExceptions(services.ctx, query),
  }),
  defineOperation({
    id: 'getExceptionById',
    method: 'get',
    path: '/exceptions/id',
    surfaces: adminAndRoot,
    area,
    summary: 'One exception by identifier',
    request: { query: ExceptionIdQuery },
    response: { description: 'The exception, without its call stack', schema: ExceptionModel },
    handle: ({ services, query }) => getException(services.ctx, query.id),
  }),
  defineOperation({
    id: 'getExceptionsCallstackById',
    method: 'get',
    path: '/exceptions/callstack',
    surfaces: adminAndRoot,
    area,
    summary: 'Call stack of an exception by identifier',
    request: { query: ExceptionIdQuery },
    response: { description: 'The call stack', schema: ExceptionCallStack },
    handle: ({ services, query }) => getExceptionCallStack(services.ctx, query.id),
  }),
  defineOperation({
    id: 'getAllExceptions',
    method: 'get',
    path: '/exceptions/export',
    surfaces: adminAndRoot,
    area,
    summary: 'All exceptions',
    description:
      'A download (exceptions.json): every record with its call stack, oldest first; importExceptionList takes it back.',
    response: { description: 'Every exception, as a JSON file', schema: z.array(ExceptionRecord) },
    handle: async ({ services }) =>
      // exportException, which encodes each record, is typed as the schema's record.
      streamedJson<z.input<typeof ExceptionRecord>[]>(await exportExceptions(services.ctx), {
        'Content-Disposition': 'attachment; filename="exceptions.json"',
      }),
  }),
  defineOperation({
    id: 'importExceptionList',
    method: 'post',
    path: '/exceptions/import',
    surfaces: adminAndRoot,
    area,
    summary: 'Imports an exception list',
    description:
      'Takes what getAllExceptions produced. Every record is validated first (all or nothing); ids already present are skipped.',
    request: { body: ExceptionImportRequest },
    response: { description: 'How many records were imported and skipped', schema: ExceptionImportResult },
    handle: ({ services, body }) => importExceptions(services.ctx, body),
  }),
  defineOperation({
    id: 'clearExceptionDb',
    method: 'delete',
    path: '/exceptions/clear-db',
    surfaces: adminAndRoot,
    area,
    summary: 'Clears all recorded exceptions',
    response: { description: 'How many exceptions were removed', schema: ExceptionClearResult },
    handle: ({ services }) => clearExceptions(services.ctx),
  }),
];
