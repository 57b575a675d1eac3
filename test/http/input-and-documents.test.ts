import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminAuth, bootForTest } from '../support/databases.js';
import { adjudicationOperations } from '../../src/operations/adjudication.js';
import { dashboardOperations } from '../../src/operations/dashboard.js';
import { licensingOperations } from '../../src/operations/licensing.js';
import { operationOperations } from '../../src/operations/operations.js';
import { subjectOperations } from '../../src/operations/subjects.js';
import { prefixOf, type OperationSpec } from '../../src/operations/types.js';
import { namedModels } from '../../src/schemas/models.js';
import faceModels from '../../wasm/models/manifest.json' with { type: 'json' };

/**
 * Every operation checks its input before its service runs (a 400 naming the field), and each surface's
 * document lists exactly its operations and named models.
 */
const declared: OperationSpec[] = [
  ...adjudicationOperations,
  ...dashboardOperations,
  ...licensingOperations,
  ...operationOperations,
  ...subjectOperations,
];

const U = '0f8fad5b-d9cb-469f-a165-70867728950e';
const img = 'AAAA';

function concrete(path: string): string {
  return path
    .replace(/\*\*$/, 'some/page')
    .replace(/\{uuid\}/g, U)
    .replace(/\{id\}/g, '1')
    .replace(/\{\w+\}/g, 'alice');
}

let booted: Awaited<ReturnType<typeof bootForTest>>;
beforeAll(async () => {
  booted = await bootForTest('pglite');
});
afterAll(async () => {
  await booted?.close();
});

function call(
  spec: OperationSpec,
  surface: OperationSpec['surfaces'][number],
  auth: boolean,
  input: { query?: string; body?: unknown },
) {
  const url = `${prefixOf(spec, surface)}${concrete(spec.path)}${input.query ? `?${input.query}` : ''}`;
  const headers: Record<string, string> = {};
  if (auth) headers.authorization = adminAuth;
  if (input.body !== undefined) headers['content-type'] = 'application/json';
  return booted.app.request(url, {
    method: spec.method.toUpperCase(),
    headers,
    ...(input.body !== undefined ? { body: JSON.stringify(input.body) } : {}),
  });
}

describe('input is validated before anything runs', () => {
  const byId = new Map(declared.map((s) => [s.id, s]));
  const bad: [string, { query?: string; body?: unknown }, RegExp][] = [
    ['getOperationByUUID', { query: 'uuid=not-a-uuid' }, /query\.uuid/],
    ['getOperationById', {}, /query\.id/],
    ['getSubjects', { query: 'sort=password,asc' }, /query\.sort/],
    ['getSubjects', { query: 'colour=blue' }, /query\.colour/],
    ['getLogCount', { query: 'page=1' }, /query\.page/],
    ['createSubject', { body: { subjectId: 'x'.repeat(129), faces: [{ image: img }] } }, /body\.subjectId/],
    ['createSubject', { body: { subjectId: 'alice', faces: [{ image: 'not base64!' }] } }, /body\.faces\.0\.image/],
    ['createSubject', { body: { subjectId: 'alice' } }, /faces, voices or a template/],
    ['createSubject', { body: { subjectId: 'alice', faces: [{ image: img }], extra: 1 } }, /body\.extra/],
    ['createOperation', { body: { type: 'VERIFY', faces: [{ image: img }] } }, /body\.subjectId/],
    ['solveAdjudicationCase', { body: { caseId: 1, decision: 'MAYBE' } }, /body\.decision/],
    ['deleteSubject', { query: 'subjectId=a&id=1' }, /exactly one of subjectId and id/],
  ];
  for (const [id, input, field] of bad) {
    it(`${id} refuses ${JSON.stringify(input).slice(0, 80)}`, async () => {
      const spec = byId.get(id)!;
      const res = await call(spec, spec.surfaces[0]!, true, input);
      const text = await res.text();
      expect(res.status, text).toBe(400);
      expect(JSON.parse(text).type).toMatch(/\/validation$/);
      expect(text).toMatch(field);
    });
  }
});

describe('OpenAPI documents', () => {
  const docPath = { admin: '/admin/openapi.json', root: '/openapi.json', user: '/user/openapi.json' } as const;
  const letter = { admin: 'admin', root: 'root', user: 'user' } as const;
  for (const surface of ['admin', 'root', 'user'] as const) {
    it(`${docPath[surface]} lists these operations and only the named models of its surface`, async () => {
      const res = await booted.app.request(docPath[surface]);
      expect(res.status).toBe(200);
      const doc = await res.json();
      const ids = new Set<string>();
      for (const item of Object.values<Record<string, { operationId?: string }>>(doc.paths)) {
        for (const op of Object.values(item)) if (op.operationId) ids.add(op.operationId);
      }
      for (const spec of declared)
        expect(ids.has(spec.id), `${spec.id} on ${surface}`).toBe(spec.surfaces.includes(surface));
      const components = Object.keys(doc.components.schemas);
      for (const model of namedModels) {
        expect(components.includes(model.name), `${model.name} on ${surface}`).toBe(
          model.surfaces.includes(letter[surface]),
        );
      }
      if (surface !== 'user') {
        const dashboard = doc.paths[`${surface === 'admin' ? '/admin' : ''}/dashboard/{path}`];
        expect(Object.keys(dashboard).sort()).toEqual(['delete', 'get', 'patch', 'post', 'put']);
        expect(dashboard.get.parameters).toEqual([
          expect.objectContaining({ name: 'path', in: 'path', required: true }),
        ]);
      }
    });
  }
});

describe('statuses in the documents', () => {
  const docPath = { admin: '/admin/openapi.json', root: '/openapi.json', user: '/user/openapi.json' } as const;
  for (const surface of ['admin', 'root', 'user'] as const) {
    it(`${docPath[surface]}: every operation documents what its entry implies and what its text mentions, each problem with its type`, async () => {
      const doc = await (await booted.app.request(docPath[surface])).json();
      const wrong: string[] = [];
      for (const item of Object.values<Record<string, any>>(doc.paths)) {
        for (const op of Object.values<any>(item)) {
          const statuses = Object.keys(op.responses);
          // The unprefixed login and token endpoints have no resource to miss.
          const want = ['login', 'oauth2Token'].includes(op.operationId) ? ['400', '500'] : ['400', '404', '500'];
          if (op.security?.length) want.push('401', '403', '429');
          if (op.requestBody) want.push('413', '415');
          for (const m of `${op.summary ?? ''} ${op.description ?? ''}`.matchAll(/\b([45]\d\d)\b/g)) want.push(m[1]!);
          for (const status of want)
            if (!statuses.includes(status)) wrong.push(`${op.operationId}: ${status} not documented`);
          for (const status of statuses.filter((s) => Number(s) >= 400)) {
            const response = op.responses[status];
            const typed = /problems\/[a-z-]+/.test(response.description) || response.content?.['application/json'];
            if (!typed) wrong.push(`${op.operationId}: ${status} names no problem type`);
          }
        }
      }
      expect(wrong).toEqual([]);
    });
  }

  it('the observed undocumented answers are documented now', async () => {
    const admin = await (await booted.app.request('/admin/openapi.json')).json();
    const root = await (await booted.app.request('/openapi.json')).json();
    expect(Object.keys(admin.paths['/admin/accounts/create'].post.responses)).toContain('409');
    expect(Object.keys(admin.paths['/admin/subjects/create'].post.responses)).toEqual(
      expect.arrayContaining(['402', '409', '429', '503']),
    );
    expect(Object.keys(admin.paths['/admin/operations/create'].post.responses)).toEqual(
      expect.arrayContaining(['402', '429', '503']),
    );
    expect(Object.keys(root.paths['/licensing/update'].post.responses)).toContain('422');
    expect(Object.keys(root.paths['/dashboard/{path}'].get.responses)).toContain('405');
    expect(Object.keys(root.paths['/login'].post.responses)).toEqual(expect.arrayContaining(['400', '429']));
    expect(root.paths['/login'].post.security).toEqual([]);
    expect(root.paths['/oauth2/token'].post.security).toEqual([]);
  });
});

describe('the documents state the rules the server enforces', () => {
  it('ids are 1..2147483647, paging integers are not nullable, /user clearDb requires its prefix, one-of rules are stated', async () => {
    const admin = await (await booted.app.request('/admin/openapi.json')).json();
    const user = await (await booted.app.request('/user/openapi.json')).json();
    const param = (doc: any, path: string, method: string, name: string) =>
      doc.paths[path][method].parameters.find((p: any) => p.name === name);
    expect(param(admin, '/admin/operations/id/', 'get', 'id').schema).toMatchObject({
      type: 'integer',
      minimum: 1,
      maximum: 2147483647,
    });
    expect(param(admin, '/admin/subjects', 'get', 'page').schema.type).toBe('integer');
    expect(param(admin, '/admin/subjects/download', 'get', 'ids')).toMatchObject({
      style: 'form',
      explode: false,
      schema: { type: 'array', items: { type: 'integer', minimum: 1 } },
    });
    expect(param(admin, '/admin/subjects', 'get', 'metadata').schema).toMatchObject({
      contentMediaType: 'application/json',
      contentSchema: { type: 'object' },
    });
    expect(param(user, '/user/subjects/clear-db', 'delete', 'prefix')).toMatchObject({
      required: true,
      schema: { minLength: 1 },
    });
    expect(param(admin, '/admin/subjects/clear-db', 'delete', 'prefix').required).toBe(false);
    const schemas = admin.components.schemas;
    expect(schemas.GetTemplateModalitiesRequest.oneOf).toHaveLength(2);
    expect(schemas.CreateSubjectRequest.anyOf).toHaveLength(3);
    expect(schemas.ReextractSubjectRequest.oneOf).toHaveLength(2);
    // Each branch repeats the object's properties and required fields (src/http/typed-branches.ts), and adds its own.
    const own = (schema: { required?: string[] }, branch: { required: string[] }) =>
      branch.required.filter((k) => !(schema.required ?? []).includes(k));
    expect(schemas.TrickleData.oneOf.map((b: { required: string[] }) => own(schemas.TrickleData, b))).toEqual([
      ['candidate'],
      ['candidates'],
      ['completed'],
    ]);
    for (const branch of schemas.TrickleData.oneOf) expect(branch.properties).toEqual(schemas.TrickleData.properties);
    expect(schemas.CreateOperationRequest.allOf).toHaveLength(2);
    // Cross-field rules JSON Schema can say (issue 32): at least one of id and username; at least one setting.
    expect(schemas.DeleteAccount.anyOf.map((b: { required: string[] }) => b.required)).toEqual([['id'], ['username']]);
    expect(admin.paths['/admin/gateway/settings'].post.requestBody.content['application/json'].schema).toMatchObject({
      minProperties: 1,
    });
    // Example template versions are the one the shipped models produce, not an invented name.
    const versions = [...JSON.stringify(admin).matchAll(/"templateVersion":\{[^}]*"example":"([^"]+)"/g)].map(
      (m) => m[1],
    );
    expect(versions.length).toBeGreaterThan(0);
    expect(new Set(versions)).toEqual(new Set([faceModels.templateVersion]));
  });

  it('the trickle body is exactly one of candidate, candidates and completed, in the document and on the server alike', async () => {
    const doc = await (await booted.app.request('/admin/openapi.json')).json();
    const trickle = doc.components.schemas.TrickleData;
    // The branches' own requirements, beside the object's (sessionId, handleId) that every branch repeats.
    const rule: { required: string[] }[] = trickle.oneOf.map((b: { required: string[] }) => ({
      required: b.required.filter((k) => !(trickle.required ?? []).includes(k)),
    }));
    const parts = {
      candidate: { candidate: 'candidate:1 1 udp 2122260223 192.0.2.1 54400 typ host' },
      candidates: [{ candidate: 'candidate:2 1 udp 1 192.0.2.2 9 typ host' }],
      completed: true,
    };
    const names = Object.keys(parts) as (keyof typeof parts)[];
    // Every combination of the three: none, each alone, each pair, all.
    for (let mask = 0; mask < 8; mask++) {
      const given = names.filter((_, i) => mask & (1 << i));
      const body = { sessionId: 1, handleId: 2, ...Object.fromEntries(given.map((k) => [k, parts[k]])) };
      const documentSays =
        rule.filter((alt) => alt.required.every((k) => given.includes(k as keyof typeof parts))).length === 1;
      const res = await booted.app.request('/admin/gateway/trickle', {
        method: 'POST',
        headers: { authorization: adminAuth, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const problem = await res.json();
      // No media gateway runs here: a body the schema takes goes on to the gateway (503/404), never a 400.
      expect({ given, refused: res.status === 400 }).toEqual({ given, refused: !documentSays });
      if (!documentSays) expect(problem.errors[0].field).toBe('body.candidate');
    }
  });

  it("requests built from the documents' own examples are not refused as invalid", async () => {
    const refused: string[] = [];
    let sent = 0;
    for (const docPath of ['/admin/openapi.json', '/openapi.json', '/user/openapi.json']) {
      const doc = await (await booted.app.request(docPath)).json();
      const deref = (s: any): any => (s?.$ref ? deref(doc.components.schemas[s.$ref.split('/').pop()]) : s);
      for (const [path, item] of Object.entries<Record<string, any>>(doc.paths)) {
        for (const [method, op] of Object.entries<any>(item)) {
          if (['login', 'oauth2Token'].includes(op.operationId) || path.includes('{path}')) continue;
          // Only operations every part of whose request has an example (or needs none) can be built from them.
          const query = new URLSearchParams();
          let concrete = path;
          let complete = true;
          const exampled: string[] = [];
          let oneOfTaken = false;
          for (const p of op.parameters ?? []) {
            // Parameters of which exactly one may be given (said so in their descriptions): the first only.
            if (/exactly one of/.test(p.description ?? p.schema?.description ?? '')) {
              if (oneOfTaken) continue;
              oneOfTaken = true;
            }
            const example = p.example ?? p.schema?.example;
            if (example === undefined) {
              if (p.required) complete = false;
              continue;
            }
            const text = Array.isArray(example) ? example.join(',') : String(example);
            if (p.in === 'path') concrete = concrete.replace(`{${p.name}}`, encodeURIComponent(text));
            if (p.in === 'query') query.set(p.name, text);
            exampled.push(`${p.in === 'path' ? 'path' : 'query'}.${p.name}`);
          }
          let body: unknown;
          const bodySchema = deref(op.requestBody?.content?.['application/json']?.schema);
          if (bodySchema) {
            body = bodySchema.example;
            if (body === undefined && bodySchema.type === 'object') {
              const built: Record<string, unknown> = {};
              for (const [name, prop] of Object.entries<any>(bodySchema.properties ?? {})) {
                const example = deref(prop)?.example;
                if (example !== undefined) built[name] = example;
                else if ((bodySchema.required ?? []).includes(name)) complete = false;
              }
              body = built;
            }
            if (body === undefined) complete = false;
            // A body must meet the schema's stated one-of / at-least-one rules to count as built from examples.
            const has = (alt: any) => (alt.required ?? []).every((k: string) => Object.hasOwn(body as object, k));
            if (body && bodySchema.anyOf && !bodySchema.anyOf.some(has)) complete = false;
            if (body && bodySchema.oneOf && bodySchema.oneOf.filter(has).length !== 1) complete = false;
            if (body && typeof body === 'object' && Object.keys(body).length === 0) complete = false;
          }
          if (!complete || (exampled.length === 0 && !bodySchema)) continue;
          const qs = query.toString();
          sent++;
          const res = await booted.app.request(`${concrete}${qs ? `?${qs}` : ''}`, {
            method: method.toUpperCase(),
            headers: { authorization: adminAuth, ...(bodySchema ? { 'content-type': 'application/json' } : {}) },
            ...(bodySchema ? { body: JSON.stringify(body) } : {}),
          });
          if (res.status === 400)
            refused.push(
              `${method.toUpperCase()} ${concrete} ${JSON.stringify(body ?? '').slice(0, 120)}: ${(await res.text()).slice(0, 200)}`,
            );
          else await res.body?.cancel();
        }
      }
    }
    expect(sent).toBeGreaterThan(40);
    expect(refused).toEqual([]);
  });
});
