/**
 * LIKE patterns built from what a user typed. Escaping is the database's business, so it lives beside the
 * repositories; services/query-helpers.ts re-exports it for services that have not moved their SQL yet.
 */

/** Escape `%`, `_` and `\` so a user's text is matched literally by LIKE. */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (ch) => `\\${ch}`);
}

/** The LIKE pattern of "starts with `prefix`", the prefix matched literally. */
export function likePrefix(prefix: string): string {
  return `${escapeLike(prefix)}%`;
}
