import type { NatsConnection } from 'nats';
import { mergeCandidates } from '../../../biometrics/candidate-order.js';
import { toBase64 } from '../../../encoding/base64.js';
import { DomainError } from '../../errors.js';
import type { Logger } from '../../../logger.js';
import type { GallerySearch } from '../gallery-service.js';
import type { GalleryMatch } from '../gallery-store.js';
import {
  decodeReply,
  encodeMessage,
  shardSubject,
  type MatchReply,
  type MatchRequest,
  type ShardState,
} from './match-protocol.js';
import { shardOf } from './shard-map.js';

/** How an API node reaches the matcher cluster: the shard count, the subjects' prefix, the deadline. */
interface MatcherClusterOptions {
  shards: number;
  /** First token of every subject (several deployments may share one NATS). */
  prefix: string;
  /** How long one operation waits for a shard's answer, retries included (BIMS_MATCHER_TIMEOUT_MS). */
  timeoutMs: number;
  log: Logger;
}

/** What the cluster needs of a NATS connection. */
type NatsRequester = Pick<NatsConnection, 'request'>;

/**
 * No replica subscribed: retried this long (a replica whose NATS server went down reconnects to another one in
 * tens of milliseconds), then the operation is 503 at once rather than at its deadline.
 */
const NO_RESPONDERS_GRACE_MS = 1000;
const SERVICE_ERROR_CODE = 'Nats-Service-Error-Code';
const SERVICE_ERROR = 'Nats-Service-Error';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The API node's side of a matcher cluster: scatter-gather over NATS. A 1:N search goes to every shard (one
 * replica of each, chosen by the NATS queue group) and the answers are merged into the same list one process
 * holding the whole gallery gives (each shard answers its exact best `topK` in the one candidate order,
 * biometrics/candidate-order.ts). Every shard must answer: a shard that does not within the deadline makes the
 * operation 503 (`component: matcher`), never a shorter list, which could let a duplicate enrol.
 */
export class MatcherCluster {
  /** Answers thrown away because the shard had answered from before the search's position (and re-asked). */
  stale = 0;

  constructor(
    private readonly nc: NatsRequester,
    readonly options: MatcherClusterOptions,
  ) {}

  /** 1:N over every shard, answered at change-log position `at` or later. */
  async identify(probe: Uint8Array, search: GallerySearch, at: ChangePosition): Promise<GalleryMatch[]> {
    const request = {
      op: 'identify' as const,
      probe: toBase64(probe),
      topK: search.topK,
      threshold: search.threshold,
      exclude: search.excludeRefs ?? [],
    };
    const deadline = Date.now() + this.options.timeoutMs;
    // The position is in the list so that its failure is handled even when every shard has failed first.
    const [, ...replies] = await Promise.all([
      latestOf(at),
      ...this.everyShard().map((shard) => this.askAt(shard, request, at, deadline)),
    ]);
    return mergeCandidates(
      replies.map((r) => (r.op === 'identify' ? r.candidates : [])),
      search.topK,
    );
  }

  /** 1:1 against one subject, on the shard that holds it, answered at change-log position `at` or later. */
  async verify(probe: Uint8Array, subjectRef: number, at: ChangePosition): Promise<GalleryMatch | null> {
    const shard = shardOf(subjectRef, this.options.shards);
    const deadline = Date.now() + this.options.timeoutMs;
    const [, reply] = await Promise.all([
      latestOf(at),
      this.askAt(shard, { op: 'verify', probe: toBase64(probe), subjectRef }, at, deadline),
    ]);
    return reply.op === 'verify' ? reply.match : null;
  }

  /** What each shard holds (one replica's view, at `changeId` or later), and the shards that did not answer. */
  async states(changeId?: number): Promise<{ states: ShardState[]; missing: number[] }> {
    const answers = await Promise.allSettled(
      this.everyShard().map((shard) => this.ask(shard, { op: 'state', changeId })),
    );
    const states: ShardState[] = [];
    const missing: number[] = [];
    answers.forEach((a, shard) => {
      if (a.status === 'fulfilled' && a.value.op === 'state') states.push(a.value.state);
      else missing.push(shard);
    });
    return { states, missing };
  }

  private everyShard(): number[] {
    return Array.from({ length: this.options.shards }, (_, shard) => shard);
  }

  /**
   * One shard's answer at change-log position `at` or later. With the position still being read, the probe is
   * sent at once with the floor; the shard reports the position it had applied before its scan, and once the
   * read completes a shard that was behind it is asked again at it (it catches up first): its first list, from
   * before a change the search must see, is thrown away. So the read and the request overlap, and an answer is
   * never older than the position.
   */
  private async askAt(
    shard: number,
    body: DistributiveOmit<SearchRequest, 'changeId' | 'budgetMs'>,
    at: ChangePosition,
    deadline: number,
  ): Promise<MatchReply> {
    if (typeof at === 'number') return this.ask(shard, { ...body, changeId: at }, deadline);
    const first = await this.ask(shard, { ...body, changeId: at.floor }, deadline);
    const latest = await at.latest;
    if (answeredAt(first) >= latest) return first;
    this.stale += 1;
    return this.ask(shard, { ...body, changeId: latest }, deadline);
  }

  /**
   * One shard's answer within the deadline. The first attempt gets half of it, so that a replica that died
   * holding the request leaves time to ask another; a shard that is behind (503) or has no replica subscribed
   * for a moment is asked again after a short pause. Anything else, or the deadline, is 503 for the operation.
   */
  private async ask(
    shard: number,
    body: DistributiveOmit<MatchRequest, 'budgetMs'>,
    deadline = Date.now() + this.options.timeoutMs,
  ): Promise<MatchReply> {
    const subject = shardSubject(this.options.prefix, this.options.shards, shard);
    const started = Date.now();
    let why = 'no attempt';
    for (let attempt = 0; ; attempt++) {
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw this.unavailable(shard, why);
      const timeout = attempt === 0 && remaining >= 200 ? Math.ceil(remaining / 2) : remaining;
      // The shard gives up a little before we do, so its own 503 (and why) reaches us.
      const budgetMs = Math.max(1, Math.floor(timeout * 0.8));
      try {
        const msg = await this.nc.request(subject, encodeMessage({ ...body, budgetMs } as MatchRequest), { timeout });
        const code = msg.headers?.get(SERVICE_ERROR_CODE);
        if (!code) return decodeReply(msg.data);
        why = `shard answered ${code}: ${msg.headers?.get(SERVICE_ERROR) ?? ''}`;
        // A refusal or a failure of the shard (its log says which): a fault on our side, for the exception log.
        if (code !== '503') throw new ShardFailure(`matcher shard ${shard} of ${this.options.shards}: ${why}`);
      } catch (error) {
        if (error instanceof DomainError || error instanceof ShardFailure) throw error;
        const code = (error as { code?: string }).code;
        if (code === '503') {
          why = 'no replica is subscribed';
          if (Date.now() - started >= NO_RESPONDERS_GRACE_MS) throw this.unavailable(shard, why);
        } else if (code === 'TIMEOUT') {
          why = `no answer within ${timeout} ms`;
          continue;
        } else why = `NATS: ${error instanceof Error ? error.message : String(error)}`;
      }
      await pause(Math.min(25 * 2 ** Math.min(attempt, 4), Math.max(0, deadline - Date.now())));
    }
  }

  private unavailable(shard: number, why: string): DomainError {
    this.options.log.warn('matcher shard unavailable', { shard, shards: this.options.shards, reason: why });
    return new DomainError(
      'service-unavailable',
      `The matcher is unavailable: shard ${shard} of ${this.options.shards} did not answer`,
      { component: 'matcher', retryAfterSeconds: 1 },
      why,
    );
  }
}

/** A shard refused or failed a request (not a matter of availability): answered 500 and logged as an exception. */
class ShardFailure extends Error {
  override name = 'ShardFailure';
}

/**
 * The change-log position a search must be answered at: a number already read, or the highest position the
 * caller knows of (`floor`, sent with the first request) and the read of the latest one, still running.
 */
export type ChangePosition = number | { floor: number; latest: Promise<number> };

type SearchRequest = Extract<MatchRequest, { op: 'identify' | 'verify' }>;

function latestOf(at: ChangePosition): Promise<number> {
  return typeof at === 'number' ? Promise.resolve(at) : at.latest;
}

/** The position a shard's answer was computed at (what it had applied before its scan). */
function answeredAt(reply: MatchReply): number {
  return reply.op === 'state' ? reply.state.lastChangeId : reply.changeId;
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
