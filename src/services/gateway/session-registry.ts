import { JanusApiError } from '../../gateway/errors.js';
import { judgeShare, shareLimits, type ShareLimits } from '../../gateway/fair-share.js';
import {
  countGatewaySessions,
  deleteGatewaySession,
  deleteGatewaySessions,
  findGatewayHandle,
  findGatewaySession,
  addGatewayHandle,
  insertGatewayHandle,
  insertGatewaySession,
  listGatewaySessionIds,
  listGatewaySessionsMadeBefore,
  lockGatewayAdmission,
} from '../../db/repositories/gateway-sessions.js';
import type { ServiceContext } from '../context.js';
import { DomainError } from '../errors.js';
import { gatewayDomainError } from './errors.js';
import { RETRY_AFTER_SECONDS, shareRefusal } from './share-refusal.js';

/** How long a row waits before a comparison with Janus's list judges it: a session made a moment ago. */
const SETTLING_MS = 65_000;

/** How long a refusal is remembered ({@link SessionRegistry.refused}), and for how many owners at most. */
const MEMO_MS = 1000;
const MEMO_LIMIT = 10_000;

const SESSIONS = {
  plural: 'gateway sessions',
  freedBy: 'stop one with stopGatewayConnection (idle ones end by themselves)',
};

/**
 * The gateway sessions made through the API, in the database so that every node knows them: whose each is
 * (docs/media-gateway.md, "Whose session"), the handles attached with their plugin, and what each owner holds
 * against the caps. A session another owner asks about answers exactly as Janus answers an unknown id (404,
 * 458 `No such session`), and so does a handle of another session (459): no answer tells a stranger's session
 * from no session.
 *
 * Admission reads the counts before Janus is asked (so a refused flood costs Janus nothing) and counts again
 * when it records what Janus made, under an advisory lock across every node: of concurrent calls that all
 * passed the first look, those the second finds past the cap are refused and their session is destroyed. A
 * refused call writes nothing.
 */
export class SessionRegistry {
  /**
   * Owners this node refused a session a moment ago, and the refusal: their next calls within {@link MEMO_MS}
   * are refused without a query, so that one account's flood of refused calls does not queue the database
   * statements of everyone else's. Only refusals are remembered (never an admission), so the caps cannot be
   * passed; a place freed on another node is seen up to a second later, well within the Retry-After.
   */
  private readonly refused = new Map<string, { until: number; error: DomainError }>();

  constructor(private readonly ctx: ServiceContext) {}

  /** The caps of sessions, from the configuration. */
  get sessionLimits(): ShareLimits {
    const { config } = this.ctx;
    return shareLimits(config.BIMS_GATEWAY_SESSIONS_PER_ACCOUNT, config.BIMS_GATEWAY_SESSIONS_TOTAL);
  }

  /** Whether `owner` may have one more session, on what is recorded now. @throws DomainError 429 or 503 */
  async admit(owner: string): Promise<void> {
    const now = Date.now();
    const memo = this.refused.get(owner);
    if (memo && memo.until > now) throw memo.error;
    const limits = this.sessionLimits;
    const why = judgeShare(await countGatewaySessions(this.ctx.db, owner), limits);
    if (!why) return;
    const error = shareRefusal(why, SESSIONS, limits);
    if (this.refused.size >= MEMO_LIMIT)
      for (const [key, m] of this.refused) if (m.until <= now) this.refused.delete(key);
    if (this.refused.size < MEMO_LIMIT) this.refused.set(owner, { until: now + MEMO_MS, error });
    throw error;
  }

  /**
   * Janus made `sessionId` for `owner` (and attached `handle` to it): recorded if the count, made again with the
   * write under the admission lock, still admits it. @throws DomainError 429 or 503 (the caller then destroys
   * the session)
   */
  async record(owner: string, sessionId: number, handle?: { handleId: number; plugin: string }): Promise<void> {
    const limits = this.sessionLimits;
    await this.ctx.db.transaction().execute(async (trx) => {
      await lockGatewayAdmission(trx);
      const why = judgeShare(await countGatewaySessions(trx, owner), limits);
      if (why) throw shareRefusal(why, SESSIONS, limits);
      const createdAt = this.ctx.now();
      await insertGatewaySession(trx, {
        sessionId,
        owner,
        nodeId: this.ctx.node.id,
        createdAt,
        handles: handle ? 1 : 0,
      });
      if (handle) await insertGatewayHandle(trx, sessionId, handle.handleId, handle.plugin);
    });
  }

  /**
   * The session is `actsOn`'s (null: anyone's, on /admin, and then the session need not be known here).
   * @throws DomainError 404 as for an unknown session
   */
  async check(sessionId: number, actsOn: string | null): Promise<void> {
    if (actsOn === null) return;
    if ((await findGatewaySession(this.ctx.db, sessionId))?.owner !== actsOn) throw noSuchSession(sessionId);
  }

  /**
   * The handle's plugin, once the handle is known to belong to the session and the session to `actsOn`;
   * undefined on /admin for a handle not made through the API. @throws DomainError 404 as Janus would answer
   */
  async checkHandle(sessionId: number, handleId: number, actsOn: string | null): Promise<string | undefined> {
    const handle = await findGatewayHandle(this.ctx.db, sessionId, handleId);
    if (actsOn === null) return handle?.plugin;
    if (handle?.owner === actsOn) return handle.plugin;
    // Which of the two Janus would say: the session is the caller's, or it is nobody's the caller may know.
    await this.check(sessionId, actsOn);
    throw gatewayDomainError(new JanusApiError(459, `No such handle ${handleId} in session ${sessionId}`, {}));
  }

  /**
   * Whether one more handle may be attached to the session, on what is recorded now: true when the session is
   * recorded (and so its handles counted), false on /admin for one made elsewhere.
   * @throws DomainError 404 (not the caller's), 429 (the session has its handles)
   */
  async admitHandle(sessionId: number, actsOn: string | null): Promise<boolean> {
    const session = await findGatewaySession(this.ctx.db, sessionId);
    if (!session && actsOn === null) return false;
    if (!session || (actsOn !== null && session.owner !== actsOn)) throw noSuchSession(sessionId);
    if (session.handles >= this.ctx.config.BIMS_GATEWAY_HANDLES_PER_SESSION) throw this.sessionFull();
    return true;
  }

  /**
   * Janus attached `handleId`: counted (only while below the cap: of concurrent attaches, the one past it is
   * refused) and recorded with its plugin. @throws DomainError 429 (the caller then detaches the handle)
   */
  async recordHandle(sessionId: number, handleId: number, plugin: string): Promise<void> {
    const cap = this.ctx.config.BIMS_GATEWAY_HANDLES_PER_SESSION;
    if (!(await addGatewayHandle(this.ctx.db, { sessionId, handleId, plugin }, null, cap))) throw this.sessionFull();
  }

  /** The session is gone from the gateway (stopped, destroyed when idle, found gone): its row and handles go. */
  async forget(sessionId: number): Promise<void> {
    // A place is free: whoever was refused here may try again at once.
    this.refused.clear();
    await deleteGatewaySession(this.ctx.db, sessionId).catch((error: unknown) =>
      this.ctx.log.warn('gateway session row not removed', { sessionId, error: (error as Error)?.message }),
    );
  }

  /** The sessions `owner` holds (getListSession on the root surface shows these only). */
  idsOf(owner: string): Promise<number[]> {
    return listGatewaySessionIds(this.ctx.db, owner);
  }

  /**
   * Rows whose session Janus no longer lists (their node died before it could say so: Janus ended them at its
   * session timeout) go, so that they stop counting against their owner. `liveSessions` is asked only when
   * some row is old enough to judge. Answers how many rows went.
   */
  async prune(liveSessions: () => Promise<number[]>): Promise<number> {
    const before = new Date(this.ctx.now().getTime() - SETTLING_MS);
    const old = await listGatewaySessionsMadeBefore(this.ctx.db, before);
    if (old.length === 0) return 0;
    const live = new Set(await liveSessions());
    return deleteGatewaySessions(
      this.ctx.db,
      old.filter((id) => !live.has(id)),
    );
  }

  private sessionFull(): DomainError {
    const cap = this.ctx.config.BIMS_GATEWAY_HANDLES_PER_SESSION;
    return new DomainError(
      'too-many-requests',
      `This gateway session already has ${cap} handles, as many as one may; stop it and create another`,
      { retryAfterSeconds: RETRY_AFTER_SECONDS, limit: cap },
    );
  }
}

/** What Janus answers for a session it does not have, as the gateway operations report it. */
function noSuchSession(sessionId: number): unknown {
  return gatewayDomainError(new JanusApiError(458, `No such session ${sessionId}`, {}));
}
