/**
 * The fair share of a media resource (gateway sessions, captures, decoders), one rule for each: an owner (an
 * account, or an OAuth client acting for itself) holds at most `perOwner`; the service at most `total`; and
 * the last `reserve` of the total go only to owners that hold fewer than `newcomer` (one capture's worth), so
 * that however much one owner, or a few, took, another can still start one. With `perOwner` at most
 * `total - reserve`, one owner alone can never reach the reserve.
 */
export interface ShareLimits {
  perOwner: number;
  total: number;
  reserve: number;
  newcomer: number;
}

/** What the asking owner holds of the resource, and what every owner holds together. */
interface Holding {
  mine: number;
  total: number;
}

/**
 * Why one more is refused: the owner is at its cap (`owner-cap`), it holds some and only the reserve is left
 * (`reserved`), or everything is taken (`full`).
 */
export type ShareRefusal = 'owner-cap' | 'reserved' | 'full';

/** Whether the owner may take one more: null when it may, else why not. */
export function judgeShare(holding: Holding, limits: ShareLimits): ShareRefusal | null {
  if (holding.mine >= limits.perOwner) return 'owner-cap';
  if (holding.total >= limits.total) return 'full';
  if (holding.total >= limits.total - limits.reserve && holding.mine >= limits.newcomer) return 'reserved';
  return null;
}

/** The limits of a resource from its two settings: the reserve is one owner's cap, a newcomer one unit of `unit`. */
export function shareLimits(perOwner: number, total: number, unit = 1): ShareLimits {
  return { perOwner, total, reserve: Math.min(perOwner, total - 1), newcomer: unit };
}
