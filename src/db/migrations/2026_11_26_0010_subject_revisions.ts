import { sql, type Kysely } from 'kysely';

/**
 * `subjects.revision`: a number that names one state of a subject as the subject reads present it (the subject
 * row, its face and voice samples, its templates), so that a node holding a subject's presented answer can ask
 * the database, inside the read's own statement, whether that answer is still exact (docs/read-cost.md).
 *
 * Revisions come from one global sequence, `subject_revisions`, never reused: not across subjects, not after a
 * rollback (a sequence does not roll back), not after a TRUNCATE (the sequence belongs to no column, so
 * `RESTART IDENTITY` leaves it alone). A revision seen in a committed row therefore names exactly one state.
 *
 * - A BEFORE row trigger on `subjects` gives every inserted or updated row the next revision (so any change of
 *   the row, metadata, status, subjectId, template version, moves it).
 * - AFTER statement triggers on `face_samples`, `voice_samples` and `templates` (insert, update, delete; the old
 *   and the new `subject_ref` both) touch the subjects their rows belong to, which gives those subjects a new
 *   revision in the same transaction as the sample change: a snapshot sees both or neither. Statement triggers
 *   with transition tables touch each subject once per statement, however many of its rows the statement wrote
 *   (a subject delete removes all its samples in one statement).
 * - A TRUNCATE of a sample table touches every subject.
 *
 * plpgsql and transition tables work alike on PostgreSQL and PGlite.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create sequence subject_revisions`.execute(db);
  await sql`alter table subjects add column revision bigint`.execute(db);
  await sql`update subjects set revision = nextval('subject_revisions')`.execute(db);
  await sql`alter table subjects alter column revision set not null`.execute(db);

  await sql`create function subject_revision_next() returns trigger language plpgsql as $$
    begin
      new.revision := nextval('subject_revisions');
      return new;
    end $$`.execute(db);
  await sql`create trigger subjects_revision before insert or update on subjects
    for each row execute function subject_revision_next()`.execute(db);

  // `revision = revision`: the subjects trigger above assigns the next revision, in one place.
  await sql`create function subject_revision_of_inserted() returns trigger language plpgsql as $$
    begin
      update subjects set revision = revision where id in (select subject_ref from new_rows);
      return null;
    end $$`.execute(db);
  await sql`create function subject_revision_of_updated() returns trigger language plpgsql as $$
    begin
      update subjects set revision = revision where id in (select subject_ref from new_rows union select subject_ref from old_rows);
      return null;
    end $$`.execute(db);
  await sql`create function subject_revision_of_deleted() returns trigger language plpgsql as $$
    begin
      update subjects set revision = revision where id in (select subject_ref from old_rows);
      return null;
    end $$`.execute(db);
  await sql`create function subject_revision_of_truncated() returns trigger language plpgsql as $$
    begin
      update subjects set revision = revision;
      return null;
    end $$`.execute(db);

  for (const table of SAMPLE_TABLES) {
    const t = sql.table(table);
    await sql`create trigger ${sql.raw(`${table}_revision_insert`)} after insert on ${t}
      referencing new table as new_rows for each statement execute function subject_revision_of_inserted()`.execute(db);
    await sql`create trigger ${sql.raw(`${table}_revision_update`)} after update on ${t}
      referencing old table as old_rows new table as new_rows for each statement execute function subject_revision_of_updated()`.execute(
      db,
    );
    await sql`create trigger ${sql.raw(`${table}_revision_delete`)} after delete on ${t}
      referencing old table as old_rows for each statement execute function subject_revision_of_deleted()`.execute(db);
    await sql`create trigger ${sql.raw(`${table}_revision_truncate`)} after truncate on ${t}
      for each statement execute function subject_revision_of_truncated()`.execute(db);
  }
}

const SAMPLE_TABLES = ['face_samples', 'voice_samples', 'templates'] as const;

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of SAMPLE_TABLES) {
    for (const event of ['insert', 'update', 'delete', 'truncate']) {
      await sql`drop trigger if exists ${sql.raw(`${table}_revision_${event}`)} on ${sql.table(table)}`.execute(db);
    }
  }
  await sql`drop trigger if exists subjects_revision on subjects`.execute(db);
  for (const fn of [
    'subject_revision_next',
    'subject_revision_of_inserted',
    'subject_revision_of_updated',
    'subject_revision_of_deleted',
    'subject_revision_of_truncated',
  ]) {
    await sql`drop function if exists ${sql.raw(fn)}()`.execute(db);
  }
  await sql`alter table subjects drop column if exists revision`.execute(db);
  await sql`drop sequence if exists subject_revisions`.execute(db);
}
