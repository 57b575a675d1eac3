import type { Config } from '../../config/config.js';
import {
  countThrottleFailures,
  deleteThrottleRow,
  deleteThrottleRowsExpiredBefore,
  deleteThrottleRowsOfAddress,
  findThrottleRows,
} from '../../db/repositories/auth/login-throttle.js';
import type { Queryable } from '../../db/repositories/queryable.js';
import { DomainError } from '../errors.js';

/** The numbers of the throttling policy (docs/login-throttling.md), in milliseconds where they are times. */
interface ThrottlePolicy {
  freeFailures: number;
  maxDelayMs: number;
  forgetMs: number;
  addressFailures: number;
  addressWindowMs: number;
}

export function throttlePolicy(config: Config): ThrottlePolicy {
  return {
    freeFailures: config.BIMS_LOGIN_FREE_FAILURES,
    maxDelayMs: config.BIMS_LOGIN_MAX_DELAY_SECONDS * 1000,
    forgetMs: config.BIMS_LOGIN_FORGET_SECONDS * 1000,
    addressFailures: config.BIMS_LOGIN_ADDRESS_FAILURES,
    addressWindowMs: config.BIMS_LOGIN_ADDRESS_WINDOW_SECONDS * 1000,
  };
}

/** What a check of credentials found: the value on success, the reason of a failure. */
export type Verdict<T> = { ok: true; value: T } | { ok: false; reason: string };

/** The subject under which an address's total of failures is kept (no account or client id can be `*`). */
const ADDRESS_TOTAL = '*';
const PRUNE_EVERY_MS = 60_000;
/** Longest life of a remembered clean standing (see {@link LoginThrottle.clean}), whatever happens. */
const CLEAN_TTL_MS = 30_000;
/** Most clean pairs remembered; the oldest go first. */
const CLEAN_LIMIT = 10_000;

interface Standing {
  pairFailures: number;
  pairLastFailure: number;
  /** A pair row exists (expired or not), so a success has one to delete. */
  pairRow: boolean;
  overBudget: boolean;
}

const tooMany = (waitMs: number) =>
  new DomainError('too-many-requests', 'Too many failed logins; try again later', {
    retryAfterSeconds: Math.max(1, waitMs / 1000),
  });

/**
 * Slows password guessing without letting anyone lock a stranger out (OWASP ASVS V2.2). Failures are
 * counted per (subject, address), the subject being an account's user name or a client id: after
 * `freeFailures` of them each attempt of that pair waits 1 s, 2 s, 4 s, ... up to `maxDelayMs`, and a
 * success clears the pair. An attacker elsewhere never delays the account's owner, who comes from another
 * address. Each address also has a budget of failures across subjects per window; past it, a subject that
 * has failed from that address is refused from it for `maxDelayMs` after its last failure, while a subject
 * that has not is still checked: colleagues behind one NAT keep signing in with their passwords, and guessing
 * from there is held to one attempt per account per `maxDelayMs`.
 *
 * The counts live in the `login_throttle` table, so every node sees the same ones: a failure is one upsert of
 * two rows, a success with a failing past one delete, and a check one primary-key read. Distinct guesses for
 * one pair running at the same time count as failures already (else a burst of parallel guesses would all
 * be checked before the first failure is written); the same credentials sent in parallel, as an integration
 * does, are checked once and share the verdict.
 */
export class LoginThrottle {
  /** pair -> guess (a hash of the credentials) -> its check in progress. */
  private inFlight = new Map<string, Map<string, Promise<Verdict<unknown>>>>();
  /**
   * pair -> failures this process has seen since it started counting them. A check's standing is read before it
   * may start; failures recorded by checks that ended while that read was on its way are not in it, so they are
   * counted here too (the read may have seen some of them: counting them twice only refuses sooner).
   */
  private failedHere = new Map<string, number>();
  private lastPrune = 0;
  /**
   * pair -> until when its standing is known clean (no failure of the pair, the address within its budget),
   * kept only where this process is the table's one writer (PGlite): a page that polls with Basic credentials
   * (a capture's trickle, three times a second) then costs no statement here. A clean standing only gets
   * worse through a failure from the address, which this process records itself and which forgets every clean
   * pair of this process ({@link forgetClean}), before the failure's write and again once it is committed; a
   * read under way meanwhile is not kept (the generation). Rows that expire only make a standing cleaner.
   */
  private clean = new Map<string, number>();
  private cleanGeneration = 0;

  constructor(
    private readonly db: Queryable,
    private readonly now: () => number,
    private readonly policy: ThrottlePolicy,
    /** This process is the only writer of the throttle's table (PGlite): clean standings may be remembered. */
    private readonly soleWriter = false,
  ) {}

  /**
   * Check credentials for `subject` from `address` under the policy: throws 429 (`too-many-requests`) when
   * the pair may not try now, else runs `check` and records its verdict. `guess` identifies the credentials
   * (a hash, never the secret itself) so that identical concurrent attempts are checked once.
   */
  async attempt<T>(
    subject: string,
    address: string,
    guess: string,
    check: () => Promise<Verdict<T>>,
  ): Promise<Verdict<T>> {
    subject = subject.slice(0, 200);
    address = address.slice(0, 100);
    const pair = `${address}\u0000${subject}`;
    const same = this.inFlight.get(pair)?.get(guess);
    if (same) return same as Promise<Verdict<T>>;

    const failedBefore = this.failedHere.get(pair) ?? 0;
    const standing = await this.standing(subject, address);
    const failedSince = (this.failedHere.get(pair) ?? 0) - failedBefore;
    const lockedFor = this.lockedFor(standing);
    if (lockedFor > 0) throw tooMany(lockedFor);

    const flights = this.inFlight.get(pair) ?? new Map<string, Promise<Verdict<unknown>>>();
    const joined = flights.get(guess);
    if (joined) return joined as Promise<Verdict<T>>;
    // One try is allowed once a lock has run out, unless failures came in while the standing was read.
    const allowed = standing.overBudget
      ? 1
      : Math.max(failedSince > 0 ? 0 : 1, this.policy.freeFailures - standing.pairFailures - failedSince);
    if (flights.size >= allowed) throw tooMany(1000);

    const verdict = (async (): Promise<Verdict<T>> => {
      const result = await check();
      if (!result.ok) {
        if (this.failedHere.size > 10_000) this.failedHere.clear();
        this.failedHere.set(pair, (this.failedHere.get(pair) ?? 0) + 1);
        this.forgetClean();
        try {
          await this.fail(subject, address);
        } finally {
          this.forgetClean();
        }
      } else if (standing.pairRow) await deleteThrottleRow(this.db, address, subject);
      return result;
    })();
    flights.set(guess, verdict);
    this.inFlight.set(pair, flights);
    try {
      return await verdict;
    } finally {
      flights.delete(guess);
      if (flights.size === 0 && this.inFlight.get(pair) === flights) this.inFlight.delete(pair);
    }
  }

  /** Forget what was counted from an address (every subject, and its total): for tests and operators. */
  async forget(address: string): Promise<void> {
    await deleteThrottleRowsOfAddress(this.db, address.slice(0, 100));
  }

  /** Every remembered clean standing goes, and reads under way are not kept. */
  private forgetClean(): void {
    this.cleanGeneration++;
    this.clean.clear();
  }

  private async standing(subject: string, address: string): Promise<Standing> {
    const pair = `${address}\u0000${subject}`;
    const cleanUntil = this.clean.get(pair);
    if (cleanUntil !== undefined) {
      if (cleanUntil > this.now()) return { pairFailures: 0, pairLastFailure: 0, pairRow: false, overBudget: false };
      this.clean.delete(pair);
    }
    const generation = this.cleanGeneration;
    const standing = await this.read(subject, address);
    const isClean = !standing.pairRow && !standing.overBudget;
    if (this.soleWriter && isClean && generation === this.cleanGeneration) {
      while (this.clean.size >= CLEAN_LIMIT) this.clean.delete(this.clean.keys().next().value!);
      this.clean.set(pair, this.now() + CLEAN_TTL_MS);
    }
    return standing;
  }

  private async read(subject: string, address: string): Promise<Standing> {
    const rows = await findThrottleRows(this.db, address, [subject, ADDRESS_TOTAL]);
    const now = this.now();
    const live = (row: (typeof rows)[number] | undefined) => (row && row.expires_at.getTime() > now ? row : undefined);
    const pairRow = rows.find((r) => r.subject === subject);
    const pair = live(pairRow);
    const total = live(rows.find((r) => r.subject === ADDRESS_TOTAL));
    return {
      pairFailures: pair?.failures ?? 0,
      pairLastFailure: pair ? pair.last_failure_at.getTime() : 0,
      pairRow: pairRow !== undefined,
      overBudget: (total?.failures ?? 0) >= this.policy.addressFailures,
    };
  }

  /** Milliseconds the pair must still wait; 0 when it may try now. */
  private lockedFor(standing: Standing): number {
    const { freeFailures, maxDelayMs } = this.policy;
    let delay = 0;
    if (standing.pairFailures >= freeFailures)
      delay = Math.min(maxDelayMs, 1000 * 2 ** Math.min(40, standing.pairFailures - freeFailures));
    if (standing.overBudget && standing.pairFailures > 0) delay = maxDelayMs;
    return Math.max(0, standing.pairLastFailure + delay - this.now());
  }

  /**
   * Count a failure for the pair and for the address, in one statement. A pair's memory slides with each
   * failure; the address's window is fixed from its first failure. A row past its expiry starts again at 1.
   */
  private async fail(subject: string, address: string): Promise<void> {
    const now = this.now();
    const at = new Date(now);
    const rows = [
      { subject, expiresAt: new Date(now + this.policy.forgetMs) },
      { subject: ADDRESS_TOTAL, expiresAt: new Date(now + this.policy.addressWindowMs) },
    ];
    await countThrottleFailures(this.db, address, at, rows, ADDRESS_TOTAL);
    if (now - this.lastPrune >= PRUNE_EVERY_MS) {
      this.lastPrune = now;
      await deleteThrottleRowsExpiredBefore(this.db, at);
    }
  }
}
