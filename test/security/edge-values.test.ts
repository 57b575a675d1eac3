import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminAuth, bootForTest, dialects } from '../support/databases.js';
import { send as request } from '../support/http.js';

/**
 * Dates and ids at the edge of what PostgreSQL stores and JSON carries. Every date the API accepts is of the
 * years 1970 to 9999 as written, whatever its offset (the documents' pattern; a 400 naming the field otherwise,
 * in query filters and in bodies alike, imports included); no year is shifted on the way in or out; a log holding a date outside the
 * range (written before the rule) still lists and exports whole. Numeric ids outside 1..2147483647 (integer
 * columns) are a 400 naming the field everywhere.
 */

const EDGE_DATES = [
  '0000-01-01T00:00:00Z',
  '0001-01-01T00:00:00Z',
  '0099-12-31T23:59:59Z',
  '1969-12-31T23:59:59Z',
  '1969-12-31T23:59:59+14:00',
  '+010000-01-01T00:00:00Z',
];

function record(id: string, timestamp: string, extra: Record<string, unknown> = {}) {
  return {
    id,
    timestamp,
    type: 'TypeError',
    message: 'edge',
    method: 'GET',
    path: '/admin/x',
    surface: 'admin',
    callStack: 'TypeError: edge',
    ...extra,
  };
}

// PostgreSQL too (dialects, not serviceDialects): edge dates and integers go through each driver's own parsers and
// serialisers (pg's and PGlite's), which differ at the edges.
for (const dialect of dialects) {
  describe(`dates and ids at the edge on ${dialect}`, () => {
    let booted: Awaited<ReturnType<typeof bootForTest>>;
    beforeAll(async () => {
      booted = await bootForTest(dialect);
    });
    afterAll(async () => {
      await booted?.close();
    });
    const send = (method: string, path: string, body?: unknown) => request(booted.app, method, path, body, adminAuth);

    async function expect400(method: string, path: string, field: RegExp, body?: unknown) {
      const res = await send(method, path, body);
      const text = await res.text();
      expect(res.status, `${method} ${path}: ${text}`).toBe(400);
      const problem = JSON.parse(text);
      expect(problem.type).toMatch(/\/validation$/);
      expect(problem.errors.map((e: { field: string }) => e.field).join(' '), text).toMatch(field);
    }

    it('a date filter outside 1970..9999 is a 400 naming it, on every list and count', async () => {
      for (const date of EDGE_DATES) {
        const q = encodeURIComponent(date);
        for (const path of [
          '/admin/subjects',
          '/admin/subjects/count',
          '/admin/subjects/id-list',
          '/admin/operations',
          '/admin/operations/count',
        ]) {
          await expect400('GET', `${path}?createdFrom=${q}`, /query\.createdFrom/);
          await expect400('GET', `${path}?createdTo=${q}`, /query\.createdTo/);
        }
        await expect400('GET', `/admin/exceptions?from=${q}`, /query\.from/);
        await expect400('GET', `/admin/exceptions/count?to=${q}`, /query\.to/);
      }
      // The ends of the range themselves are fine, whatever the offset: the bound is on the year as written,
      // as the document's pattern states it (issue 32).
      for (const date of [
        '1970-01-01T00:00:00Z',
        '9999-12-31T23:59:59.999Z',
        '1970-01-01T00:00:00+14:00',
        '9999-12-31T23:59:59-05:00',
      ]) {
        expect((await send('GET', `/admin/subjects?createdFrom=${encodeURIComponent(date)}`)).status).toBe(200);
        expect((await send('GET', `/admin/operations?createdTo=${encodeURIComponent(date)}`)).status).toBe(200);
        expect((await send('GET', `/admin/exceptions?from=${encodeURIComponent(date)}`)).status).toBe(200);
      }
    });

    it('an imported timestamp outside the range is a 400 naming it, and nothing is written', async () => {
      for (const [i, date] of EDGE_DATES.entries()) {
        await expect400('POST', '/admin/exceptions/import', /body\.1\.timestamp/, [
          record(`edge-ok-${i}`, '2026-01-01T00:00:00Z'),
          record(`edge-bad-${i}`, date),
        ]);
      }
      expect((await (await send('GET', '/admin/exceptions/count')).json()).count).toBe(0);
    });

    it('dates inside the range come back exactly as sent, without any century shift', async () => {
      const dates = ['1970-01-01T00:00:00.000Z', '2000-02-29T12:34:56.789Z', '9999-12-31T23:59:59.999Z'];
      const res = await send(
        'POST',
        '/admin/exceptions/import',
        dates.map((d, i) => record(`kept-${i}`, d)),
      );
      expect(res.status, await res.clone().text()).toBe(200);
      for (const [i, d] of dates.entries()) {
        expect((await (await send('GET', `/admin/exceptions/id?id=kept-${i}`)).json()).timestamp).toBe(d);
      }
      // The first and last year as written with the widest offsets: taken, and kept at the range's ends.
      const offsets = await send('POST', '/admin/exceptions/import', [
        record('offset-first', '1970-01-01T00:00:00+14:00'),
        record('offset-last', '9999-12-31T23:59:59-05:00'),
      ]);
      expect(offsets.status, await offsets.clone().text()).toBe(200);
      const shown = async (id: string) => (await (await send('GET', `/admin/exceptions/id?id=${id}`)).json()).timestamp;
      expect(await shown('offset-first')).toBe('1970-01-01T00:00:00.000Z');
      expect(await shown('offset-last')).toBe('9999-12-31T23:59:59.999Z');
      await send('DELETE', '/admin/exceptions/clear-db');
    });

    it('an imported accountId outside the integer range is a 400 naming it', async () => {
      for (const accountId of [2147483648, 0, -1, 1e300]) {
        await expect400('POST', '/admin/exceptions/import', /body\.0\.accountId/, [
          record('acc', '2026-01-01T00:00:00Z', { accountId }),
        ]);
      }
    });

    it('a log holding a date the rule now refuses (written before it) still lists and exports whole, clamped', async () => {
      const db = booted.services.ctx.db;
      const stored = {
        'old-50': '0050-06-01 00:00:00+00',
        'old-bc': '0001-01-01 00:00:00+00 BC',
        'old-inf': 'infinity',
        'old-minf': '-infinity',
        'new-1': '2026-01-01 00:00:00+00',
      };
      for (const [id, at] of Object.entries(stored)) {
        await sql`insert into exceptions (id, timestamp, type, message, method, path, surface, call_stack) values (${id}, ${at}::timestamptz, 'TypeError', 'old', 'GET', '/x', 'admin', 'old')`.execute(
          db,
        );
      }
      const ids = Object.keys(stored).sort();
      const inRange = (t: string) =>
        new Date(t).toISOString() === t && t >= '1970-01-01T00:00:00.000Z' && t <= '9999-12-31T23:59:59.999Z';
      const list = await send('GET', '/admin/exceptions?size=10');
      const listed = await list.text();
      expect(list.status, listed).toBe(200);
      const rows = JSON.parse(listed) as { id: string; timestamp: string }[];
      expect(rows.map((e) => e.id).sort()).toEqual(ids);
      expect(rows.filter((e) => !inRange(e.timestamp))).toEqual([]);
      // Never shifted into another century: out-of-range times read as the nearest end of the range.
      expect(rows.find((e) => e.id === 'old-50')!.timestamp).toBe('1970-01-01T00:00:00.000Z');
      expect(rows.find((e) => e.id === 'old-inf')!.timestamp).toBe('9999-12-31T23:59:59.999Z');
      for (const id of ids) expect((await send('GET', `/admin/exceptions/id?id=${id}`)).status).toBe(200);
      const exported = await send('GET', '/admin/exceptions/export');
      expect(exported.status).toBe(200);
      const all = JSON.parse(await exported.text()) as { id: string; timestamp: string }[];
      expect(all.map((e) => e.id).sort()).toEqual(ids);
      // And the export imports back.
      await send('DELETE', '/admin/exceptions/clear-db');
      const back = await send('POST', '/admin/exceptions/import', all);
      expect(back.status, await back.clone().text()).toBe(200);
      expect(await back.json()).toEqual({ imported: ids.length, skipped: 0 });
      await send('DELETE', '/admin/exceptions/clear-db');
    });

    it('numeric ids outside 1..2147483647 are a 400 naming the field', async () => {
      for (const id of ['2147483648', '0', '-1', '99999999999999999999']) {
        await expect400('GET', `/admin/operations/id/?id=${id}`, /query\.id/);
        await expect400('GET', `/admin/subjects/id/${id}`, /path\.id|params\.id/);
        await expect400('GET', `/admin/operations?accountId=${id}`, /query\.accountId/);
      }
      await expect400('DELETE', '/admin/accounts/delete', /body\.accounts\.0\.id/, { accounts: [{ id: 2147483648 }] });
    });
  });
}
