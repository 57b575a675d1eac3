import type { Principal } from '../auth/principal.js';
import { DomainError } from '../errors.js';

/**
 * Leases and decisions are recorded against an account, so an OAuth client acting for itself (no account)
 * cannot adjudicate: it is refused with 403 rather than recorded anonymously.
 */
export function adjudicatorAccount(principal: Principal): number {
  if (principal.accountId === null) {
    throw new DomainError(
      'forbidden',
      'Adjudication is recorded per account; an OAuth client acting for itself cannot adjudicate',
    );
  }
  return principal.accountId;
}
