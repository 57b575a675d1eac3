import { sql, type Insertable, type Selectable, type Updateable } from 'kysely';
import { json } from '../json.js';
import type { Database } from '../tables.js';
import { asDate, parsedJson } from './decode.js';
import type { Queryable } from './queryable.js';

/**
 * The SQL of capture sessions (services/capture/capture-store.ts): one row per gateway handle in
 * `capture_sessions`, written by the node running the capture and read by any node. Both dialects run the
 * same statements.
 */

type CaptureSessionRow = Selectable<Database['capture_sessions']>;

/** The columns a capture's node writes as the capture changes. */
type CaptureSessionValues = Omit<Insertable<Database['capture_sessions']>, 'session_id' | 'handle_id'>;

/** A new capture on a handle: its row replaces whatever an earlier connect on the handle left. */
export async function upsertCaptureSession(
  db: Queryable,
  sessionId: number,
  handleId: number,
  values: CaptureSessionValues,
): Promise<void> {
  await db
    .insertInto('capture_sessions')
    .values({ session_id: sessionId, handle_id: handleId, ...values })
    .onConflict((oc) => oc.columns(['session_id', 'handle_id']).doUpdateSet(values))
    .execute();
}

/**
 * Write a capture's latest state, only while its row is unfinished and still this capture's (not replaced by a
 * new connect): whether the row took it.
 */
export async function updateUnfinishedCapture(
  db: Queryable,
  key: { sessionId: number; handleId: number; captureId: string },
  values: Updateable<Database['capture_sessions']>,
): Promise<boolean> {
  const result = await db
    .updateTable('capture_sessions')
    .set(values)
    .where('session_id', '=', key.sessionId)
    .where('handle_id', '=', key.handleId)
    .where('capture_id', '=', key.captureId)
    .where('finished_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** The capture row of a handle, its events and result decoded. */
export async function findCaptureSession(
  db: Queryable,
  sessionId: number,
  handleId: number,
): Promise<CaptureSessionRow | undefined> {
  const row = await db
    .selectFrom('capture_sessions')
    .selectAll()
    .where('session_id', '=', sessionId)
    .where('handle_id', '=', handleId)
    .executeTakeFirst();
  return (
    row && {
      ...row,
      events: parsedJson(row.events),
      result: parsedJson(row.result),
      started_at: asDate(row.started_at),
      updated_at: asDate(row.updated_at),
      finished_at: row.finished_at === null ? null : asDate(row.finished_at),
      deadline_at: asDate(row.deadline_at),
    }
  );
}

/** The handles of a gateway session that have a capture row (or just `handleId`'s), in handle order. */
export async function listCaptureHandles(db: Queryable, sessionId: number, handleId?: number): Promise<number[]> {
  let query = db.selectFrom('capture_sessions').select('handle_id').where('session_id', '=', sessionId);
  if (handleId !== undefined) query = query.where('handle_id', '=', handleId);
  const rows = await query.orderBy('handle_id').execute();
  return rows.map((r) => Number(r.handle_id));
}

/** Which unfinished captures a settlement takes: of a session (or one handle), and/or only the lost ones. */
interface UnfinishedCaptures {
  sessionId?: number;
  handleId?: number;
  /** Only rows past their deadline whose node has not reported in since `aliveSince`. */
  lost?: { aliveSince: Date };
}

/**
 * End unfinished captures from outside their node, in one statement that only takes rows still unfinished
 * (so the node's own outcome, if it came first, stands): `event` appended to the events, the state FAILED and
 * `result` set. Answers how many rows it settled.
 */
export async function settleUnfinishedCaptures(
  db: Queryable,
  which: UnfinishedCaptures,
  result: unknown,
  event: unknown,
  now: Date,
): Promise<number> {
  let query = db
    .updateTable('capture_sessions as c')
    .set({
      state: 'FAILED',
      result: json(result),
      events: sql`c.events || ${json([event])}::jsonb`,
      updated_at: now,
      finished_at: now,
    })
    .where('c.finished_at', 'is', null);
  if (which.sessionId !== undefined) query = query.where('c.session_id', '=', which.sessionId);
  if (which.handleId !== undefined) query = query.where('c.handle_id', '=', which.handleId);
  if (which.lost) {
    const { aliveSince } = which.lost;
    query = query
      .where('c.deadline_at', '<', now)
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('service_nodes as n')
              .select('n.node_id')
              .whereRef('n.node_id', '=', 'c.node_id')
              .where('n.last_seen_at', '>', aliveSince),
          ),
        ),
      );
  }
  const done = await query.executeTakeFirst();
  return Number(done.numUpdatedRows);
}

/** Tell the listening nodes (NOTIFY on `channel`) that captures of this gateway session were settled. */
export async function notifyCapturesSettled(db: Queryable, channel: string, sessionId: number): Promise<void> {
  await sql`select pg_notify(${channel}, ${String(sessionId)})`.execute(db);
}

/** Captures that finished before `before` go. */
export async function deleteCapturesFinishedBefore(db: Queryable, before: Date): Promise<void> {
  await db.deleteFrom('capture_sessions').where('finished_at', '<', before).execute();
}

/** The status and score an operation was recorded with (what a capture's ENROLL reports back). */
export function findOperationOutcome(
  db: Queryable,
  uuid: string,
): Promise<{ status: Selectable<Database['operations']>['status']; score: number | null } | undefined> {
  return db.selectFrom('operations').select(['status', 'score']).where('uuid', '=', uuid).executeTakeFirst();
}

/**
 * How many unfinished captures `owner` runs, and how many run in all: rows not finished and not past their
 * deadline (a lost capture stops counting when its deadline passes), the capture on `except` (about to be
 * replaced by a new connect on its handle) left out.
 */
export async function countUnfinishedCaptures(
  db: Queryable,
  owner: string,
  now: Date,
  except: { sessionId: number; handleId: number },
): Promise<{ mine: number; total: number }> {
  const row = await db
    .selectFrom('capture_sessions')
    .select((eb) => [
      eb.fn.countAll<string>().as('total'),
      eb.fn.count<string>(eb.case().when('owner', '=', owner).then(1).end()).as('mine'),
    ])
    .where('finished_at', 'is', null)
    .where('deadline_at', '>', now)
    .where((eb) => eb.not(eb.and([eb('session_id', '=', except.sessionId), eb('handle_id', '=', except.handleId)])))
    .executeTakeFirstOrThrow();
  return { mine: Number(row.mine), total: Number(row.total) };
}
