import { json } from '../../db/json.js';
import { judgeShare, shareLimits } from '../../gateway/fair-share.js';
import { lockGatewayAdmission } from '../../db/repositories/gateway-sessions.js';
import {
  countUnfinishedCaptures,
  deleteCapturesFinishedBefore,
  findCaptureSession,
  listCaptureHandles,
  notifyCapturesSettled,
  settleUnfinishedCaptures,
  updateUnfinishedCapture,
  upsertCaptureSession,
} from '../../db/repositories/capture.js';
import type { ServiceContext } from '../context.js';
import { shareRefusal } from '../gateway/share-refusal.js';
import { NODE_ALIVE_SECONDS } from '../management/cluster.js';
import type { CaptureEvent, CaptureParams, CaptureResult, CaptureState } from './capture-types.js';

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

const CAPTURES = { plural: 'captures', freedBy: 'stop one, or wait until one ends' };

/** The reason of a capture whose node died before its outcome. */
const NODE_LOST = 'NODE_LOST';

/** What a client reads of its capture: where it is, every event so far (oldest first) and the outcome. */
export interface CaptureView {
  state: CaptureState;
  purpose: CaptureParams['purpose'];
  events: CaptureEvent[];
  result?: CaptureResult;
}

/** A capture as stored: its view, and whose it is. */
interface StoredCapture {
  view: CaptureView;
  over: boolean;
  /** The account that started it (null for a caller without one). */
  accountId: number | null;
  /** Whose it is, under the gateway's owner key (services/gateway/gateway-owner.ts); null on rows from before it. */
  owner: string | null;
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

  /**
   * This process is the only node (PGlite): nobody else writes the rows, so a capture it runs is, until its
   * outcome, what it holds in memory, and a reader need not ask the database (CaptureRegistry.view).
   */
  get soleNode(): boolean {
    return this.ctx.dialect === 'pglite';
  }

  /**
   * Whether `owner` may start one more capture (on the handle `key`, whose earlier capture a new one replaces),
   * on what is recorded now: the first look, before the gateway does any work. @throws DomainError 429 or 503
   */
  async check(owner: string, key: { sessionId: number; handleId: number }): Promise<void> {
    const why = judgeShare(await countUnfinishedCaptures(this.ctx.db, owner, this.ctx.now(), key), this.limits);
    if (why) throw shareRefusal(why, CAPTURES, this.limits);
  }

  /**
   * A new capture on a handle, admitted under the caps (docs/media-gateway.md, "Fair share"): the owner's and
   * the service's unfinished captures are counted again and its row written as one step across every node (a
   * short transaction under the gateway's admission lock), so that of concurrent connects that passed
   * {@link check}, those past the cap are refused. The row replaces whatever an earlier connect on the handle
   * left. @throws DomainError 429 (the owner's share) or 503 (the service is full)
   */
  async admit(m: {
    sessionId: number;
    handleId: number;
    captureId: string;
    owner: string;
    accountId: number | null;
    purpose: string;
    snapshot: CaptureSnapshot;
  }): Promise<void> {
    const now = this.ctx.now();
    const { snapshot } = m;
    await this.ctx.db.transaction().execute(async (trx) => {
      await lockGatewayAdmission(trx);
      const why = judgeShare(await countUnfinishedCaptures(trx, m.owner, now, m), this.limits);
      if (why) throw shareRefusal(why, CAPTURES, this.limits);
      await upsertCaptureSession(trx, m.sessionId, m.handleId, {
        capture_id: m.captureId,
        node_id: this.ctx.node.id,
        account_id: m.accountId,
        owner: m.owner,
        purpose: m.purpose,
        state: snapshot.state,
        events: json(snapshot.events),
        result: json(snapshot.result),
        started_at: now,
        updated_at: now,
        finished_at: snapshot.over ? now : null,
        deadline_at: snapshot.deadlineAt,
      });
    });
  }

  private get limits() {
    return shareLimits(this.ctx.config.BIMS_CAPTURES_PER_ACCOUNT, this.ctx.config.BIMS_CAPTURES_TOTAL);
  }

  /**
   * The capture's latest view, written by its node. Only an unfinished row of this capture takes it: once
   * another node has settled it (a stop sent there, or the capture declared lost) or a new connect replaced
   * it, the answer is false and the row keeps what it says.
   */
  async write(sessionId: number, handleId: number, captureId: string, snapshot: CaptureSnapshot): Promise<boolean> {
    const now = this.ctx.now();
    return updateUnfinishedCapture(
      this.ctx.db,
      { sessionId, handleId, captureId },
      {
        state: snapshot.state,
        events: json(snapshot.events),
        result: json(snapshot.result),
        updated_at: now,
        finished_at: snapshot.over ? now : null,
        deadline_at: snapshot.deadlineAt,
      },
    );
  }

  /**
   * The capture on a handle as any node reads it, or undefined when there is none (or it finished more than
   * 10 minutes ago). An unfinished capture past its deadline whose node has stopped reporting in is settled
   * first, as FAILED with the reason NODE_LOST, for every reader alike.
   */
  async read(sessionId: number, handleId: number): Promise<StoredCapture | undefined> {
    let row = await findCaptureSession(this.ctx.db, sessionId, handleId);
    if (row && row.finished_at === null && row.deadline_at.getTime() < this.ctx.now().getTime()) {
      await this.settleLost(sessionId, handleId);
      row = await findCaptureSession(this.ctx.db, sessionId, handleId);
    }
    if (!row) return undefined;
    if (row.finished_at !== null && this.ctx.now().getTime() - row.finished_at.getTime() > KEEP_FINISHED_MS)
      return undefined;
    const result = row.result as CaptureResult | null;
    return {
      view: {
        state: row.state as CaptureState,
        purpose: row.purpose as CaptureParams['purpose'],
        events: row.events as CaptureEvent[],
        ...(result ? { result } : {}),
      },
      over: row.finished_at !== null || isOver(row.state),
      accountId: row.account_id,
      owner: row.owner,
      nodeId: row.node_id,
      captureId: row.capture_id,
    };
  }

  /** Every capture of a gateway session (getSession), oldest handle first. */
  async ofSession(sessionId: number, handleId?: number): Promise<{ handleId: number; capture: StoredCapture }[]> {
    const found: { handleId: number; capture: StoredCapture }[] = [];
    for (const handle of await listCaptureHandles(this.ctx.db, sessionId, handleId)) {
      const capture = await this.read(sessionId, handle);
      if (capture) found.push({ handleId: handle, capture });
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
    if (settled > 0) await notifyCapturesSettled(this.ctx.db, CAPTURE_CHANNEL, sessionId);
  }

  /** Finished captures older than 10 minutes go; called as each node reports in (the heartbeat). */
  async prune(): Promise<void> {
    await deleteCapturesFinishedBefore(this.ctx.db, new Date(this.ctx.now().getTime() - KEEP_FINISHED_MS));
    // Lost captures nobody read are settled too, so that they age out like the others.
    await this.settle(undefined, undefined, { status: 'FAILED', reason: NODE_LOST }, true);
  }

  private async settleLost(sessionId: number, handleId: number): Promise<void> {
    await this.settle(sessionId, handleId, { status: 'FAILED', reason: NODE_LOST }, true);
  }

  /**
   * End unfinished captures from outside their node (the repository's one statement leaves a row the node
   * finished first as it is): a FAILED event appended, the result set. `onlyLost`: only rows past their
   * deadline whose node stopped reporting in.
   */
  private async settle(
    sessionId: number | undefined,
    handleId: number | undefined,
    result: CaptureResult,
    onlyLost: boolean,
  ): Promise<number> {
    const now = this.ctx.now();
    const event = { at: now.toISOString(), type: 'FAILED', ...result };
    const lost = onlyLost ? { aliveSince: new Date(now.getTime() - NODE_ALIVE_SECONDS * 1000) } : undefined;
    return settleUnfinishedCaptures(this.ctx.db, { sessionId, handleId, lost }, result, event, now);
  }
}
