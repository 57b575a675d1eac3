import type { Principal } from '../auth/principal.js';
import type { Surface } from '../../auth/roles.js';

/** Who calls a gateway operation, and on which surface. */
export interface GatewayCaller {
  principal: Principal;
  surface: Surface;
}

/**
 * The key a gateway session, handle or capture is recorded under: the caller's account, or, for an OAuth
 * client acting for itself (no account), that client. Every node reads the same key from the database.
 */
export function ownerKeyOf(principal: Principal): string {
  if (principal.accountId !== null) return `account:${principal.accountId}`;
  return `client:${principal.clientId ?? principal.username}`;
}

/**
 * Whose sessions the caller may act on (docs/media-gateway.md, "Whose session"): its own on `/user` and on the
 * root surface; any on `/admin` (null). Not the operation log's rule (services/ownership.ts), under which the
 * root surface sees everything: a gateway session is a live connection, and the one of another account is not
 * an ADMIN's to disturb unless it goes to /admin for it.
 */
export function actsOnOf(caller: GatewayCaller): string | null {
  return caller.surface === 'admin' ? null : ownerKeyOf(caller.principal);
}
