import { CompiledQuery, type Kysely } from 'kysely';
import type { Database } from './tables.js';

/**
 * Hot queries as named prepared statements: PostgreSQL parses and plans each of them once per connection
 * instead of on every request, and Kysely does not build and compile their SQL on every request either.
 *
 * A {@link PreparedQuery} holds its SQL text with `$n` parameters; the `pg` pool made by connect.ts looks the
 * text up here (`nameStatements`) and sends it under its name (`pg` then parses it once per connection
 * and only binds and executes it afterwards). PGlite runs the same text, unnamed: it is one process with no
 * network between, and what a named statement would save it there is the planning only.
 */

/** SQL text -> statement name, for the connections to use. */
const names = new Map<string, string>();

/**
 * Name a query built at run time (a list whose filters and sort vary): each distinct SQL text becomes a
 * statement of its own. Only for texts drawn from a bounded set (filter combinations x sort fields), never
 * for texts that carry values.
 */
export function nameStatement(text: string, prefix: string): void {
  if (!names.has(text)) names.set(text, `bims_${prefix}_${names.size}`);
}

export class PreparedQuery<Row> {
  /**
   * @param name unique among prepared queries (a statement name: letters, digits, underscores)
   * @param text the SQL, parameters as `$1`, `$2`, ... in the order {@link execute} gets them
   */
  constructor(
    readonly name: string,
    readonly text: string,
  ) {
    const taken = [...names.entries()].find(([, n]) => n === name);
    if (taken && taken[0] !== text) throw new Error(`prepared statement name ${name} used twice`);
    names.set(text, `bims_${name}`);
  }

  /** Run it with these parameters on `db` (a transaction too) and answer its rows. */
  async execute(db: Kysely<Database>, parameters: readonly unknown[]): Promise<Row[]> {
    const { rows } = await db.executeQuery<Row>(CompiledQuery.raw(this.text, [...parameters]));
    return rows;
  }
}

/** What connect.ts needs of a `pg` client to name our statements. */
interface QueryingClient {
  query: (...args: any[]) => any;
}

/**
 * Make a `pg` client send our prepared queries under their names (Kysely hands `pg` the SQL text only).
 * Anything else passes through untouched.
 */
export function nameStatements(client: QueryingClient): void {
  const query = client.query.bind(client);
  client.query = (text: unknown, values?: unknown, callback?: unknown) => {
    const name = typeof text === 'string' ? names.get(text) : undefined;
    if (name !== undefined)
      return callback === undefined ? query({ name, text, values }) : query({ name, text, values }, callback);
    return callback === undefined
      ? values === undefined
        ? query(text)
        : query(text, values)
      : query(text, values, callback);
  };
}
