// The one per-request layer (src/http/every-request.ts) over the Node adapter, as the Node entry runs it: the
// request id read from the IncomingMessage's own header record (readIncomingHeader), and the parts in their order:
// an answer refused by the body limit still carries its headers, its metric and its log line.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { readIncomingHeader } from '../../src/runtime/node-headers.js';
import { createLogger } from '../../src/logger.js';
import { adminAuth, bootForTest } from '../support/databases.js';
import { RawConnection } from '../support/raw-http.js';
import { serveOnLoopback } from '../support/serve.js';

const lines: string[] = [];
/** The adapter's requests as the app got them. */
const served: Request[] = [];
/** Whether the adapter built a request's `Headers` (it keeps them under a symbol once asked for them). */
const builtHeaders = (request: Request) =>
  Object.getOwnPropertySymbols(request).some((s) => s.description === 'headersKey');
let booted: Awaited<ReturnType<typeof bootForTest>>;
let server: Awaited<ReturnType<typeof serveOnLoopback>>;
const ORIGIN = 'https://app.example';

beforeAll(async () => {
  booted = await bootForTest(
    'pglite',
    { BIMS_MAX_BODY_BYTES: '4096', BIMS_CORS_ORIGINS: ORIGIN },
    { logger: createLogger('info', (line) => lines.push(line)) },
  );
  // The app as the Node entry builds it: headers read from the adapter's IncomingMessage.
  const app = createApp({ services: booted.services, readHeader: readIncomingHeader });
  server = await serveOnLoopback((request, env) => {
    served.push(request);
    return app.fetch(request, env);
  });
});
afterAll(async () => {
  await server?.stop();
  await booted?.close();
});

const requestLines = () =>
  lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((e) => e.message === 'request');

/** One request on a fresh raw connection, with exactly the header lines given (repeats included). */
async function raw(request: string) {
  const connection = await RawConnection.open(server.url);
  await connection.write(request);
  const answer = await connection.next();
  expect(answer).not.toBeNull();
  return answer!;
}

describe('readIncomingHeader', () => {
  it("reads the IncomingMessage's record without asking the request for its Headers, and joins repeats", () => {
    const request = Object.defineProperty({}, 'headers', {
      get: () => {
        throw new Error('Headers asked for');
      },
    }) as Request;
    expect(readIncomingHeader(request, { incoming: { headers: { 'x-request-id': 'a' } } }, 'x-request-id')).toBe('a');
    expect(readIncomingHeader(request, { incoming: { headers: { 'x-request-id': ['a', 'b'] } } }, 'x-request-id')).toBe(
      'a, b',
    );
    expect(readIncomingHeader(request, { incoming: { headers: {} } }, 'origin')).toBeUndefined();
    // Node keeps the first of a repeated Authorization; the raw list has them all, joined as Headers.get joins them.
    const incoming = {
      headers: { authorization: 'Basic a' },
      rawHeaders: ['Host', 'x', 'Authorization', 'Basic a', 'authorization', 'Basic b'],
    };
    expect(readIncomingHeader(request, { incoming }, 'authorization')).toBe('Basic a, Basic b');
    // Not from the adapter (app.request): the request's own headers.
    expect(
      readIncomingHeader(new Request('http://x/', { headers: { 'x-request-id': 'c' } }), undefined, 'x-request-id'),
    ).toBe('c');
  });
});

describe('every request, over the Node adapter', () => {
  it('builds no Headers object for a GET /health (reading X-Request-Id and Origin through the record)', async () => {
    served.length = 0;
    const res = await fetch(`${server.url}/health`, { headers: { 'x-request-id': 'cheap', origin: ORIGIN } });
    expect(res.headers.get('x-request-id')).toBe('cheap');
    expect(served).toHaveLength(1);
    expect(builtHeaders(served[0]!)).toBe(false);
    // The check itself sees them built when something asks (a JSON body's Content-Type is read from them).
    served.length = 0;
    const made = await fetch(`${server.url}/admin/accounts/create`, {
      method: 'POST',
      headers: { authorization: adminAuth, 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'headers-built', password: 'a-long-password-1', role: 'USER' }),
    });
    expect(made.status).toBe(201);
    expect(builtHeaders(served[0]!)).toBe(true);
  });

  it('reads Authorization through the record too: an authenticated GET builds no Headers', async () => {
    served.length = 0;
    const res = await fetch(`${server.url}/admin/management/info`, { headers: { authorization: adminAuth } });
    expect(res.status).toBe(200);
    expect(builtHeaders(served[0]!)).toBe(false);
  });

  it('joins a repeated Authorization as Headers.get does (Node keeps only the first): refused, as before', async () => {
    // Each copy alone is good; joined they are one malformed credential. Node's own record would hold the first only.
    const twice = await raw(
      `GET /admin/management/info HTTP/1.1\r\nHost: x\r\nAuthorization: ${adminAuth}\r\nAuthorization: ${adminAuth}\r\nConnection: close\r\n\r\n`,
    );
    expect(twice.status).toBe(401);
    const once = await raw(
      `GET /admin/management/info HTTP/1.1\r\nHost: x\r\nAuthorization: ${adminAuth}\r\nConnection: close\r\n\r\n`,
    );
    expect(once.status).toBe(200);
  });

  it('answers with the X-Request-Id the caller sent (at most 128 characters), in the header and the log line', async () => {
    lines.length = 0;
    const res = await fetch(`${server.url}/health`, { headers: { 'x-request-id': 'req-node-1' } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'UP' });
    expect(res.headers.get('x-request-id')).toBe('req-node-1');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('content-security-policy')).toBe("default-src 'none'; frame-ancestors 'none'");
    expect(res.headers.get('vary')).toBe('Origin');
    expect(requestLines()).toMatchObject([{ requestId: 'req-node-1', method: 'GET', path: '/health', status: 200 }]);

    const long = 'x'.repeat(200);
    const truncated = await fetch(`${server.url}/health`, { headers: { 'x-request-id': long } });
    expect(truncated.headers.get('x-request-id')).toBe(long.slice(0, 128));
  });

  it('joins a repeated X-Request-Id as Headers.get does, and makes one up when none is sent', async () => {
    const repeated = await raw(
      'GET /health HTTP/1.1\r\nHost: x\r\nX-Request-Id: first\r\nX-Request-Id: second\r\nConnection: close\r\n\r\n',
    );
    expect(repeated.status).toBe(200);
    expect(repeated.headers['x-request-id']).toBe('first, second');

    lines.length = 0;
    const none = await fetch(`${server.url}/health`);
    const id = none.headers.get('x-request-id');
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(requestLines()[0]?.requestId).toBe(id);
  });

  it('reads Origin the same way: an allowed preflight is answered, another origin is not', async () => {
    const preflight = (origin: string) =>
      fetch(`${server.url}/admin/subjects/create`, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'POST' },
      });
    const allowed = await preflight(ORIGIN);
    expect(allowed.status).toBe(204);
    expect(allowed.headers.get('access-control-allow-origin')).toBe(ORIGIN);
    expect(allowed.headers.get('x-frame-options')).toBe('DENY');
    const other = await preflight('https://other.example');
    expect(other.status).toBe(405);
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
    const plain = await fetch(`${server.url}/health`, { headers: { origin: ORIGIN } });
    expect(plain.headers.get('access-control-allow-origin')).toBe(ORIGIN);
    expect(plain.headers.get('access-control-expose-headers')).toMatch(/X-Request-Id/);
  });

  it('answers a body over the limit with a 413 that still has its headers, its metric and its log line', async () => {
    lines.length = 0;
    const body = JSON.stringify({ username: 'big', password: 'x'.repeat(8000), role: 'USER' });
    const res = await fetch(`${server.url}/admin/accounts/create`, {
      method: 'POST',
      headers: { authorization: adminAuth, 'content-type': 'application/json', 'x-request-id': 'too-big-1' },
      body,
    });
    expect(res.status).toBe(413);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect(res.headers.get('x-request-id')).toBe('too-big-1');
    expect(res.headers.get('strict-transport-security')).toMatch(/^max-age=/);
    expect(requestLines()).toMatchObject([
      { requestId: 'too-big-1', method: 'POST', path: '/admin/accounts/create', status: 413 },
    ]);
    const metrics = await (await fetch(`${server.url}/metrics`, { headers: { authorization: adminAuth } })).text();
    expect(metrics).toMatch(
      /^bims_http_requests_total\{operation="none",surface="none",method="POST",status="413"\} [1-9]/m,
    );
  });
});
