import type { ShareLimits, ShareRefusal } from '../../gateway/fair-share.js';
import { DomainError } from '../errors.js';

/** How long a refused caller is told to wait: sessions and captures end in seconds to minutes. */
export const RETRY_AFTER_SECONDS = 10;

/**
 * The problem a refused admission answers: 429 when the refusal is about the caller's own share (its cap, or
 * the reserve it may not enter while it holds some), 503 when the whole service is full. Both say what frees
 * a place, and carry Retry-After.
 */
export function shareRefusal(
  why: ShareRefusal,
  what: { plural: string; freedBy: string },
  limits: ShareLimits,
): DomainError {
  const extras = { retryAfterSeconds: RETRY_AFTER_SECONDS, limit: limits.perOwner };
  if (why === 'owner-cap')
    return new DomainError(
      'too-many-requests',
      `This account already holds ${limits.perOwner} ${what.plural}, as many as it may at once; ${what.freedBy}`,
      extras,
    );
  if (why === 'reserved')
    return new DomainError(
      'too-many-requests',
      `The service keeps its last ${limits.reserve} ${what.plural} for accounts that hold none, and this account holds some; ${what.freedBy}`,
      extras,
    );
  return new DomainError(
    'service-unavailable',
    `All ${limits.total} ${what.plural} of the service are in use; try again later`,
    { retryAfterSeconds: RETRY_AFTER_SECONDS, limit: limits.total },
  );
}
