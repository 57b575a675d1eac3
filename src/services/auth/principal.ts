import type { Role } from '../../auth/roles.js';
import type { PendingAccountCheck } from './account-check.js';

/** Who is calling: an account (Basic or a token on its behalf) or an OAuth client acting for itself. */
export interface Principal {
  accountId: number | null;
  username: string;
  role: Role;
  via: 'basic' | 'bearer';
  clientId?: string;
  /**
   * A Bearer token's account check still to be made, by the read's own statement or before the answer goes out
   * (services/auth/account-check.ts); until then `username` and `role` are the token's.
   */
  accountCheck?: PendingAccountCheck;
}

const rank: Record<Role, number> = { USER: 1, ADJUDICATOR: 2, ADMIN: 3 };

/** ADMIN covers ADJUDICATOR covers USER. */
export function roleCovers(held: Role, needed: Role): boolean {
  return rank[held] >= rank[needed];
}

/** Spring-style authorities granted by a role, as `LoginResponse.authorities` reports them. */
export function authoritiesOf(role: Role): string[] {
  const all: Role[] = ['ADMIN', 'ADJUDICATOR', 'USER'];
  return all.filter((r) => roleCovers(role, r)).map((r) => `ROLE_${r}`);
}
