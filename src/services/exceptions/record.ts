import { insertException } from '../../db/repositories/exceptions.js';
import type { ServiceContext } from '../context.js';

interface ExceptionScene {
  method?: string;
  path?: string;
  operationId?: string;
  accountId?: number | null;
  surface?: string;
}

/**
 * Store an unexpected failure in the exception log and return its id. Never throws: if the database itself
 * is what failed, the exception still goes to the process log with the same id. Messages are cut short so
 * a failure quoting its input cannot copy a whole template or image into the log.
 */
export async function recordException(ctx: ServiceContext, error: unknown, scene: ExceptionScene): Promise<string> {
  const id = crypto.randomUUID();
  const err = error instanceof Error ? error : new Error(String(error));
  const row = {
    id,
    timestamp: ctx.now(),
    type: err.name || 'Error',
    message: (err.message || '(no message)').slice(0, 2000),
    operation_id: scene.operationId ?? null,
    method: scene.method ?? null,
    path: scene.path ?? null,
    account_id: scene.accountId ?? null,
    surface: scene.surface ?? null,
    call_stack: (err.stack ?? '').slice(0, 20_000),
  };
  try {
    await insertException(ctx.db, row);
  } catch (storeError) {
    ctx.log.error('exception log unavailable', { exceptionId: id, reason: String(storeError) });
  }
  ctx.log.error('unhandled exception', {
    exceptionId: id,
    type: row.type,
    reason: row.message,
    path: row.path,
    operationId: row.operation_id,
  });
  return id;
}
