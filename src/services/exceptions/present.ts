import { sql } from 'kysely';
import type { z } from 'zod';
import type { ExceptionRow } from '../../db/tables.js';
import { SURFACES, type Surface } from '../../auth/roles.js';
import type { ExceptionModel, ExceptionRecord } from '../../schemas/exceptions.js';

const surfaces: readonly string[] = SURFACES;

/**
 * The columns of an exception row as the presenters read them. The timestamp is clamped by the database into
 * the range the API accepts (1970-01-01 to 9999-12-31, see DATE_RANGE in schemas/common.ts) before any driver
 * parses it: a row written before that rule (year 1 BC, `infinity`, year 50) would otherwise parse as an
 * invalid or century-shifted date, fail the list with a 500 and cut an export that had already answered 200.
 */
export const exceptionColumns = [
  'id', 'type', 'message', 'operation_id', 'method', 'path', 'account_id', 'surface', 'call_stack',
  sql<Date>`greatest(least("timestamp", timestamptz '9999-12-31 23:59:59.999+00'), timestamptz '1970-01-01 00:00:00+00')`.as('timestamp'),
] as const;

/** An exception as the log shows it: no call stack, optional fields left out when empty. */
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
