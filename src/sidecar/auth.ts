import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Whether an `Authorization` header carries the sidecar's Bearer token. Both sides are hashed first so the
 * comparison takes the same time whatever the presented token's length or content.
 */
export function bearerMatches(header: string | undefined, token: string): boolean {
  const presented = /^Bearer ([^\s]+)$/.exec(header ?? '')?.[1] ?? '';
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(presented), digest(token)) && presented.length > 0;
}
