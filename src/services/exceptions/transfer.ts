import type { z } from 'zod';
import { clampedInstant } from '../../schemas/common.js';
import type { ExceptionImportRequest } from '../../schemas/exceptions.js';
import type { ServiceContext } from '../context.js';
import {
  deleteAllExceptions,
  findExceptionsByIds,
  insertExceptionsSkippingKnown,
  listExceptionIdsOldestFirst,
} from '../../db/repositories/exceptions.js';
import { exportException } from './present.js';

/** Rows per INSERT: ten columns each stays far below PostgreSQL's 65535 bind parameters. */
const BATCH = 500;

/**
 * Every recorded exception with its call stack, oldest first, as a JSON array streamed in batches: call stacks
 * make records large, so the export never holds the whole log in memory. The ids are read up front (so a
 * database failure is still a proper 500, and the order is fixed); records removed meanwhile are left out.
 * The result is exactly what `importExceptionList` reads back.
 */
export async function exportExceptions(ctx: ServiceContext): Promise<ReadableStream<Uint8Array>> {
  const ids = await listExceptionIdsOldestFirst(ctx.db);
  const encoder = new TextEncoder();
  let next = 0;
  let written = 0;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(encoder.encode('['));
    },
    async pull(controller) {
      try {
        if (next >= ids.length) {
          controller.enqueue(encoder.encode(']'));
          controller.close();
          return;
        }
        const slice = ids.slice(next, next + BATCH);
        next += BATCH;
        const rows = new Map((await findExceptionsByIds(ctx.db, slice)).map((r) => [r.id, r]));
        const parts: string[] = [];
        for (const id of slice) {
          const row = rows.get(id);
          if (row) parts.push((written++ ? ',' : '') + JSON.stringify(exportException(row)));
        }
        if (parts.length) controller.enqueue(encoder.encode(parts.join('')));
      } catch (error) {
        ctx.log.error('exception export failed midway', { reason: String(error) });
        controller.error(error);
      }
    },
  });
}

/**
 * Import an exported list. The HTTP layer has already validated every record, so nothing is written unless
 * all are valid; the writes share one transaction, so a failure leaves nothing behind either. Records whose id
 * is already present are skipped, which makes importing the same file twice a no-op.
 */
export async function importExceptions(ctx: ServiceContext, records: z.output<typeof ExceptionImportRequest>) {
  let imported = 0;
  await ctx.db.transaction().execute(async (trx) => {
    for (let i = 0; i < records.length; i += BATCH) {
      const values = records.slice(i, i + BATCH).map((r) => ({
        id: r.id,
        timestamp: clampedInstant(r.timestamp),
        type: r.type,
        message: r.message,
        operation_id: r.operationId ?? null,
        method: r.method,
        path: r.path,
        account_id: r.accountId ?? null,
        surface: r.surface,
        call_stack: r.callStack,
      }));
      imported += (await insertExceptionsSkippingKnown(trx, values)).length;
    }
  });
  ctx.log.info('exceptions imported', { imported, skipped: records.length - imported });
  return { imported, skipped: records.length - imported };
}

/** Empty the exception log; answers how many records went. */
export async function clearExceptions(ctx: ServiceContext) {
  const removed = await deleteAllExceptions(ctx.db);
  ctx.log.info('exception log cleared', { removed });
  return { removed };
}
