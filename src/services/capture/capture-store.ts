import { sql } from 'kysely';
import { json } from '../../db/json.js';
import type { ServiceContext } from '../context.js';
import { NODE_ALIVE_SECONDS } from '../management/cluster.js';
import type { CaptureEvent, CaptureParams, CaptureResult, CaptureState } from './capture-session.js';

/** Finished captures stay readable this long, so the client can read the outcome after the session ended. */
export const KEEP_FINISHED_MS = 10 * 60_000;

/**
 * How long past its own timeout an unfinished capture may stay unfinished before a reader may call it lost
 * (and then only if its node has stopped reporting in): the operation it runs after its frames (PROCESSING)
 * pushes the deadline this far past its start too.
 */
export const LOST_MARGIN_MS = 60_000;

/** Where a node that settled another node's capture (a stop sent to it) says so: the payload is the gateway session id. */
export const CAPTURE_CHANNEL = 'bims_capture';

/** The reason of a capture whose node died before its outcome. */
export const NODE_LOST = 'NODE_LOST';

/** What a client reads of its capture: where it is, every event so far (oldest first) and the outcome. */
export interface CaptureView {
  state: CaptureState;
  purpose: CaptureParams['purpose'];
  events: CaptureEvent[];
  result?: CaptureResult;
}

/** A capture as stored: its view, and whose it is. */
export interface StoredCapture {
  view: CaptureView;
  over: boolean;
  /** The account that started it (null for a caller without one). */
  accountId: number | null;
  nodeId: string;
  captureId: string;
}

/** The capture as its node last wrote it: the whole view (the events are capped by the session, at 200). */
export interface CaptureSnapshot {
  state: CaptureState;
  events: readonly CaptureEvent[];
  result: CaptureResult | null;
  over: boolean;
  /** An unfinished capture past this, whose node no longer reports in, is lost. */
  deadlineAt: Date;
}

const isOver = (state: string) => state === 'DONE' || state === 'TIMEOUT' || state === 'FAILED';

/**
 * The capture sessions of the whole cluster, one row per gateway handle (table `capture_sessions`): written
 * by the node running each capture, read by any node. Both dialects run the same statements (PGlite is a
 * single node, where the rows are simply what the registry would have held in memory).
 */
export class CaptureStore {
  constructor(private readonly ctx: ServiceContext) {}

  /** A new capture on a handle: its row replaces whatever an earlier connect on the handle left. */
  async begin(m: { sessionId: number; handleId: number; captureId: string; accountId: number | null; purpose: string; snapshot: CaptureSnapshot }): Promise<void> {
    const now = this.ctx.now();
    const { snapshot } = m;
    const row = {
      capture_id: m.captureId, node_id: this.ctx.node.id, account_id: m.accountId, purpose: m.purpose, state: snapshot.state,
      events: json(snapshot.events), result: json(snapshot.result), started_at: now, updated_at: now,
      finished_at: snapshot.over ? now : null, deadline_at: snapshot.deadlineAt,
    };
    await this.ctx.db
      .insertInto('capture_sessions')
      .values({ session_id: m.sessionId, handle_id: m.handleId, ...row })
      .onConflict((oc) => oc.columns(['session_id', 'handle_id']).doUpdateSet(row))
      .execute();
  }

  /**
   * The capture's latest view, written by its node. Only an unfinished row of this capture takes it: once
   * another node has settled it (a stop sent there, or the capture declared lost) or a new connect replaced
   * it, the answer is false and the row keeps what it says.
   */
  async write(sessionId: number, handleId: number, captureId: string, snapshot: CaptureSnapshot): Promise<boolean> {
    const now = this.ctx.now();
    const result = await this.ctx.db
      .updateTable('capture_sessions')
      .set({
        state: snapshot.state, events: json(snapshot.events), result: json(snapshot.result), updated_at: now,
        finished_at: snapshot.over ? now : null, deadline_at: snapshot.deadlineAt,
      })
      .where('session_id', '=', sessionId).where('handle_id', '=', handleId)
      .where('capture_id', '=', captureId).where('finished_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /**
   * The capture on a handle as any node reads it, or undefined when there is none (or it finished more than
   * 10 minutes ago). An unfinished capture past its deadline whose node has stopped reporting in is settled
   * first, as FAILED with the reason NODE_LOST, for every reader alike.
   */
  async read(sessionId: number, handleId: number): Promise<StoredCapture | undefined> {
    let row = await this.row(sessionId, handleId);
    if (row && row.finished_at === null && new Date(row.deadline_at).getTime() < this.ctx.now().getTime()) {
      await this.settleLost(sessionId, handleId);
      row = await this.row(sessionId, handleId);
    }
    if (!row) return undefined;
    if (row.finished_at !== null && this.ctx.now().getTime() - new Date(row.finished_at).getTime() > KEEP_FINISHED_MS) return undefined;
    const result = row.result as CaptureResult | null;
    return {
      view: { state: row.state as CaptureState, purpose: row.purpose as CaptureParams['purpose'], events: row.events as CaptureEvent[], ...(result ? { result } : {}) },
      over: row.finished_at !== null || isOver(row.state),
      accountId: row.account_id,
      nodeId: row.node_id,
      captureId: row.capture_id,
    };
  }

  /** Every capture of a gateway session (getSession), oldest handle first. */
  async ofSession(sessionId: number, handleId?: number): Promise<{ handleId: number; capture: StoredCapture }[]> {
    let query = this.ctx.db.selectFrom('capture_sessions').select('handle_id').where('session_id', '=', sessionId);
    if (handleId !== undefined) query = query.where('handle_id', '=', handleId);
    const handles = await query.orderBy('handle_id').execute();
    const found: { handleId: number; capture: StoredCapture }[] = [];
    for (const { handle_id } of handles) {
      const capture = await this.read(sessionId, Number(handle_id));
      if (capture) found.push({ handleId: Number(handle_id), capture });
    }
    return found;
  }

  /**
   * The client stopped the gateway session on this node: its unfinished captures end now, FAILED with
   * `reason`, whichever node runs them. That node is told on {@link CAPTURE_CHANNEL}; without it (its
   * listening connection down) it learns when its keepalive finds the gateway session gone, or at its next
   * write, which this row then refuses.
   */
  async stopSession(sessionId: number, reason: string): Promise<void> {
    const settled = await this.settle(sessionId, undefined, { status: 'FAILED', reason }, false);
    if (settled > 0) await sql`select pg_notify(${CAPTURE_CHANNEL}, ${String(sessionId)})`.execute(this.ctx.db);
  }

  /** Finished captures older than 10 minutes go; called as each node reports in (the heartbeat). */
  async prune(): Promise<void> {
    await this.ctx.db.deleteFrom('capture_sessions').where('finished_at', '<', new Date(this.ctx.now().getTime() - KEEP_FINISHED_MS)).execute();
    // Lost captures nobody read are settled too, so that they age out like the others.
    await this.settle(undefined, undefined, { status: 'FAILED', reason: NODE_LOST }, true);
  }

  private row(sessionId: number, handleId: number) {
    return this.ctx.db.selectFrom('capture_sessions').selectAll().where('session_id', '=', sessionId).where('handle_id', '=', handleId).executeTakeFirst();
  }

  private async settleLost(sessionId: number, handleId: number): Promise<void> {
    await this.settle(sessionId, handleId, { status: 'FAILED', reason: NODE_LOST }, true);
  }

  /**
   * End unfinished captures from outside their node, in one statement that only takes rows still
   * unfinished (so the node's own outcome, if it came first, stands): the FAILED event is appended to the
   * events and the result set. `onlyLost`: only rows past their deadline whose node stopped reporting in.
   */
  private async settle(sessionId: number | undefined, handleId: number | undefined, result: CaptureResult, onlyLost: boolean): Promise<number> {
    const now = this.ctx.now();
    const event = { at: now.toISOString(), type: 'FAILED', ...result };
    let query = this.ctx.db
      .updateTable('capture_sessions as c')
      .set({
        state: 'FAILED',
        result: json(result),
        events: sql`c.events || ${json([event])}::jsonb`,
        updated_at: now,
        finished_at: now,
      })
      .where('c.finished_at', 'is', null);
    if (sessionId !== undefined) query = query.where('c.session_id', '=', sessionId);
    if (handleId !== undefined) query = query.where('c.handle_id', '=', handleId);
    if (onlyLost) {
      const aliveSince = new Date(now.getTime() - NODE_ALIVE_SECONDS * 1000);
      query = query
        .where('c.deadline_at', '<', now)
        .where(({ not, exists, selectFrom }) => not(exists(selectFrom('service_nodes as n').select('n.node_id').whereRef('n.node_id', '=', 'c.node_id').where('n.last_seen_at', '>', aliveSince))));
    }
    const done = await query.executeTakeFirst();
    return Number(done.numUpdatedRows);
  }
}
