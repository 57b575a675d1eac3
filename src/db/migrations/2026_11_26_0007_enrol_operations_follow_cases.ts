import { sql, type Kysely } from 'kysely';

/**
 * ENROLL operations whose adjudication ended before the service made them follow it (services/adjudication/
 * enrol-operation.ts) still say PENDING_ADJUDICATION. The probe subject's status is the outcome (its case
 * may have been deleted or cleared since), so it decides: ENROLLED -> SUCCESS, REJECTED -> DUPLICATE_FOUND;
 * a probe deleted since is decided by its solved case. Operations of cases still pending keep waiting.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    update operations set status = case s.status when 'ENROLLED' then 'SUCCESS' else 'DUPLICATE_FOUND' end
    from subjects s
    where s.enrollment_operation_uuid = operations.uuid and s.status in ('ENROLLED', 'REJECTED')
      and operations.type = 'ENROLL' and operations.status = 'PENDING_ADJUDICATION'`.execute(db);
  await sql`
    update operations set status = case c.outcome when 'NOT_DUPLICATE' then 'SUCCESS' else 'DUPLICATE_FOUND' end
    from adjudication_cases c
    where c.operation_uuid = operations.uuid and c.status = 'SOLVED'
      and operations.type = 'ENROLL' and operations.status = 'PENDING_ADJUDICATION'`.execute(db);
}

/** Nothing to undo: the old rule kept a status that had stopped being true, and cannot be told apart now. */
export async function down(): Promise<void> {}
