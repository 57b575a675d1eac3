import type { MatcherThreads } from '../../../biometrics/matcher-types.js';
import { BiometricError } from '../../../biometrics/errors.js';
import { fromBase64 } from '../../../encoding/base64.js';
import type { ServiceContext } from '../../context.js';
import { GalleryCache } from '../gallery-cache.js';
import type { GalleryMatch } from '../gallery-store.js';
import {
  ShardErrors,
  type MatchReply,
  type MatchRequest,
  type ShardCandidate,
  type ShardState,
} from './match-protocol.js';
import { slotRange } from './shard-map.js';

/** A request a shard cannot answer: a service error code (match-protocol.ts ShardErrors) and why. */
export class ShardError extends Error {
  override name = 'ShardError';
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * One shard of a matcher cluster as a `bims matcher` process holds it: the gallery of its slots (a GalleryCache
 * scoped to them, so the load, the change-log replay, the reconciliation and the search are the in-process
 * gallery's own code) and the answers to the cluster's requests. A request names the change-log id its caller
 * read at its start; the shard answers only once it has applied that id (it replays the log first when behind),
 * so a search sees every change acknowledged before it began, on whichever node it was made.
 */
export class MatcherShard {
  readonly gallery: GalleryCache;

  constructor(
    ctx: ServiceContext,
    readonly shard: number,
    readonly shards: number,
    threads?: MatcherThreads,
  ) {
    this.gallery = new GalleryCache(ctx, 'listen', threads, slotRange(shard, shards));
  }

  /** Answer one request, or throw a ShardError. */
  async answer(request: MatchRequest): Promise<MatchReply> {
    const deadline = Date.now() + request.budgetMs;
    await this.caughtUp(request.changeId ?? 0, deadline);
    if (request.op === 'state') return { op: 'state', shard: this.shard, state: await within(this.state(), deadline) };
    const probe = fromBase64(request.probe);
    // The position the scan starts from, not the one it ends at: a change applied while the threads scan may be
    // missed by them, and the caller re-asks an answer older than the position it needs (matcher-cluster.ts).
    const at = this.gallery.appliedChangeId;
    try {
      if (request.op === 'identify') {
        const found = await this.gallery.identify(probe, {
          topK: request.topK,
          threshold: request.threshold,
          excludeRefs: request.exclude,
        });
        return {
          op: 'identify',
          shard: this.shard,
          changeId: at,
          candidates: found.map(named),
        };
      }
      const match = await this.gallery.verify(probe, request.subjectRef);
      return { op: 'verify', shard: this.shard, changeId: at, match: match && named(match) };
    } catch (error) {
      // An unreadable probe is the caller's fault (it parsed it before sending: so, a stranger on the subject).
      if (error instanceof BiometricError) throw new ShardError(ShardErrors.badRequest, `probe: ${error.message}`);
      throw error;
    }
  }

  /** What this shard holds now. */
  async state(): Promise<ShardState> {
    const [state, stats] = await Promise.all([this.gallery.state(), this.gallery.stats()]);
    return {
      shard: this.shard,
      shards: this.shards,
      subjects: state.subjects,
      templates: state.templates,
      digest: state.digest,
      lastChangeId: state.lastChangeId,
      versions: stats.versions,
    };
  }

  /**
   * Resolve once the gallery holds change `changeId`: one catch-up reads every change committed before it
   * started, which includes any id the caller read before sending. Still behind after it: no such change.
   */
  private async caughtUp(changeId: number, deadline: number): Promise<void> {
    await within(this.gallery.ready(), deadline);
    if (this.gallery.appliedChangeId >= changeId) return;
    await within(this.gallery.catchUp(), deadline);
    if (this.gallery.appliedChangeId < changeId)
      throw new ShardError(ShardErrors.unavailable, `change ${changeId} is not in the gallery change log`);
  }
}

function named(m: GalleryMatch): ShardCandidate {
  return { subject: m.subject, subjectRef: m.subjectRef, subjectId: m.subjectId, cosine: m.cosine, score: m.score };
}

/** `work`, or a 503 ShardError once the request's budget is spent (the caller stops waiting then anyway). */
async function within<T>(work: Promise<T>, deadline: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new ShardError(ShardErrors.unavailable, 'the shard could not catch up within the request budget')),
      Math.max(0, deadline - Date.now()),
    );
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}
