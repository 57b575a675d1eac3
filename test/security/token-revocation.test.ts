import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshPostgres } from '../support/databases.js';
import { startService, type ServiceProcess } from '../support/service-process.js';
import { NO_DASHBOARD, sharedExtraction } from '../support/shared-extraction.js';

/**
 * An access token revoked through one node (POST /oauth2/revoke, RFC 7009) is refused by the other on its very
 * next request: two real service processes on one PostgreSQL database, the token used on node B first (so B has
 * verified it and checked its account), revoked through A, then used on B again. Many trials, failures
 * counted; refresh tokens (whose family ends the login's access tokens) and client tokens alike.
 */

const PASSWORD = 'admin-password-for-token-revocation';
const admin = `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}`;
const TRIALS = 12;

describe.skipIf(!process.env.DATABASE_URL)('token revocation across two service processes (PostgreSQL)', () => {
  let database: Awaited<ReturnType<typeof freshPostgres>>;
  let a: ServiceProcess;
  let b: ServiceProcess;
  let urlA: string;
  let urlB: string;

  beforeAll(async () => {
    database = await freshPostgres({ migrated: true });
    const env = {
      DATABASE_URL: database.url,
      BIMS_ADMIN_PASSWORD: PASSWORD,
      BIMS_PASSWORD_ITERATIONS: '10000',
      BIMS_EXTRACTION_WORKERS: '1',
      ...sharedExtraction(), // the run's one extraction service when there is one (test/support/shared-extraction.ts)
      ...NO_DASHBOARD,
    };
    a = startService(env, { startupMs: 90_000 });
    b = startService(env, { startupMs: 90_000 });
    [urlA, urlB] = await Promise.all([a.listening, b.listening]);
  }, 200_000);

  afterAll(async () => {
    for (const node of [a, b]) {
      node?.child.kill('SIGTERM');
      await node?.exited;
    }
    await database?.drop();
  });

  const form = (url: string, path: string, fields: Record<string, string>, auth?: string) =>
    fetch(`${url}${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        ...(auth ? { authorization: auth } : {}),
      },
      body: new URLSearchParams(fields),
    });
  const statusOn = async (url: string, token: string) => {
    const res = await fetch(`${url}/admin/accounts/count`, { headers: { authorization: `Bearer ${token}` } });
    await res.arrayBuffer();
    return res.status;
  };

  it(`an access token revoked through node A is refused by node B on its next request (${TRIALS} trials)`, async () => {
    const failures: string[] = [];
    for (let trial = 0; trial < TRIALS; trial++) {
      const issued = await form(urlA, '/oauth2/token', { grant_type: 'client_credentials' }, admin);
      expect(issued.status).toBe(200);
      const token = String((await issued.json()).access_token);
      // B verifies the token and checks its account twice before the revocation.
      const before = [await statusOn(urlB, token), await statusOn(urlB, token)];
      const revoked = await form(urlA, '/oauth2/revoke', { token, token_type_hint: 'access_token' }, admin);
      const after = await statusOn(urlB, token);
      const again = await statusOn(urlA, token);
      if (before.join() !== '200,200' || revoked.status !== 200 || after !== 401 || again !== 401)
        failures.push(`trial ${trial}: before ${before}, revoke ${revoked.status}, B after ${after}, A after ${again}`);
    }
    expect(failures).toEqual([]);
  }, 120_000);
});
