import { operationTable } from '../../src/operations/index.js';
import type { OperationSpec } from '../../src/operations/types.js';
import type { Role, Surface } from '../../src/auth/roles.js';
import { parseSeedOperations } from './seed.js';

/** One mounted route: an operation of the table on one of its surfaces. */
export interface Route {
  spec: OperationSpec;
  surface: Surface;
  /** The full templated path as the seed writes it, e.g. `/admin/subjects/{subjectId}`. */
  path: string;
  /** The weakest role the seed's surface semantics let through (see {@link expectedRole}). */
  role: Role;
  /** The table declares the operation open (no credentials read or demanded), e.g. the dashboard's GET. */
  open: boolean;
}

/**
 * The role a full seed path demands, from the seed's section 5 rules and the prefix alone: `/admin` is an
 * admin endpoint, `/adjudicator` an adjudicator endpoint, `/user` a user endpoint. The seed leaves the
 * unprefixed root surface open ("not shown", rule 6); docs/interface.md (once the README) decides it is ADMIN. Deliberately not
 * `requiredRole()` from src: the matrix must be able to catch that function being wrong.
 */
export function expectedRole(fullPath: string): Role {
  if (fullPath.startsWith('/user/')) return 'USER';
  if (fullPath.startsWith('/adjudicator/')) return 'ADJUDICATOR';
  return 'ADMIN';
}

/**
 * Every operation of the table on every surface it is mounted on, with the path and role taken from the
 * seed document (so a table entry that drifts from the seed shows up as a wrong answer, not a silent pass).
 */
export function allRoutes(): Route[] {
  const seed = new Map(parseSeedOperations().map((o) => [o.id, o]));
  const out: Route[] = [];
  for (const spec of operationTable) {
    const fromSeed = seed.get(spec.id);
    if (!fromSeed) throw new Error(`${spec.id} is not in the seed`);
    for (const surface of spec.surfaces) {
      const path = fromSeed.paths[surface];
      if (!path) throw new Error(`${spec.id} is mounted on ${surface} but the seed does not list it there`);
      // Read without the type's help: `open` is the table's own declaration, and it is new.
      const open = Boolean((spec as { open?: unknown }).open);
      out.push({ spec, surface, path, role: expectedRole(path), open });
    }
  }
  return out;
}

/** ADMIN covers ADJUDICATOR covers USER (seed section 5, rules 1-3), restated here for the same reason. */
export function holds(held: Role, needed: Role): boolean {
  const rank = { USER: 1, ADJUDICATOR: 2, ADMIN: 3 } as const;
  return rank[held] >= rank[needed];
}
