import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { adminAuth, basic, bootForTest } from '../support/databases.js';
import { contractBreach, operationsOf, requestArbitrary, type DocOperation } from '../support/contract.js';
import { startDashboardServer } from '../../src/dashboard/node-server.js';

/**
 * The published documents are the contract: requests generated from them alone (fast-check arbitraries
 * built from their JSON Schemas) for every operation on every surface, a few each, must get no 500, only
 * statuses the document lists for the operation, and no refusal that does not name the field. Operations
 * that delete, clear or change state run in a second pass on a database of their own, after the others.
 */

const documents = { admin: '/admin/openapi.json', root: '/openapi.json', user: '/user/openapi.json' } as const;
const USER_PASSWORD = 'contract-user-password';
/** Examples per operation: enough to cross every branch of a small schema, few enough for the test budget. */
const RUNS = 3;
/** Some hundreds of requests, a few running extraction: about a minute alone, several on a loaded 2-core machine. */
const BUDGET_MS = 300_000;
/**
 * The unprefixed login and token endpoints and the dashboard proxy have a pass of their own: failed logins are
 * throttled by address, which would turn the other passes' Basic credentials away, and the proxy needs the
 * dashboard component running (the real one, on a loopback port).
 */
const edge = (op: DocOperation) => ['login', 'oauth2Token'].includes(op.operationId) || op.path.includes('/dashboard/');
const destructive = (op: DocOperation) =>
  op.method === 'DELETE' || /^(delete|clear|truncate|reset|change|update|set|remove|revoke)/i.test(op.operationId);
type Pass = 'safe' | 'destructive' | 'edge';
const inPass = (op: DocOperation, pass: Pass) =>
  pass === 'edge' ? edge(op) : !edge(op) && destructive(op) === (pass === 'destructive');

async function exercise(pass: Pass) {
  const dashboard = pass === 'edge' ? await startDashboardServer({ host: '127.0.0.1', port: 0 }) : undefined;
  const booted = await bootForTest('pglite', dashboard ? { DASHBOARD_URL: dashboard.url } : {});
  try {
    const created = await booted.app.request('/admin/accounts/create', {
      method: 'POST',
      headers: { authorization: adminAuth, 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'contract-user', password: USER_PASSWORD, role: 'USER' }),
    });
    expect(created.status).toBe(201);
    const breaches: string[] = [];
    const mediaTypesSent = new Set<string>();
    let sent = 0;
    for (const [surface, docPath] of Object.entries(documents)) {
      const doc = await (await booted.app.request(docPath)).json();
      const auth = surface === 'user' ? basic('contract-user', USER_PASSWORD) : adminAuth;
      const ops = operationsOf(doc).filter((op) => inPass(op, pass));
      for (const op of ops) {
        for (const request of fc.sample(requestArbitrary(op, doc), { numRuns: RUNS, seed: 17 })) {
          const headers: Record<string, string> = { authorization: auth };
          // A FormData body sets its own Content-Type, with the boundary.
          if (request.encoded !== undefined && !(request.encoded instanceof FormData))
            headers['content-type'] = request.mediaType!;
          const res = await booted.app.request(request.url, {
            method: request.method,
            headers,
            ...(request.encoded !== undefined ? { body: request.encoded } : {}),
          });
          // A media type counts as sent when the server took it (not a 415 for its form).
          if (request.mediaType && res.status !== 415) mediaTypesSent.add(request.mediaType);
          sent++;
          if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
            await res.body?.cancel();
            continue;
          }
          const breach = await contractBreach(op, res);
          if (breach)
            breaches.push(
              `${surface} ${op.operationId} ${request.method} ${request.url.slice(0, 120)} ${request.mediaType ?? ''} ${request.body === undefined ? '' : JSON.stringify(request.body).slice(0, 200)}: ${breach}`,
            );
        }
      }
    }
    return { breaches, sent, mediaTypesSent };
  } finally {
    await booted.close();
    await dashboard?.stop();
  }
}

describe('requests generated from the published documents', () => {
  it(
    "non-destructive operations on every surface keep the documents' word",
    async () => {
      const { breaches, sent, mediaTypesSent } = await exercise('safe');
      expect(sent).toBeGreaterThan(150);
      // The photo operations' forms were drawn as well as their JSON.
      expect([...mediaTypesSent].sort()).toEqual(['application/json', 'multipart/form-data']);
      expect(breaches).toEqual([]);
    },
    BUDGET_MS,
  );

  it(
    'destructive operations, on a database of their own, keep it too',
    async () => {
      const { breaches, sent } = await exercise('destructive');
      expect(sent).toBeGreaterThan(30);
      expect(breaches).toEqual([]);
    },
    BUDGET_MS,
  );

  it(
    'login, the token endpoint and the dashboard proxy (to the real dashboard component) keep it too',
    async () => {
      const { breaches, sent, mediaTypesSent } = await exercise('edge');
      // The token endpoint is sent the URL-encoded form it declares.
      expect(mediaTypesSent.has('application/x-www-form-urlencoded')).toBe(true);
      // login and oauth2Token on three documents, the proxy's five methods on two.
      expect(sent).toBeGreaterThanOrEqual(RUNS * (2 * 3 + 5 * 2));
      expect(breaches).toEqual([]);
    },
    BUDGET_MS,
  );
});
