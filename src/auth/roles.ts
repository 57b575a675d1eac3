/**
 * The two words of the access model, declared once: what a credential holds (a role, also the OAuth scope)
 * and where an operation is mounted (a surface). They belong to authorisation, not to HTTP, so services,
 * schemas and the database types import them from here rather than from the operation table.
 */

/** Roles, strongest first: ADMIN covers ADJUDICATOR covers USER. */
export const ROLES = ['ADMIN', 'ADJUDICATOR', 'USER'] as const;
export type Role = (typeof ROLES)[number];

/** The three surfaces of the interface (seed section 1): `/admin`, the root (and `/adjudicator`), `/user`. */
export const SURFACES = ['admin', 'root', 'user'] as const;
export type Surface = (typeof SURFACES)[number];
