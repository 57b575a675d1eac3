import type { z } from 'zod';
import type { ExceptionRow } from '../../db/tables.js';
import { SURFACES, type Surface } from '../../auth/roles.js';
import type { ExceptionModel, ExceptionRecord } from '../../schemas/exceptions.js';

const surfaces: readonly string[] = SURFACES;

/**
 * An exception as the log shows it: no call stack, optional fields left out when empty. The repository has
 * already clamped the timestamp into the range the API accepts (src/db/repositories/exceptions.ts).
 */
export function presentException(row: ExceptionRow): z.output<typeof ExceptionModel> {
  return {
    id: row.id,
    timestamp: new Date(row.timestamp).toISOString(),
    type: row.type,
    message: row.message,
    ...(row.operation_id !== null ? { operationId: row.operation_id } : {}),
    method: row.method,
    path: row.path,
    ...(row.account_id !== null ? { accountId: row.account_id } : {}),
    // A surface the log does not know (a row written by an older version) reads as none rather than failing.
    surface: row.surface !== null && surfaces.includes(row.surface) ? (row.surface as Surface) : null,
  };
}

/** The full record, call stack included, in the form the export writes and the import reads back. */
export function exportException(row: ExceptionRow): z.output<typeof ExceptionRecord> {
  return { ...presentException(row), callStack: row.call_stack };
}
