import { dbId, isoDateTime, pagingQuery, queryDate, z } from './common.js';

const surface = z.enum(['admin', 'root', 'user']);
const exceptionId = z.string().min(1, 'must not be empty').max(128, 'must be at most 128 characters');

const exceptionFields = {
  id: exceptionId,
  timestamp: z.string().openapi({ format: 'date-time' }),
  type: z.string().openapi({ description: 'The error class, e.g. TypeError' }),
  message: z.string(),
  operationId: z.string().optional().openapi({ description: 'The seed operation being served, when there was one' }),
  // Failures outside a request (start-up, background jobs) have no method, path or surface.
  method: z.string().nullable(),
  path: z.string().nullable(),
  accountId: z.number().int().optional(),
  surface: surface.nullable(),
};

/** One recorded unexpected failure, without its call stack (seed model, A R). */
export const ExceptionModel = z.object(exceptionFields).openapi('ExceptionModel');

/** The call stack of one exception, served apart from the record so lists stay small. */
export const ExceptionCallStack = z.object({ id: z.string(), callStack: z.string() }).openapi('ExceptionCallStack');

/**
 * A full record as `getAllExceptions` exports it and `importExceptionList` takes it back. Import validates
 * every field, so the timestamp must be a real ISO 8601 instant and the surface one of the three.
 */
export const ExceptionRecord = z
  .strictObject({
    ...exceptionFields,
    timestamp: isoDateTime,
    // Limits no larger than what the recorder can store (it cuts messages at 2000 and stacks at 20000, and
    // takes paths as they came), so every export can be imported back.
    type: z.string().min(1).max(1000),
    message: z.string().max(2000),
    operationId: z.string().max(200).nullish(),
    method: z.string().max(32).nullable(),
    path: z.string().max(65_536).nullable(),
    accountId: dbId.nullish(),
    callStack: z.string().max(20_000),
  })
  .openapi('ExceptionRecord');

/** The import body: exactly what the export produced. */
export const ExceptionImportRequest = z.array(ExceptionRecord).max(100_000, 'must hold at most 100000 records');

export const ExceptionImportResult = z
  .object({
    imported: z.number().int().openapi({ description: 'Records written' }),
    skipped: z
      .number()
      .int()
      .openapi({ description: 'Records whose id was already present (import is idempotent by id)' }),
  })
  .openapi('ExceptionImportResult');

export const ExceptionClearResult = z.object({ removed: z.number().int() }).openapi('ExceptionClearResult');

const exceptionFilter = {
  type: z.string().min(1).max(200).optional().openapi({ description: 'Exact error class' }),
  operationId: z.string().min(1).max(200).optional(),
  path: z.string().min(1).max(2048).optional().openapi({ description: 'Request path prefix' }),
  surface: surface.optional(),
  from: queryDate
    .optional()
    .openapi({ description: 'Earliest timestamp, inclusive; not later than to (a 400 naming from otherwise)' }),
  to: queryDate.optional().openapi({ description: 'Latest timestamp, exclusive' }),
};
const exceptionSortFields = ['timestamp', 'type', 'operationId', 'path', 'surface'] as const;
export const ExceptionsQuery = z.strictObject({ ...exceptionFilter, ...pagingQuery(exceptionSortFields) });
export const ExceptionsCountQuery = z.strictObject(exceptionFilter);
export const ExceptionIdQuery = z.strictObject({ id: exceptionId });
