import { DomainError } from '../services/errors.js';

interface Entry {
  failures: number;
  lockedUntil: number;
  lastFailure: number;
}

/**
 * Slows password guessing: after `freeFailures` failed attempts for a key (a user name, or a client
 * address) each further attempt is refused for an exponentially growing time, up to `maxLockMs`. A success
 * clears the key; failures are forgotten after `windowMs` of quiet. Kept per process: a cluster gets a
 * budget per node, which still makes online guessing impractical.
 */
export class LoginThrottle {
  private entries = new Map<string, Entry>();

  constructor(
    private readonly now: () => number,
    private readonly freeFailures = 5,
    private readonly maxLockMs = 15 * 60_000,
    private readonly windowMs = 15 * 60_000,
  ) {}

  /** Throw 429 if any of the keys is locked. */
  check(keys: string[]): void {
    const now = this.now();
    for (const key of keys) {
      const entry = this.entries.get(key);
      if (entry && entry.lockedUntil > now) {
        throw new DomainError('too-many-requests', 'Too many failed logins; try again later', {
          retryAfterSeconds: (entry.lockedUntil - now) / 1000,
        });
      }
    }
  }

  fail(keys: string[]): void {
    const now = this.now();
    for (const key of keys) {
      let entry = this.entries.get(key);
      if (!entry || now - entry.lastFailure > this.windowMs) entry = { failures: 0, lockedUntil: 0, lastFailure: now };
      entry.failures += 1;
      entry.lastFailure = now;
      if (entry.failures >= this.freeFailures) {
        const delay = Math.min(this.maxLockMs, 1000 * 2 ** (entry.failures - this.freeFailures));
        entry.lockedUntil = now + delay;
      }
      this.entries.set(key, entry);
    }
    if (this.entries.size > 100_000) this.prune(now);
  }

  succeed(keys: string[]): void {
    for (const key of keys) this.entries.delete(key);
  }

  private prune(now: number): void {
    for (const [key, entry] of this.entries) {
      if (now - entry.lastFailure > this.windowMs && entry.lockedUntil < now) this.entries.delete(key);
    }
  }
}
