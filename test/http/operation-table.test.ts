import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootForTest, adminAuth } from '../support/databases.js';
import { concretePath, parseSeedOperations } from '../support/seed.js';
import { operationTable } from '../../src/operations/index.js';

const seed = parseSeedOperations();
/** Operations that take no credentials (the dashboard proxy's GET, which serves the page shell). */
const open = new Set(operationTable.filter((o) => o.open).map((o) => o.id));
const surfaces = ['admin', 'root', 'user'] as const;
let booted: Awaited<ReturnType<typeof bootForTest>>;

beforeAll(async () => {
  booted = await bootForTest('pglite');
});
afterAll(async () => {
  await booted?.close();
});

const call = (method: string, path: string, headers: Record<string, string> = {}) =>
  booted.app.request(path, { method, headers });

/** The prefix a surface puts before an operation's path. */
function prefixOn(surface: (typeof surfaces)[number], op: { section: string; id: string }): string {
  if (surface === 'admin') return '/admin';
  if (surface === 'user') return '/user';
  return op.section === '4.2' || op.id === 'getAdjudicatorManagementInfo' ? '/adjudicator' : '';
}

describe('the seed document', () => {
  it('has 110 operations, counting the five dashboard proxy methods', () => {
    expect(seed).toHaveLength(110);
    expect(new Set(seed.map((o) => o.id)).size).toBe(110);
  });

  it('is declared once in the operation table, with the same methods and surfaces', () => {
    const declared = new Map(operationTable.map((o) => [o.id, o]));
    const inSeed = seed.filter((o) => !o.unprefixed);
    expect([...declared.keys()].sort()).toEqual(inSeed.map((o) => o.id).sort());
    expect(operationTable.length).toBe(declared.size);
    for (const op of inSeed) {
      const spec = declared.get(op.id)!;
      expect(spec.method.toUpperCase(), op.id).toBe(op.method);
      expect([...spec.surfaces].sort(), op.id).toEqual(Object.keys(op.paths).sort());
    }
  });
});

describe('every operation answers on exactly its surfaces', () => {
  for (const op of seed.filter((o) => !o.unprefixed)) {
    it(`${op.id} (${op.method})`, async () => {
      const suffix = Object.values(op.paths)[0]!.replace(/^\/(admin|user|adjudicator)(?=\/)/, '');
      for (const surface of surfaces) {
        const expected = op.paths[surface];
        if (expected) {
          expect(expected).toBe(`${prefixOn(surface, op)}${suffix}`);
          // Without credentials a mounted operation asks for them (unless declared open); it never claims the route is unknown.
          const res = await call(op.method, concretePath(expected));
          if (open.has(op.id)) expect(res.status, `${op.method} ${expected}`).not.toBe(401);
          else {
            expect(res.status, `${op.method} ${expected}`).toBe(401);
            expect(res.headers.get('www-authenticate')).toMatch(/Basic/);
          }
          expect(res.headers.get('x-bims-operation'), `${op.method} ${expected} reached the wrong operation`).toBe(
            op.id,
          );
        } else {
          // The same path after this surface's prefix is not a route for this operation.
          const path = concretePath(`${prefixOn(surface, op)}${suffix}`);
          const res = await call(op.method, path, { authorization: adminAuth });
          expect(res.headers.get('x-bims-operation'), `${op.method} ${path}`).not.toBe(op.id);
          if (!res.headers.get('x-bims-operation')) {
            // Unknown path: 404. A path this surface answers under other methods only: 405 naming them.
            expect([404, 405], `${op.method} ${path}`).toContain(res.status);
            const type = (await res.json()).type;
            if (res.status === 404) expect(type, `${op.method} ${path}`).toMatch(/\/route-not-found$/);
            else {
              expect(type, `${op.method} ${path}`).toMatch(/\/method-not-allowed$/);
              expect(res.headers.get('allow')).not.toContain(op.method);
            }
          }
        }
      }
    });
  }

  it('login and the token endpoint have no surface prefix', async () => {
    for (const op of seed.filter((o) => o.unprefixed)) {
      const res = await call(op.method, op.unprefixed!);
      expect(res.status, op.id).not.toBe(404);
      for (const prefix of ['/admin', '/user', '/adjudicator']) {
        const other = await call(op.method, `${prefix}${op.unprefixed}`);
        expect(other.status).toBe(404);
      }
    }
  });

  it('static paths win over parameters', async () => {
    for (const [path, id] of [
      ['/admin/subjects/count', 'getSubjectsCount'],
      ['/admin/subjects/multimodal', 'getMultimodalSubjects'],
      ['/subjects/id-list', 'getSubjectsIdList'],
      ['/user/subjects/id-list', 'getSubjectsIdList'],
      ['/admin/subjects/download', 'downloadSubjectsInfoBulk'],
      ['/admin/subjects/some-subject', 'getSubjectBySubjectId'],
    ]) {
      const res = await call('GET', path!);
      expect(res.headers.get('x-bims-operation'), path).toBe(id);
    }
  });

  it('trailing slashes are part of the path', async () => {
    const withSlash = await call('GET', '/admin/operations/id/');
    expect(withSlash.headers.get('x-bims-operation')).toBe('getOperationById');
    const without = await call('GET', '/admin/operations/id', { authorization: adminAuth });
    expect(without.status).toBe(404);
    expect((await without.json()).type).toMatch(/\/route-not-found$/);
  });

  it('a known path asked with another method answers 405 with Allow, as a problem', async () => {
    for (const [method, path, allow] of [
      ['DELETE', '/admin/accounts', 'GET, HEAD'],
      ['GET', '/admin/accounts/create', 'POST'],
      ['PUT', '/admin/operations/id/', 'GET, HEAD'],
      ['GET', '/oauth2/token', 'POST'],
      ['POST', '/health', 'GET, HEAD'],
      ['PATCH', '/subjects/alice', 'GET, HEAD'],
    ] as const) {
      const res = await call(method, path, { authorization: adminAuth });
      expect(res.status, `${method} ${path}`).toBe(405);
      expect(res.headers.get('allow'), `${method} ${path}`).toBe(allow);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      const problem = await res.json();
      expect(problem).toMatchObject({ status: 405, type: expect.stringMatching(/\/method-not-allowed$/) });
    }
    // The trailing slash still belongs to the path: without it there is no route at all.
    const without = await call('PUT', '/admin/operations/id', { authorization: adminAuth });
    expect(without.status).toBe(404);
    // An unknown docs asset is still a plain 404 for its GET route.
    expect((await call('GET', '/docs/assets/nothing.js')).status).toBe(404);
  });

  it('unknown routes are 404 route-not-found problems, even with credentials', async () => {
    const res = await call('GET', '/admin/no-such-thing', { authorization: adminAuth });
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect((await res.json()).type).toMatch(/\/route-not-found$/);
  });
});

describe('OpenAPI documents, one per surface', () => {
  const docPath = { admin: '/admin/openapi.json', root: '/openapi.json', user: '/user/openapi.json' } as const;
  for (const surface of surfaces) {
    it(`${docPath[surface]} lists exactly the ${surface} operations under their seed names`, async () => {
      const res = await call('GET', docPath[surface]);
      expect(res.status).toBe(200);
      const doc = await res.json();
      expect(doc.openapi).toMatch(/^3\.1\./);
      const listed = new Map<string, { method: string; path: string }>();
      for (const [path, item] of Object.entries<Record<string, { operationId?: string }>>(doc.paths)) {
        for (const [method, operation] of Object.entries(item)) {
          if (operation?.operationId) listed.set(operation.operationId, { method: method.toUpperCase(), path });
        }
      }
      const expected = seed.filter((o) => o.unprefixed || o.paths[surface]);
      expect([...listed.keys()].sort()).toEqual(expected.map((o) => o.id).sort());
      for (const op of expected) {
        const entry = listed.get(op.id)!;
        expect(entry.method, op.id).toBe(op.method);
        const want = (op.unprefixed ?? op.paths[surface]!).replace('/**', '/{path}');
        expect(entry.path, op.id).toBe(want);
      }
    });
  }
});

describe('hot reads declared on the table', () => {
  it('are reads: GETs with a JSON answer (an account check left for the statement must precede any change)', () => {
    const hot = operationTable.filter((o) => o.read);
    expect(hot.map((o) => o.id).sort()).toEqual([
      'getMultimodalSubjectById',
      'getMultimodalSubjectByOperationId',
      'getMultimodalSubjectBySubjectId',
      'getMultimodalSubjects',
      'getSubjectById',
      'getSubjectByOperationId',
      'getSubjectBySubjectId',
      'getSubjects',
    ]);
    for (const op of hot) {
      expect(op.method, op.id).toBe('get');
      expect(op.request?.body, op.id).toBeUndefined();
      expect(op.response?.schema, op.id).toBeDefined();
    }
  });
});
