import fc from 'fast-check';
import { serve } from '@hono/node-server';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { HTTP_SERVER_OPTIONS, prepareHttpServer } from '../../src/runtime/http-server.js';
import { adminAuth, basic, bootForTest } from '../support/databases.js';
import { contractBreach, operationsOf, requestArbitrary } from '../support/contract.js';
import { atBounds, boundedFields, documentedCrossFieldRule, hasBounds } from '../support/contract-bounds.js';

/**
 * The published documents' limits, kept (issue 32, point 8): requests generated from the documents alone with
 * every list at its stated maxItems (or long, where none is stated) and every date-time at the ends of its
 * range in each form RFC 3339 allows and the schema's pattern admits (contract-bounds.ts), sent to the Node
 * entry's own HTTP server (its head limit is part of what the documents promise). None may get a 500 or a
 * status its operation does not list (a bare 431 was one), and none may be refused for the value at its bound:
 * a 400 naming that field means the server holds a limit the document does not state (a rule between two
 * parameters, `from` after `to`, only when the field's description states it).
 */

const documents = { admin: '/admin/openapi.json', root: '/openapi.json', user: '/user/openapi.json' } as const;
const USER_PASSWORD = 'contract-bounds-user-password';
/** Requests per operation and surface: each draws its dates from the edge list and its lists at their length. */
const RUNS = 3;
/** The login, token and dashboard routes have no lists or dates; the contract test's own pass covers them. */
const skipped = (path: string) => ['/login', '/oauth2/token'].includes(path) || path.includes('/dashboard/');

describe('requests at the limits the documents state', () => {
  it('are read as documented: no 500, no undocumented status, no refusal of the value at its bound', async () => {
    const booted = await bootForTest('pglite');
    const server = await new Promise<{ url: string; server: Server }>((resolve) => {
      const s = serve(
        { fetch: booted.app.fetch, port: 0, hostname: '127.0.0.1', serverOptions: HTTP_SERVER_OPTIONS },
        (info: AddressInfo) => resolve({ url: `http://127.0.0.1:${info.port}`, server: s as Server }),
      ) as Server;
      prepareHttpServer(s, booted.config.BIMS_HTTP_KEEP_ALIVE_SECONDS);
    });
    try {
      const created = await booted.app.request('/admin/accounts/create', {
        method: 'POST',
        headers: { authorization: adminAuth, 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'bounds-user', password: USER_PASSWORD, role: 'USER' }),
      });
      expect(created.status).toBe(201);
      const breaches: string[] = [];
      const boundedSeen = new Set<string>();
      let sent = 0;
      for (const [surface, docPath] of Object.entries(documents)) {
        const doc = atBounds(await (await booted.app.request(docPath)).json());
        const auth = surface === 'user' ? basic('bounds-user', USER_PASSWORD) : adminAuth;
        // Destructive operations last, so that the others see what the first ones may have made.
        const ops = operationsOf(doc)
          .filter((op) => !skipped(op.path) && hasBounds(op, doc))
          .sort((a, b) => Number(a.method === 'DELETE') - Number(b.method === 'DELETE'));
        for (const op of ops) {
          for (const request of fc.sample(requestArbitrary(op, doc), { numRuns: RUNS, seed: 32 })) {
            const headers: Record<string, string> = { authorization: auth };
            if (request.encoded !== undefined && !(request.encoded instanceof FormData))
              headers['content-type'] = request.mediaType!;
            const what = `${surface} ${op.operationId} ${request.method} ${request.url.slice(0, 100)} ${request.mediaType ?? ''}`;
            // A connection reset before the answer is a breach too, named by its request.
            const res = await fetch(`${server.url}${request.url}`, {
              method: request.method,
              headers,
              ...(request.encoded !== undefined ? { body: request.encoded } : {}),
            }).catch((error: Error) => {
              throw new Error(`${what}: no answer (${String(error.cause ?? error)})`);
            });
            sent++;
            const fields = boundedFields(op, doc, request);
            for (const field of fields) boundedSeen.add(`${op.operationId} ${field}`);
            if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
              await res.body?.cancel();
              continue;
            }
            const breach = await contractBreach(op, res.clone());
            if (breach) breaches.push(`${what}: ${breach}`);
            else if (res.status === 400 || res.status === 422) {
              const problem = await res.json();
              for (const error of (problem.errors ?? []) as { field: string; message: string }[])
                if (fields.has(error.field) && !documentedCrossFieldRule(op, error.field, error.message))
                  breaches.push(`${what}: ${res.status} refuses ${error.field} at its bound (${error.message})`);
            } else await res.body?.cancel();
          }
        }
      }
      // The limits of issue 32 were reached: the id lists of the bulk downloads and the date filters.
      for (const expected of [
        'downloadBiometricDataBulkByUUID query.ids',
        'downloadBiometricDataBulkByOperation query.ids',
        'downloadBiometricDataBulkBySubjectIds query.ids',
        'getExceptionLogCount query.from',
        'getLicensingUsage query.to',
        'deleteSubjects body.subjectIds',
        'createSubject body.image',
        'connectToGateway body.params.activeLiveness.kinds',
      ])
        expect([...boundedSeen], expected).toContain(expected);
      expect(sent).toBeGreaterThan(100);
      expect(breaches).toEqual([]);
    } finally {
      await new Promise((done) => server.server.close(done));
      await booted.close();
    }
    // Some hundreds of requests, a few of them reaching extraction: about a minute alone, more under load.
  }, 300_000);
});
