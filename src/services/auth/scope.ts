import type { Role } from '../../auth/roles.js';
import { OAuthError } from './oauth-error.js';

/**
 * OAuth scopes are our roles. Because ADMIN covers ADJUDICATOR covers USER, a token carries exactly one
 * scope, the strongest one granted; a request may ask for less than the caller holds, never more.
 */
const rank: Record<Role, number> = { USER: 1, ADJUDICATOR: 2, ADMIN: 3 };
const roles = Object.keys(rank) as Role[];

/** The weaker of two roles: what a token may carry when two ceilings apply (account and client). */
export function weakerRole(a: Role, b: Role): Role {
  return rank[a] <= rank[b] ? a : b;
}

/**
 * Parse a `scope` parameter (space-delimited, RFC 6749 3.3) into the strongest role it names; undefined when
 * absent or empty. Unknown scope values are refused rather than ignored so that a typo cannot silently give
 * a token other than the one the client meant to ask for.
 */
export function parseScope(text: string | undefined): Role | undefined {
  if (text === undefined || text.trim() === '') return undefined;
  let strongest: Role | undefined;
  for (const value of text.trim().split(/ +/)) {
    const role = roles.find((r) => r === value.toUpperCase());
    if (!role)
      throw new OAuthError(
        'invalid_scope',
        `Unknown scope '${value.slice(0, 40)}'; the scopes are ${roles.join(', ')}`,
      );
    if (!strongest || rank[role] > rank[strongest]) strongest = role;
  }
  return strongest;
}

/**
 * The scope to grant: the requested one if the ceiling covers it, the ceiling itself when nothing was asked.
 *
 * @example narrowScope('USER', 'ADMIN') === 'USER'; narrowScope('ADMIN', 'USER') throws invalid_scope
 */
export function narrowScope(requested: string | undefined, ceiling: Role): Role {
  const wanted = parseScope(requested);
  if (!wanted) return ceiling;
  if (rank[wanted] > rank[ceiling]) {
    throw new OAuthError(
      'invalid_scope',
      `The scope ${wanted} exceeds what was granted (${ceiling}); a scope may only be narrowed`,
    );
  }
  return wanted;
}
