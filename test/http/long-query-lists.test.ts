import { serve } from '@hono/node-server';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIST_LIMITS } from '../../src/schemas/biometric-data.js';
import { HTTP_SERVER_OPTIONS, prepareHttpServer } from '../../src/runtime/http-server.js';
import { adminAuth, bootForTest } from '../support/databases.js';
import { RawConnection } from '../support/raw-http.js';

/**
 * Identifier lists in a query string (issue 32, point 8: ~450 UUIDs, documented as valid, were a 431 with no
 * body). The document states each list's limit, every list at its limit fits in what the Node entry reads
 * (its own server options, src/runtime/http-server.ts), one over it is a 400 naming `query.ids`, and a head
 * too long for the server is a 431 problem+json, never a bare status line.
 */
describe('identifier lists in the query string', () => {
  let booted: Awaited<ReturnType<typeof bootForTest>>;
  let url: string;
  let server: Server;
  beforeAll(async () => {
    booted = await bootForTest('pglite');
    await new Promise<void>((resolve) => {
      server = serve(
        { fetch: booted.app.fetch, port: 0, hostname: '127.0.0.1', serverOptions: HTTP_SERVER_OPTIONS },
        (info: AddressInfo) => {
          url = `http://127.0.0.1:${info.port}`;
          resolve();
        },
      ) as Server;
      prepareHttpServer(server, booted.config.BIMS_HTTP_KEEP_ALIVE_SECONDS);
    });
  });
  afterAll(async () => {
    await new Promise((done) => server?.close(done));
    await booted?.close();
  });

  const uuid = (i: number) => `${i.toString(16).padStart(8, '0')}-0000-4000-8000-000000000000`;
  const longest = (count: number) => `${'é'.repeat(127)}${count}`.slice(0, 128);
  const lists = {
    '/admin/biometric-data/uuid/download': (n: number) => Array.from({ length: n }, (_, i) => uuid(i)),
    '/admin/biometric-data/operation/download': (n: number) => Array.from({ length: n }, (_, i) => String(2e9 + i)),
    '/admin/biometric-data/subjectids/download': (n: number) =>
      Array.from({ length: n }, (_, i) => longest(i).slice(0, 128 - String(i).length) + i),
  };
  const limits = {
    '/admin/biometric-data/uuid/download': LIST_LIMITS.uuids,
    '/admin/biometric-data/operation/download': LIST_LIMITS.numericIds,
    '/admin/biometric-data/subjectids/download': LIST_LIMITS.subjectIds,
  };
  /** The list as repeated, percent-encoded `ids=` (the longest form a client may send). */
  const query = (ids: string[]) => ids.map((id) => `ids=${encodeURIComponent(id)}`).join('&');

  it('the document states each limit, and a list at its limit is read (404 naming unknown ids, not 431)', async () => {
    const doc = await (await fetch(`${url}/admin/openapi.json`, { headers: { authorization: adminAuth } })).json();
    for (const [path, make] of Object.entries(lists)) {
      const max = limits[path as keyof typeof limits];
      const param = doc.paths[path].get.parameters.find((p: { name: string }) => p.name === 'ids');
      expect(param.schema.maxItems, path).toBe(max);
      expect(param.schema.description ?? param.description, path).toMatch(/64 KiB/);
      const res = await fetch(`${url}${path}?${query(make(max))}`, { headers: { authorization: adminAuth } });
      expect(res.status, path).toBe(404);
      expect((await res.json()).type).toMatch(/not-found$/);
      const over = await fetch(`${url}${path}?${query(make(max + 1))}`, { headers: { authorization: adminAuth } });
      expect(over.status, path).toBe(400);
      expect((await over.json()).errors[0]).toMatchObject({ field: 'query.ids' });
    }
  });

  it('a request head over 64 KiB is a 431 problem+json, and the server goes on answering', async () => {
    const conn = await RawConnection.open(url);
    try {
      await conn.write(
        `GET /admin/biometric-data/uuid/download?${'ids=x&'.repeat(12_000)} HTTP/1.1\r\nHost: bims.test\r\n\r\n`,
      );
      const answer = await conn.next();
      expect(answer?.status).toBe(431);
      expect(answer?.headers['content-type']).toBe('application/problem+json');
      expect(JSON.parse(answer!.body)).toMatchObject({ status: 431, detail: expect.stringMatching(/65536 bytes/) });
    } finally {
      conn.destroy();
    }
    expect((await fetch(`${url}/health`)).status).toBe(200);
  });
});
