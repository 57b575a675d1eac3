// Stands in for @electric-sql/pglite and kysely-pglite-dialect in the Workers bundle (wrangler.toml [alias]):
// Workers reach PostgreSQL through Hyperdrive only, and PGlite (a file-backed database) cannot run there.
// connectDatabase imports PGlite only when no DATABASE_URL is given, which the Workers entry never does.
const refuse = (): never => {
  throw new Error('PGlite is not available on Cloudflare Workers: bind a Hyperdrive configuration as HYPERDRIVE');
};
export const PGlite = { create: refuse };
export class PGliteDialect {
  constructor() {
    refuse();
  }
}
