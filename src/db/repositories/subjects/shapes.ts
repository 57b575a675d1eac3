import { CompiledQuery } from 'kysely';

/**
 * Statements compiled once per shape. A read whose SQL text depends on its shape only (which filters are given,
 * the sort, whether an owner limits it), not on its values, is built and compiled by Kysely once per shape and
 * process; each call binds its values by name. Building and compiling cost about as much as the rest of a
 * subject read on our side.
 */

/** A value bound when a statement compiled once runs: it stands where the value goes while the statement is built. */
class Slot {
  constructor(readonly name: string) {}
}

/** `slot(name)` in place of a value while building a statement for {@link compiledOnce}. */
export type SlotOf = <T>(name: string) => T;
const slot: SlotOf = <T>(name: string) => new Slot(name) as unknown as T;

const compiled = new Map<string, CompiledQuery>();

/**
 * The statement of `shape`, built by `build` with `slot(name)` wherever a value goes, compiled on first use.
 * `shape` must name everything that changes the SQL text (and never a value).
 */
export function compiledOnce(shape: string, build: (slot: SlotOf) => CompiledQuery): CompiledQuery {
  let query = compiled.get(shape);
  if (!query) {
    query = build(slot);
    compiled.set(shape, query);
  }
  return query;
}

/** `query` with its slots' values from `values` (a missing one is an error of ours). */
export function bound(query: CompiledQuery, values: Readonly<Record<string, unknown>>): CompiledQuery {
  const parameters = query.parameters.map((p) => {
    if (!(p instanceof Slot)) return p;
    if (!(p.name in values)) throw new Error(`no value for ${p.name} in ${query.sql.slice(0, 80)}`);
    return values[p.name];
  });
  return CompiledQuery.raw(query.sql, parameters);
}
