import { sql } from 'kysely';
import { json } from '../json.js';
import type { Database } from '../tables.js';
import { parsedJson } from './decode.js';
import type { Queryable } from './queryable.js';

/**
 * The SQL of the gallery (services/gallery/): its templates as the database holds them, the gallery change log
 * (table `gallery_changes`), the database side of the gallery digest, and the locks and the NOTIFY of the
 * cross-node protocol. The services decide when, in which transaction and in which snapshot these run.
 */

export type GalleryChangeKind = Database['gallery_changes']['kind'];

/** One row of the change log, decoded. */
export interface GalleryChangeRow {
  id: number;
  kind: GalleryChangeKind;
  subjectRefs: number[];
}

/** One gallery template: a face sample's template or a VOICE template, of an ENROLLED subject. */
export interface GalleryTemplate {
  /** The table it comes from: face_samples (face) or templates (voice). */
  source: 'face' | 'voice';
  rowId: number;
  subjectRef: number;
  subjectId: string;
  template: Uint8Array;
}

// ---- templates -----------------------------------------------------------------------------------------

/** The face sample templates of ENROLLED subjects. */
function faceTemplates(db: Queryable) {
  return db
    .selectFrom('face_samples as f')
    .innerJoin('subjects as s', 's.id', 'f.subject_ref')
    .select(['f.id', 'f.template', 's.id as subjectRef', 's.subject_id'])
    .where('s.status', '=', 'ENROLLED')
    .where('f.template', 'is not', null);
}

/** The VOICE templates of ENROLLED subjects. */
function voiceTemplates(db: Queryable) {
  return db
    .selectFrom('templates as t')
    .innerJoin('subjects as s', 's.id', 't.subject_ref')
    .select(['t.id', 't.data', 's.id as subjectRef', 's.subject_id'])
    .where('s.status', '=', 'ENROLLED')
    .where('t.modality', '=', 'VOICE');
}

const faceTemplate = (row: {
  id: number;
  template: Uint8Array | null;
  subjectRef: number;
  subject_id: string;
}): GalleryTemplate => ({
  source: 'face',
  rowId: row.id,
  subjectRef: row.subjectRef,
  subjectId: row.subject_id,
  template: row.template!,
});

const voiceTemplate = (row: {
  id: number;
  data: Uint8Array;
  subjectRef: number;
  subject_id: string;
}): GalleryTemplate => ({
  source: 'voice',
  rowId: row.id,
  subjectRef: row.subjectRef,
  subjectId: row.subject_id,
  template: row.data,
});

/** A batch of the gallery's face templates: up to `limit` with face sample id above `after`, by id (a load's page). */
export async function galleryFaceTemplatesAfter(
  db: Queryable,
  after: number,
  limit: number,
): Promise<GalleryTemplate[]> {
  const rows = await faceTemplates(db).where('f.id', '>', after).orderBy('f.id').limit(limit).execute();
  return rows.map(faceTemplate);
}

/** A batch of the gallery's voice templates: up to `limit` with template id above `after`, by id. */
export async function galleryVoiceTemplatesAfter(
  db: Queryable,
  after: number,
  limit: number,
): Promise<GalleryTemplate[]> {
  const rows = await voiceTemplates(db).where('t.id', '>', after).orderBy('t.id').limit(limit).execute();
  return rows.map(voiceTemplate);
}

/** The gallery templates of these subjects (ENROLLED ones only) as the snapshot of `db` shows them: faces, then voices. */
export async function galleryTemplatesOf(db: Queryable, subjectRefs: number[]): Promise<GalleryTemplate[]> {
  if (subjectRefs.length === 0) return [];
  const faces = await faceTemplates(db).where('s.id', 'in', subjectRefs).orderBy('f.id').execute();
  const voices = await voiceTemplates(db).where('s.id', 'in', subjectRefs).orderBy('t.id').execute();
  return [...faces.map(faceTemplate), ...voices.map(voiceTemplate)];
}

// ---- the change log ------------------------------------------------------------------------------------

/** Where an appended change sits in the log: its id, and the highest id committed before it. */
export interface AppendedChange {
  id: number;
  /**
   * The highest id visible when the row was drawn (0 for an empty log): every id up to it had committed. -1 when
   * the transaction's snapshot may be older than the lock (not read committed): nothing is claimed then.
   */
  previous: number;
}

/**
 * Append a change inside the changing transaction: takes the change log's SHARE ROW EXCLUSIVE lock (held until
 * the commit) before drawing the id, so ids become visible in id order (services/gallery/change-log.ts says why).
 * Returns the row's id and, read by the same statement under that lock, the highest id before it: a node whose
 * gallery holds exactly that id can apply this change itself, knowing no other change comes between.
 */
export async function appendGalleryChange(
  trx: Queryable,
  kind: Exclude<GalleryChangeKind, 'pruned'>,
  subjectRefs: number[],
): Promise<AppendedChange> {
  await sql`lock table gallery_changes in share row exclusive mode`.execute(trx);
  // The subquery sees the statement's snapshot (taken after the lock was granted), without the row inserted.
  const row = await trx
    .insertInto('gallery_changes')
    .values({ kind, subject_refs: json(subjectRefs) })
    .returning((eb) => [
      'id',
      eb
        .selectFrom('gallery_changes as before')
        .select((b) => sql<number>`coalesce(max(${b.ref('before.id')}), 0)`.as('previous'))
        .whereRef('before.id', '<', 'gallery_changes.id')
        .as('previous'),
      // Under repeatable read or serializable (an operator's default_transaction_isolation) the snapshot may
      // predate the lock and miss a change committed meanwhile: then no 'previous' is claimed (-1 matches no
      // position, so the node replays the log).
      sql<boolean>`current_setting('transaction_isolation') = 'read committed'`.as('fresh'),
    ])
    .executeTakeFirstOrThrow();
  return { id: Number(row.id), previous: row.fresh ? Number(row.previous ?? 0) : -1 };
}

/** The highest change id committed so far (0 for an empty log). */
export async function latestGalleryChangeId(db: Queryable): Promise<number> {
  const row = await db
    .selectFrom('gallery_changes')
    .select((eb) => eb.fn.max('id').as('id'))
    .executeTakeFirst();
  return Number(row?.id ?? 0);
}

/** Up to `limit` changes after id `after`, oldest first (one primary-key range scan). */
export async function galleryChangesAfter(db: Queryable, after: number, limit: number): Promise<GalleryChangeRow[]> {
  const rows = await db
    .selectFrom('gallery_changes')
    .select(['id', 'kind', 'subject_refs'])
    .where('id', '>', after)
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ id: Number(r.id), kind: r.kind, subjectRefs: parsedJson(r.subject_refs) }));
}

/**
 * Delete the change rows older than `retentionMs` (by the database clock) but the newest of them, which becomes
 * a `pruned` marker (with no subjects) unless it is one already. One statement; returns the rows deleted.
 */
export async function pruneGalleryChanges(db: Queryable, retentionMs: number): Promise<number> {
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

// ---- the cross-node protocol ---------------------------------------------------------------------------

/** NOTIFY the listening nodes on `channel` (PostgreSQL; delivered when the transaction commits). */
export async function notifyGalleryChannel(trx: Queryable, channel: string, payload: string): Promise<void> {
  await sql`select pg_notify(${channel}, ${payload})`.execute(trx);
}

/** Take the transaction-scoped advisory lock `key` (PostgreSQL), waiting for it; released by the commit or rollback. */
export async function holdTransactionLock(trx: Queryable, key: number): Promise<void> {
  await sql`select pg_advisory_xact_lock(${key})`.execute(trx);
}

// ---- the digest ----------------------------------------------------------------------------------------

/** The SQL twin of services/gallery/digest.ts's trailingCrc for a bytea column. */
function crcSql(column: string) {
  const c = sql.ref(column);
  return sql`case when octet_length(${c}) >= 4 then
    get_byte(${c}, octet_length(${c}) - 4)::int8 + get_byte(${c}, octet_length(${c}) - 3)::int8 * 256
    + get_byte(${c}, octet_length(${c}) - 2)::int8 * 65536 + get_byte(${c}, octet_length(${c}) - 1)::int8 * 16777216
    else 0 end`;
}

/**
 * The digest of the gallery according to the database (services/gallery/digest.ts's digestTerm, summed in SQL)
 * over the face sample templates and VOICE templates of ENROLLED subjects: the template count and the sum of
 * the terms as decimal text (it exceeds 2^53). One query. With `slots`, only the subjects of that slot range.
 */
export async function galleryDigestInDatabase(
  db: Queryable,
  slots?: { from: number; to: number },
): Promise<{ templates: number; sum: string }> {
  // A matcher shard's digest covers its slots only (gallery-shards.ts).
  const inSlots = slots ? sql`and s.shard_slot >= ${slots.from}::int and s.shard_slot < ${slots.to}::int` : sql``;
  const { rows } = await sql<{ templates: string | number; sum: string | null }>`
    with terms as (
      select (f.id::int8 * 2) * 1000003 + s.id::int8 * 7919 + ${crcSql('f.template')} as term
        from face_samples f join subjects s on s.id = f.subject_ref
        where s.status = 'ENROLLED' and f.template is not null ${inSlots}
      union all
      select (t.id::int8 * 2 + 1) * 1000003 + s.id::int8 * 7919 + ${crcSql('t.data')} as term
        from templates t join subjects s on s.id = t.subject_ref
        where s.status = 'ENROLLED' and t.modality = 'VOICE' ${inSlots}
    )
    select count(*) as templates, sum(term)::text as sum from terms`.execute(db);
  return { templates: Number(rows[0]?.templates ?? 0), sum: rows[0]?.sum ?? '0' };
}
