import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminAuth, bootForTest } from '../support/databases.js';

/**
 * `Allow` names what answers (issue 32, point 8: `OPTIONS /admin/subjects/create` said `GET, HEAD, POST`
 * while GET there was getSubjectBySubjectId answering "subject 'create' not found"). A path an operation names
 * exactly is that operation's: the parameterised route beside it does not take it, the documents exclude those
 * values from its parameter, and every method but the exact path's is a 405 naming them.
 */
describe('Allow and the paths operations name exactly', () => {
  let booted: Awaited<ReturnType<typeof bootForTest>>;
  beforeAll(async () => {
    booted = await bootForTest('pglite');
  });
  afterAll(async () => {
    await booted?.close();
  });
  const call = (method: string, path: string) =>
    booted.app.request(path, { method, headers: { authorization: adminAuth } });

  it('a static path answers only its own methods, and the parameterised route still answers other values', async () => {
    for (const [method, path, status, allow] of [
      ['OPTIONS', '/admin/subjects/create', 405, 'POST'],
      ['GET', '/admin/subjects/create', 405, 'POST'],
      ['DELETE', '/admin/subjects/count', 405, 'GET, HEAD'],
      ['GET', '/admin/subjects/count', 200, null],
      ['OPTIONS', '/admin/subjects/alice', 405, 'GET, HEAD'],
      ['GET', '/admin/subjects/alice', 404, null],
    ] as const) {
      const res = await call(method, path);
      expect([method, path, res.status, res.headers.get('allow')]).toEqual([method, path, status, allow]);
      if (status === 405) expect((await res.json()).type).toMatch(/method-not-allowed$/);
    }
  });

  it('the documents exclude those values from the parameter', async () => {
    const doc = await (await call('GET', '/admin/openapi.json')).json();
    const subjectId = doc.paths['/admin/subjects/{subjectId}'].get.parameters.find(
      (p: { name: string }) => p.name === 'subjectId',
    );
    expect(subjectId.schema.not.enum).toEqual(expect.arrayContaining(['count', 'create', 'id-list']));
    // Every value a parameter excludes is a path of its own in the document.
    for (const [path, item] of Object.entries<Record<string, { parameters?: any[] }>>(doc.paths)) {
      for (const op of Object.values(item)) {
        for (const p of op.parameters ?? []) {
          for (const value of p.schema?.not?.enum ?? [])
            expect(doc.paths, `${path} ${p.name}=${value}`).toHaveProperty([path.replace(`{${p.name}}`, value)]);
        }
      }
    }
  });
});
