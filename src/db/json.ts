/**
 * Values for jsonb columns. Both drivers are given JSON text rather than objects: `pg` would turn a JS array
 * into a PostgreSQL array literal, and PGlite infers types differently, so text is the one form both agree on.
 */
export function json(value: unknown): string {
  return JSON.stringify(value ?? null);
}
