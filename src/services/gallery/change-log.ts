import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/tables.js';
import { json } from '../../db/json.js';

/**
 * The gallery change log (table `gallery_changes`): how a node that cannot LISTEN (Cloudflare Workers) learns
 * what other nodes changed, and how a listening node catches up after losing its connection. Rows are written
 * inside the transaction that changes the gallery, so a change is logged if and only if it commits.
 */

export type ChangeKind = 'put' | 'remove' | 'reset' | 'pruned';

export interface LoggedChange {
  id: number;
  kind: ChangeKind;
  subjectRefs: number[];
}

/** How long rows are kept; a node that has not caught up for longer reloads its whole gallery. */
export const CHANGE_RETENTION_MS = 7 * 24 * 3600 * 1000;

/**
 * Append a change inside the changing transaction (call it last, just before the commit).
 *
 * Readers ask for "every row after the highest id I have applied", which is only sound if ids become visible
 * in id order. A bigserial alone does not give that: a transaction can draw id 10, another id 11 and commit
 * first, and a reader that sees 11 and remembers it would never see 10. So writers take a lock that conflicts
 * with itself (SHARE ROW EXCLUSIVE; plain reads are not blocked) before drawing the id and keep it until
 * their commit: the next writer draws its id only after the previous one is visible, and a reader that sees
 * id n sees every committed id below n. The lock serialises only the tail of gallery-changing transactions
 * (one insert and the commit).
 */
export async function recordChange(trx: Kysely<Database>, kind: Exclude<ChangeKind, 'pruned'>, subjectRefs: number[] = []): Promise<number> {
  await sql`lock table gallery_changes in share row exclusive mode`.execute(trx);
  const row = await trx.insertInto('gallery_changes').values({ kind, subject_refs: json(subjectRefs) }).returning('id').executeTakeFirstOrThrow();
  return Number(row.id);
}

/** The highest id committed so far (0 for an empty log): everything at or below it is visible to later reads. */
export async function latestChangeId(db: Kysely<Database>): Promise<number> {
  const row = await db.selectFrom('gallery_changes').select((eb) => eb.fn.max('id').as('id')).executeTakeFirst();
  return Number(row?.id ?? 0);
}

/** Up to `limit` changes after id `after`, oldest first (one primary-key range scan). */
export async function changesAfter(db: Kysely<Database>, after: number, limit: number): Promise<LoggedChange[]> {
  const rows = await db.selectFrom('gallery_changes').select(['id', 'kind', 'subject_refs']).where('id', '>', after).orderBy('id').limit(limit).execute();
  return rows.map((r) => ({
    id: Number(r.id),
    kind: r.kind,
    subjectRefs: (typeof r.subject_refs === 'string' ? JSON.parse(r.subject_refs) : r.subject_refs) as number[],
  }));
}

/**
 * Drop the rows older than `retentionMs` (by the database clock). The newest of them is not deleted but turned
 * into a `pruned` marker: every row before it is gone, so a node whose last applied id is below the marker
 * reads the marker as its next change and reloads, while a node already past it never sees it. Concurrent
 * prunes are harmless (at worst two markers). Returns the number of rows deleted.
 */
export async function pruneChanges(db: Kysely<Database>, retentionMs: number = CHANGE_RETENTION_MS): Promise<number> {
  const { rows } = await sql<{ deleted: number }>`
    with horizon as (
      select id from gallery_changes where created_at < now() - ${retentionMs} * interval '1 millisecond'
      order by created_at desc, id desc limit 1
    ), gone as (
      delete from gallery_changes where id < (select id from horizon) returning 1
    ), marked as (
      update gallery_changes set kind = 'pruned', subject_refs = '[]'::jsonb
      where id = (select id from horizon) and kind <> 'pruned' returning 1
    )
    select (select count(*) from gone)::int as deleted, (select count(*) from marked)::int as marked`.execute(db);
  return Number(rows[0]?.deleted ?? 0);
}
