import { sql } from 'kysely';
import type { Queryable } from './queryable.js';

/**
 * The SQL of gateway sessions and handles (services/gateway/session-registry.ts): who owns each session made
 * through the API, the handles attached to it with their plugin, and how many each owner holds. Both dialects
 * run the same statements.
 */

/**
 * Key of the transaction-scoped advisory lock under which an admission counts and records ("BIMS" and 0x47,
 * 'G'): the last count and the write are one step across every node on the database. It is held for those two
 * statements only, never while the gateway is asked.
 */
const GATEWAY_ADMISSION_LOCK = 0x42494d53_0047;

/** Take the admission lock for the rest of the transaction `trx`. */
export async function lockGatewayAdmission(trx: Queryable): Promise<void> {
  await sql`select pg_advisory_xact_lock(${GATEWAY_ADMISSION_LOCK})`.execute(trx);
}

/** How many gateway sessions `owner` holds, and how many there are in all. */
export async function countGatewaySessions(db: Queryable, owner: string): Promise<{ mine: number; total: number }> {
  const row = await db
    .selectFrom('gateway_sessions')
    .select((eb) => [
      eb.fn.countAll<string>().as('total'),
      eb.fn.count<string>(eb.case().when('owner', '=', owner).then(1).end()).as('mine'),
    ])
    .executeTakeFirstOrThrow();
  return { mine: Number(row.mine), total: Number(row.total) };
}

/** The session Janus made for `owner` through node `nodeId`, with the handles already attached to it. */
export async function insertGatewaySession(
  db: Queryable,
  session: { sessionId: number; owner: string; nodeId: string; createdAt: Date; handles?: number },
): Promise<void> {
  await db
    .insertInto('gateway_sessions')
    .values({
      session_id: session.sessionId,
      owner: session.owner,
      node_id: session.nodeId,
      created_at: session.createdAt,
      handles: session.handles ?? 0,
    })
    .execute();
}

/** The session is gone from the gateway: its row and its handles go. */
export async function deleteGatewaySession(db: Queryable, sessionId: number): Promise<void> {
  await db.deleteFrom('gateway_sessions').where('session_id', '=', sessionId).execute();
}

/** Whose the session is and how many handles it has; undefined when no such session was made through the API. */
export async function findGatewaySession(
  db: Queryable,
  sessionId: number,
): Promise<{ owner: string; handles: number } | undefined> {
  return db
    .selectFrom('gateway_sessions')
    .select(['owner', 'handles'])
    .where('session_id', '=', sessionId)
    .executeTakeFirst();
}

/** A handle of a session with the session's owner and the handle's plugin; undefined when either is unknown. */
export async function findGatewayHandle(
  db: Queryable,
  sessionId: number,
  handleId: number,
): Promise<{ owner: string; plugin: string } | undefined> {
  return db
    .selectFrom('gateway_handles as h')
    .innerJoin('gateway_sessions as s', 's.session_id', 'h.session_id')
    .select(['s.owner', 'h.plugin'])
    .where('h.session_id', '=', sessionId)
    .where('h.handle_id', '=', handleId)
    .executeTakeFirst();
}

/**
 * Count one more handle on the session and record it with its plugin, in one statement: only while the
 * session has fewer than `cap` and, when `owner` is given, only if it is that owner's. False when it took
 * none (the session is not the owner's, unknown, or full: another attach came first).
 */
export async function addGatewayHandle(
  db: Queryable,
  handle: { sessionId: number; handleId: number; plugin: string },
  owner: string | null,
  cap: number,
): Promise<boolean> {
  const { rows } = await sql<{ session_id: string }>`
    with counted as (
      update gateway_sessions set handles = handles + 1
      where session_id = ${handle.sessionId} and handles < ${cap} and (${owner}::text is null or owner = ${owner})
      returning session_id
    )
    insert into gateway_handles (session_id, handle_id, plugin)
    select session_id, ${handle.handleId}, ${handle.plugin} from counted
    returning session_id`.execute(db);
  return rows.length > 0;
}

/** A handle attached together with its session's row (createAndAttach), counted there. */
export async function insertGatewayHandle(
  db: Queryable,
  sessionId: number,
  handleId: number,
  plugin: string,
): Promise<void> {
  await db.insertInto('gateway_handles').values({ session_id: sessionId, handle_id: handleId, plugin }).execute();
}

/** The ids of the sessions `owner` holds. */
export async function listGatewaySessionIds(db: Queryable, owner: string): Promise<number[]> {
  const rows = await db.selectFrom('gateway_sessions').select('session_id').where('owner', '=', owner).execute();
  return rows.map((r) => Number(r.session_id));
}

/** The sessions recorded before `before`: what a comparison with Janus's list of sessions may judge. */
export async function listGatewaySessionsMadeBefore(db: Queryable, before: Date): Promise<number[]> {
  const rows = await db.selectFrom('gateway_sessions').select('session_id').where('created_at', '<', before).execute();
  return rows.map((r) => Number(r.session_id));
}

/** Rows of sessions Janus no longer has go, with their handles. */
export async function deleteGatewaySessions(db: Queryable, sessionIds: number[]): Promise<number> {
  if (sessionIds.length === 0) return 0;
  const result = await db.deleteFrom('gateway_sessions').where('session_id', 'in', sessionIds).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** A gateway event for the other nodes, on `channel` (services/gateway/event-relay.ts). */
export async function notifyGatewayEvent(db: Queryable, channel: string, payload: string): Promise<void> {
  await sql`select pg_notify(${channel}, ${payload})`.execute(db);
}
