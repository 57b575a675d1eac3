import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminAuth, bootForTest } from '../support/databases.js';
import { serveOnLoopback } from '../support/serve.js';
import { startDashboardServer, type DashboardServer } from '../../src/dashboard/node-server.js';

/**
 * Anonymous bursts on the dashboard's diagnostics stream (an endless event stream, served through the proxy's
 * open GET) once held 708 streams for minutes and slowed /health to 13 s. Over real sockets: the API on a
 * loopback port forwarding to the real component; the caller's address comes from a test header, so that
 * several addresses can be played from one machine.
 */

const PER_ADDRESS = 4;
const TOTAL = 6;

let dashboard: DashboardServer;
let booted: Awaited<ReturnType<typeof bootForTest>>;
let api: Awaited<ReturnType<typeof serveOnLoopback>>;

beforeAll(async () => {
  dashboard = await startDashboardServer({ host: '127.0.0.1', port: 0 });
  booted = await bootForTest(
    'pglite',
    { DASHBOARD_URL: dashboard.url, BIMS_STREAMS_PER_ADDRESS: String(PER_ADDRESS), BIMS_STREAMS_TOTAL: String(TOTAL) },
    { clientAddress: (request) => request.headers.get('x-test-address') ?? '192.0.2.1' },
  );
  api = await serveOnLoopback(booted.app.fetch);
});
afterAll(async () => {
  await api?.stop();
  await booted?.close();
  await dashboard?.stop();
});

/** Opens the diagnostics stream from `address`; a 200 is read up to its first event, so it is surely open. */
async function open(address: string) {
  const controller = new AbortController();
  const res = await fetch(`${api.url}/dashboard/_diagnostics/stream`, {
    headers: { 'x-test-address': address },
    signal: controller.signal,
  });
  if (res.status === 200) {
    const reader = res.body!.getReader();
    let seen = '';
    while (!seen.includes('\n\n')) seen += new TextDecoder().decode((await reader.read()).value);
    return { status: res.status, type: res.headers.get('content-type'), close: () => controller.abort() };
  }
  return {
    status: res.status,
    type: res.headers.get('content-type'),
    retryAfter: res.headers.get('retry-after'),
    problem: await res.json(),
    close: () => {},
  };
}

const echo = async () =>
  (await (await fetch(`${dashboard.url}/dashboard/_diagnostics/echo`)).json()) as { openStreams: number };

describe('event streams through the dashboard proxy are capped per address and in total', () => {
  it('a burst from one address gets its share, the rest 429 problem+json, and /health keeps answering', async () => {
    const burst = await Promise.all(Array.from({ length: 24 }, () => open('192.0.2.10')));
    // /health answers while the admitted streams are held.
    const health = await fetch(`${api.url}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'UP' });
    const admitted = burst.filter((s) => s.status === 200);
    const refused = burst.filter((s) => s.status !== 200);
    expect(admitted.length).toBe(PER_ADDRESS);
    expect(refused.length).toBe(24 - PER_ADDRESS);
    for (const r of refused) {
      expect(r.status).toBe(429);
      expect(r.type).toBe('application/problem+json');
      expect(r.retryAfter).toBe('10');
      expect(r.problem).toMatchObject({
        status: 429,
        limit: PER_ADDRESS,
        type: 'https://bims.dev/problems/too-many-requests',
      });
    }
    // The refused ones hold nothing at the component either.
    await expect.poll(async () => (await echo()).openStreams, { timeout: 10_000 }).toBe(PER_ADDRESS);

    // Another address still gets its streams, up to the total; then everyone gets 503.
    const other = await Promise.all([open('192.0.2.20'), open('192.0.2.20')]);
    expect(other.map((s) => s.status)).toEqual([200, 200]);
    const third = await open('192.0.2.30');
    expect(third.status).toBe(503);
    expect(third.type).toBe('application/problem+json');
    expect(third.problem).toMatchObject({ status: 503, limit: TOTAL });

    // Closing streams gives their slots back.
    for (const s of [...admitted, ...other]) s.close();
    await expect.poll(async () => (await echo()).openStreams, { timeout: 10_000 }).toBe(0);
    await expect
      .poll(async () => await open('192.0.2.10').then((s) => (s.close(), s.status)), { timeout: 10_000 })
      .toBe(200);
  });

  it('the proxy operations declare the 429 and 503 in the OpenAPI document', async () => {
    const doc = await (
      await booted.app.request('/admin/openapi.json', { headers: { authorization: adminAuth } })
    ).json();
    for (const method of ['get', 'post']) {
      const responses = doc.paths['/admin/dashboard/{path}'][method].responses;
      expect(Object.keys(responses)).toEqual(expect.arrayContaining(['429', '502', '503']));
    }
  });

  it('the component itself refuses streams past its own bound with 503 problem+json', async () => {
    const small = await startDashboardServer({ host: '127.0.0.1', port: 0, maxStreams: 1 });
    try {
      const first = new AbortController();
      const held = await fetch(`${small.url}/dashboard/_diagnostics/stream`, { signal: first.signal });
      expect(held.status).toBe(200);
      const refused = await fetch(`${small.url}/dashboard/_diagnostics/stream`);
      expect(refused.status).toBe(503);
      expect(refused.headers.get('content-type')).toBe('application/problem+json');
      expect((await refused.json()).status).toBe(503);
      first.abort();
    } finally {
      await small.stop();
    }
  });
});
