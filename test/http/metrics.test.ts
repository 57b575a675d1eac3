// GET /metrics (issue 20): Prometheus text format read by a real text-format parser, who may read it, and
// values that move after requests, extractions and enrolments.
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminAuth, basic, bootForTest, dialects } from '../support/databases.js';
import { closeSharedExtractor, sharedExtractorFactory } from '../support/extractor.js';
import { photo } from '../biometrics/helpers.js';

const TOKEN = 'metrics-token-for-the-scraper-0123456789';
const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');

afterAll(async () => {
  await closeSharedExtractor();
});

// PostgreSQL too (dialects, not serviceDialects): the database metrics differ by dialect (a pg pool and a LISTEN
// connection on PostgreSQL, neither on PGlite), and the last test holds each to its own.
for (const dialect of dialects) {
  describe(`GET /metrics on ${dialect}`, () => {
    let booted: Awaited<ReturnType<typeof bootForTest>>;
    beforeAll(async () => {
      booted = await bootForTest(
        dialect,
        { BIMS_METRICS_TOKEN: TOKEN, BIMS_DATABASE_POOL_SIZE: '3' },
        { createExtractor: sharedExtractorFactory() },
      );
    }, 120_000);
    afterAll(async () => {
      await booted?.close();
    });

    const call = (method: string, path: string, body?: unknown, auth = adminAuth) =>
      booted.app.request(path, {
        method,
        headers: { authorization: auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });

    /** Scrape and parse; every family by name. */
    const scrape = async (auth = `Bearer ${TOKEN}`) => {
      const res = await booted.app.request('/metrics', { headers: { authorization: auth } });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
      const text = await res.text();
      const families = parsePrometheusTextFormat(text);
      // parse-prometheus-text-format 1.1.1 folds the series of a labelled histogram into one; read without the
      // histogram TYPE lines, each series' _bucket, _sum and _count samples come out as plain labelled samples.
      const series = parsePrometheusTextFormat(text.replace(/^# TYPE \S+ histogram\n/gm, ''));
      // (the untyped read starts a new family at each change of name: the same name's samples are gathered).
      const byName = new Map<string, (typeof families)[number]>();
      for (const f of [...series, ...families]) {
        const seen = byName.get(f.name);
        byName.set(f.name, seen && seen.type === f.type ? { ...seen, metrics: [...seen.metrics, ...f.metrics] } : f);
      }
      return byName;
    };
    const sample = (families: Awaited<ReturnType<typeof scrape>>, name: string, labels: Record<string, string>) =>
      families.get(name)?.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
    const value = (families: Awaited<ReturnType<typeof scrape>>, name: string, labels: Record<string, string> = {}) =>
      Number(sample(families, name, labels)?.value ?? 0);
    const histogramCount = (
      families: Awaited<ReturnType<typeof scrape>>,
      name: string,
      labels: Record<string, string>,
    ) => value(families, `${name}_count`, labels);
    /** One histogram series' cumulative buckets, by upper bound. */
    const bucketsOf = (families: Awaited<ReturnType<typeof scrape>>, name: string, labels: Record<string, string>) =>
      Object.fromEntries(
        (families.get(`${name}_bucket`)?.metrics ?? [])
          .filter((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v))
          .map((m) => [m.labels!.le!, Number(m.value)]),
      );

    it('is for ADMIN credentials or the metrics token: 401 without, 403 for a USER, 401 for a wrong token', async () => {
      const none = await booted.app.request('/metrics');
      expect(none.status).toBe(401);
      expect(none.headers.get('content-type')).toMatch(/application\/problem\+json/);
      expect(none.headers.get('www-authenticate')).toMatch(/Basic|Bearer/);
      expect(
        (
          await call('POST', '/admin/accounts/create', {
            username: 'metrics-user',
            password: 'metrics-user-password',
            role: 'USER',
          })
        ).status,
      ).toBe(201);
      const user = await booted.app.request('/metrics', {
        headers: { authorization: basic('metrics-user', 'metrics-user-password') },
      });
      expect(user.status).toBe(403);
      expect((await user.json()).detail).toMatch(/ADMIN/);
      const wrong = await booted.app.request('/metrics', {
        headers: { authorization: `Bearer ${TOKEN.replace(/.$/, 'x')}` },
      });
      expect(wrong.status).toBe(401);
      expect((await booted.app.request('/metrics', { headers: { authorization: adminAuth } })).status).toBe(200);
      expect((await booted.app.request('/metrics', { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(
        200,
      );
      // OAuth access tokens: an ADMIN one reads, a USER one is 403.
      const token = async (auth: string) => {
        const res = await booted.app.request('/oauth2/token', {
          method: 'POST',
          headers: { authorization: auth, 'content-type': 'application/x-www-form-urlencoded' },
          body: 'grant_type=client_credentials',
        });
        expect(res.status).toBe(200);
        return (await res.json()).access_token as string;
      };
      expect(
        (await booted.app.request('/metrics', { headers: { authorization: `Bearer ${await token(adminAuth)}` } }))
          .status,
      ).toBe(200);
      const userBearer = await booted.app.request('/metrics', {
        headers: { authorization: `Bearer ${await token(basic('metrics-user', 'metrics-user-password'))}` },
      });
      expect(userBearer.status).toBe(403);
      const post = await booted.app.request('/metrics', { method: 'POST', headers: { authorization: adminAuth } });
      expect(post.status).toBe(405);
      expect(post.headers.get('allow')).toMatch(/GET/);
    });

    it('counts requests and their durations per operation, surface and status', async () => {
      const before = await scrape();
      const ok = { operation: 'getSubjectsCount', surface: 'admin', method: 'GET', status: '200' };
      const missing = { operation: 'getSubjectBySubjectId', surface: 'root', method: 'GET', status: '404' };
      for (let i = 0; i < 3; i++) expect((await call('GET', '/admin/subjects/count')).status).toBe(200);
      expect((await call('GET', '/subjects/nobody-here')).status).toBe(404);
      expect((await call('GET', '/no/such/route')).status).toBe(404);
      const after = await scrape();
      expect(value(after, 'bims_http_requests_total', ok) - value(before, 'bims_http_requests_total', ok)).toBe(3);
      expect(
        value(after, 'bims_http_requests_total', missing) - value(before, 'bims_http_requests_total', missing),
      ).toBe(1);
      // A path that is no operation is counted without inventing a label value from it.
      expect(value(after, 'bims_http_requests_total', { operation: 'none', status: '404' })).toBeGreaterThanOrEqual(1);
      expect(JSON.stringify([...after.values()])).not.toMatch(/no\/such\/route/);
      const hist = { operation: 'getSubjectsCount', surface: 'admin', status: '200' };
      expect(
        histogramCount(after, 'bims_http_request_duration_seconds', hist) -
          histogramCount(before, 'bims_http_request_duration_seconds', hist),
      ).toBe(3);
      const buckets = bucketsOf(after, 'bims_http_request_duration_seconds', hist);
      expect(buckets['+Inf']).toBe(histogramCount(after, 'bims_http_request_duration_seconds', hist));
      // Cumulative: each bucket holds at least the one below it.
      const counts = Object.entries(buckets)
        .filter(([le]) => le !== '+Inf')
        .sort((a, b) => Number(a[0]) - Number(b[0]))
        .map(([, n]) => n);
      expect(counts.length).toBeGreaterThan(5);
      expect(counts).toEqual([...counts].sort((a, b) => a - b));
      expect(after.get('bims_http_requests_total')!.type).toBe('COUNTER');
      expect(after.get('bims_http_request_duration_seconds')!.type).toBe('HISTOGRAM');
      // The scrapes themselves are requests too.
      expect(value(after, 'bims_http_requests_total', { operation: 'metrics', status: '200' })).toBeGreaterThanOrEqual(
        1,
      );
    });

    it('extraction jobs, the pool and the gallery per template version move with an enrolment', async () => {
      const before = await scrape();
      const res = await call('POST', '/admin/subjects/create', {
        subjectId: 'metrics-franck',
        faces: [{ image: b64(photo('labelled/franck/franck_01829.jpg')) }],
      });
      expect(res.status).toBe(201);
      const subject = await res.json();
      expect(subject.status).toBe('ENROLLED');
      const after = await scrape();
      const face = { kind: 'face', outcome: 'ok' };
      expect(histogramCount(after, 'bims_extraction_duration_seconds', face)).toBeGreaterThan(
        histogramCount(before, 'bims_extraction_duration_seconds', face),
      );
      expect(value(after, 'bims_extraction_duration_seconds_sum', face)).toBeGreaterThan(0);
      expect(value(after, 'bims_extraction_pool_state', { state: 'running' })).toBe(1);
      expect(value(after, 'bims_extraction_pool_workers')).toBeGreaterThanOrEqual(1);
      expect(value(after, 'bims_extraction_pool_jobs_total', { outcome: 'completed' })).toBeGreaterThan(0);
      expect(after.has('bims_extraction_pool_queued') && after.has('bims_extraction_pool_busy')).toBe(true);
      const version = { template_version: subject.templateVersion };
      expect(value(after, 'bims_gallery_subjects', version) - value(before, 'bims_gallery_subjects', version)).toBe(1);
      expect(value(after, 'bims_gallery_templates', version)).toBeGreaterThanOrEqual(1);
      // A failed extraction is counted as an error.
      const bad = await call('POST', '/admin/operations/checkimage', {
        image: b64(new TextEncoder().encode('\xff\xd8\xff not really a jpeg')),
      });
      expect(bad.status).toBeGreaterThanOrEqual(400);
      const afterBad = await scrape();
      expect(
        histogramCount(afterBad, 'bims_extraction_duration_seconds', { kind: 'face', outcome: 'error' }),
      ).toBeGreaterThanOrEqual(1);
    }, 120_000);

    it('states the database and the gallery freshness of this dialect', async () => {
      const families = await scrape(adminAuth);
      expect(value(families, 'bims_database_info', { dialect })).toBe(1);
      expect(value(families, 'bims_gallery_freshness', { mode: 'listen' })).toBe(1);
      if (dialect === 'postgres') {
        // Two pg pools of the configured size and a LISTEN connection exist: all are reported.
        for (const pool of ['statements', 'reads']) expect(value(families, 'bims_database_pool_max', { pool })).toBe(3);
        // The statements pool has served boot and this scrape's authentication; the reads pool opens on a read.
        const connections = (pool: string) =>
          value(families, 'bims_database_pool_connections', { pool, state: 'idle' }) +
          value(families, 'bims_database_pool_connections', { pool, state: 'active' });
        expect(connections('statements')).toBeGreaterThan(0);
        expect(connections('statements')).toBeLessThanOrEqual(3);
        expect(value(families, 'bims_database_pool_waiting', { pool: 'statements' })).toBe(0);
        expect(value(families, 'bims_gallery_listen_up')).toBe(1);
      } else {
        // PGlite: one process, no pool, nobody to LISTEN to.
        expect(families.get('bims_database_pool_connections')?.metrics ?? []).toEqual([]);
        expect(families.get('bims_gallery_listen_up')?.metrics ?? []).toEqual([]);
      }
      expect(value(families, 'bims_build_info')).toBe(1);
    });
  });
}
