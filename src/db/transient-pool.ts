import type { PostgresPool, PostgresPoolClient } from 'kysely';
import type pgModule from 'pg';

/**
 * A Kysely pool that opens a fresh `pg` connection for each query or transaction and closes it when Kysely
 * releases it. For Cloudflare Workers: a socket belongs to the request that opened it and cannot be used by a
 * later one, so nothing may be kept between requests. The pooling happens in Hyperdrive, next to the
 * Worker, which makes these connections cheap.
 */
export function transientPool(pg: typeof pgModule, connectionString: string): PostgresPool {
  return {
    async connect() {
      const client = new pg.Client({ connectionString });
      await client.connect();
      return {
        query: client.query.bind(client) as unknown as PostgresPoolClient['query'],
        release: () => void client.end().catch(() => {}),
      };
    },
    async end() {},
  };
}
