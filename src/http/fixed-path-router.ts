import type { Result, Router } from 'hono/router';
import { TrieRouter } from 'hono/router/trie-router';

/** Methods whose answers for fixed paths are kept (any other method token is matched afresh, so the map stays bounded). */
const KEPT_METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/**
 * Hono's trie router, with the match of each fixed path (a route path without `:param` or `*`) kept once made:
 * `/health`, `/ready`, `/admin/subjects` and the other fixed paths then cost one map lookup instead of a walk of
 * the trie (a twentieth of a `/health` request).
 *
 * Why not Hono's RegExpRouter, which does the same for fixed paths and compiles the rest into one expression: it
 * refuses our table (a parameter and a fixed segment at the same place under two parameterised routes, as in
 * `/admin/subjects/:subjectId` and `/admin/subjects/multimodal/:subjectId`), so Hono's default SmartRouter falls
 * back to the trie for every path.
 *
 * A match is the same for every request of a method and path once the routes are added (Hono's own RegExpRouter
 * hands out one shared result per fixed path too); a route added later forgets what was kept. Only the fixed
 * paths of the table and the usual methods are kept, so no request can make the map grow.
 */
export class FixedPathRouter<T> implements Router<T> {
  readonly name = 'FixedPathRouter';
  readonly #trie = new TrieRouter<T>();
  readonly #fixedPaths = new Set<string>();
  readonly #kept = new Map<string, Result<T>>();

  add(method: string, path: string, handler: T): void {
    this.#trie.add(method, path, handler);
    if (!path.includes(':') && !path.includes('*')) this.#fixedPaths.add(path);
    this.#kept.clear();
  }

  match(method: string, path: string): Result<T> {
    if (!this.#fixedPaths.has(path) || !KEPT_METHODS.has(method)) return this.#trie.match(method, path);
    const key = `${method} ${path}`;
    let result = this.#kept.get(key);
    if (!result) {
      result = this.#trie.match(method, path);
      this.#kept.set(key, result);
    }
    return result;
  }
}
