import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_PASSWORD, adminAuth, bootForTest } from '../support/databases.js';
import { createLogger } from '../../src/logger.js';
import { parseSeedOperations, seedText } from '../support/seed.js';

const logLines: string[] = [];
let booted: Awaited<ReturnType<typeof bootForTest>>;
beforeAll(async () => {
  booted = await bootForTest('pglite', {}, { logger: createLogger('debug', (line) => logLines.push(line)) });
});
afterAll(async () => {
  await booted?.close();
});

describe('probes', () => {
  it('/health and /ready answer without credentials', async () => {
    expect(await (await booted.app.request('/health')).json()).toEqual({ status: 'UP' });
    const ready = await booted.app.request('/ready');
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: 'UP', database: 'UP', migrations: 'APPLIED' });
  });
});

describe('the docs page', () => {
  it('serves Swagger UI from our own origin, with the three surfaces to switch between', async () => {
    const page = await booted.app.request('/docs');
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).not.toMatch(/https?:\/\//);
    for (const doc of ['/admin/openapi.json', '/openapi.json', '/user/openapi.json']) expect(html).toContain(doc);
    for (const asset of html.matchAll(/(?:src|href)="(\/[^"]+)"/g)) {
      const res = await booted.app.request(asset[1]!);
      expect(res.status, asset[1]).toBe(200);
      expect((await res.arrayBuffer()).byteLength, asset[1]).toBeGreaterThan(100);
    }
    expect((await booted.app.request('/docs/assets/oauth2-redirect.html')).status).toBe(200);
    expect((await booted.app.request('/docs/assets/..%2Fpackage.json')).status).toBe(404);
  });
});

describe('OpenAPI documents', () => {
  it('describe the security schemes of the seed and the named models of each surface', async () => {
    const admin = await (await booted.app.request('/admin/openapi.json')).json();
    expect(Object.keys(admin.components.securitySchemes).sort()).toEqual([
      'adjudicator-basic',
      'adjudicator-oauth',
      'admin-basic',
      'admin-oauth',
      'user-basic',
      'user-oauth',
    ]);
    // Section 2 of the seed: which surfaces show each named model.
    const table = seedText().split('## 2.')[1]!.split('## 3.')[0]!;
    const models = [...table.matchAll(/^\| (\w+) \| ([ARU ]+) \|$/gm)].map((m) => ({
      name: m[1]!,
      on: m[2]!.split(' '),
    }));
    expect(models).toHaveLength(52);
    const docs = {
      A: admin,
      R: await (await booted.app.request('/openapi.json')).json(),
      U: await (await booted.app.request('/user/openapi.json')).json(),
    };
    for (const [letter, doc] of Object.entries(docs)) {
      const schemas = Object.keys(doc.components.schemas);
      for (const model of models.filter((m) => m.on.includes(letter)))
        expect(schemas, `${model.name} on ${letter}`).toContain(model.name);
    }
    expect(parseSeedOperations().length).toBe(110);
  });
});

describe('request logs', () => {
  it('are JSON lines with a request id and never carry bodies, passwords or tokens', async () => {
    logLines.length = 0;
    const res = await booted.app.request('/admin/accounts/create', {
      method: 'POST',
      headers: { authorization: adminAuth, 'content-type': 'application/json', 'x-request-id': 'req-123' },
      body: JSON.stringify({ username: 'logged', password: 'very-secret-password', role: 'USER' }),
    });
    expect(res.status).toBe(201);
    expect(res.headers.get('x-request-id')).toBe('req-123');
    const entries = logLines.map((l) => JSON.parse(l));
    const request = entries.find((e) => e.message === 'request');
    expect(request).toMatchObject({
      requestId: 'req-123',
      method: 'POST',
      path: '/admin/accounts/create',
      status: 201,
      operationId: 'createAccount',
    });
    const all = logLines.join('\n');
    expect(all).not.toContain('very-secret-password');
    expect(all).not.toContain(ADMIN_PASSWORD);
    expect(all).not.toContain(adminAuth.split(' ')[1]);
  });
});
