import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash, randomBytes } from 'node:crypto';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import { readFile } from 'node:fs/promises';
import { adminAuth, basic, bootForTest } from '../support/databases.js';
import { serveOnLoopback } from '../support/serve.js';
import { startDashboardServer, PUBLIC_DIR, type DashboardServer } from '../../src/dashboard/node-server.js';

/**
 * The dashboard proxy over real sockets: the API on a loopback port forwarding to the real dashboard
 * component on another (its files and its two diagnostics, `echo` and `stream`). Requests are sent with
 * node:http so that hop-by-hop headers can be sent at all (fetch refuses to set some of them).
 */

interface Raw {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** One HTTP/1.1 request with exactly these headers; resolves with the whole answer. */
function raw(url: string, method: string, headers: Record<string, string> = {}, body?: Buffer | string): Promise<Raw> {
  return new Promise((resolve, reject) => {
    // Node frames a DELETE body only when told its length.
    const framed = body === undefined ? headers : { 'content-length': String(Buffer.byteLength(body)), ...headers };
    const req = httpRequest(url, { method, headers: framed }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

const sha256 = (bytes: Buffer | string) => `sha256:${createHash('sha256').update(bytes).digest('hex')}`;

let dashboard: DashboardServer;
let booted: Awaited<ReturnType<typeof bootForTest>>;
let api: Awaited<ReturnType<typeof serveOnLoopback>>;
let adjudicatorAuth: string;

beforeAll(async () => {
  dashboard = await startDashboardServer({ host: '127.0.0.1', port: 0 });
  booted = await bootForTest('pglite', { DASHBOARD_URL: dashboard.url });
  api = await serveOnLoopback(booted.app.fetch);
  const created = await booted.app.request('/admin/accounts/create', {
    method: 'POST',
    headers: { authorization: adminAuth, 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'proxy-adjudicator', password: 'adjudicator-password-1', role: 'ADJUDICATOR' }),
  });
  expect(created.status).toBe(201);
  adjudicatorAuth = basic('proxy-adjudicator', 'adjudicator-password-1');
});
afterAll(async () => {
  await api?.stop();
  await booted?.close();
  await dashboard?.stop();
});

describe('the dashboard proxy forwards to the dashboard component', () => {
  it('serves the dashboard without credentials on both surfaces, byte for byte, with the component headers', async () => {
    const index = await readFile(`${PUBLIC_DIR}index.html`);
    for (const path of ['/dashboard/', '/admin/dashboard/']) {
      const res = await raw(`${api.url}${path}`, 'GET');
      expect(res.status, path).toBe(200);
      expect(res.headers['x-bims-operation']).toBe('proxyDashboard');
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.body.equals(index)).toBe(true);
      // The component's policy, not the API's default-src 'none', governs the page.
      expect(res.headers['content-security-policy']).toMatch(/script-src 'self'/);
    }
    const script = await raw(`${api.url}/admin/dashboard/js/main.js?v=1`, 'GET');
    expect(script.status).toBe(200);
    expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(script.body.equals(await readFile(`${PUBLIC_DIR}js/main.js`))).toBe(true);
    // Conditional requests pass both ways: the component's ETag, then its 304.
    const again = await raw(`${api.url}/admin/dashboard/js/main.js`, 'GET', {
      'if-none-match': String(script.headers.etag),
    });
    expect(again.status).toBe(304);
    expect(again.body.length).toBe(0);
  });

  it('the camera page alone may ask for the camera and microphone; its script is the SDK capture helper, built at start', async () => {
    const camera = await raw(`${api.url}/dashboard/capture.html`, 'GET');
    expect(camera.status).toBe(200);
    expect(camera.body.equals(await readFile(`${PUBLIC_DIR}capture.html`))).toBe(true);
    // The API keeps the page's own policy, as it keeps its CSP; every other answer allows no device.
    expect(camera.headers['permissions-policy']).toBe('camera=(self), microphone=(self), geolocation=()');
    expect(camera.headers['content-security-policy']).toMatch(/script-src 'self'/);
    for (const path of ['/dashboard/', '/dashboard/js/main.js', '/admin/management/info']) {
      const other = await raw(`${api.url}${path}`, 'GET', { authorization: adminAuth });
      expect(other.headers['permissions-policy'], path).toBe('camera=(), microphone=(), geolocation=()');
    }
    const helper = await raw(`${api.url}/dashboard/js/bims-capture.js`, 'GET');
    expect(helper.status).toBe(200);
    expect(helper.headers['content-type']).toBe('text/javascript; charset=utf-8');
    // Only the capture helper, not the face SDK (no onnxruntime): a few KiB.
    expect(helper.body.length).toBeLessThan(16 * 1024);
    const module = await import(`data:text/javascript;base64,${helper.body.toString('base64')}`);
    expect(typeof module.captureWithGateway).toBe('function');
    expect(typeof module.CaptureError).toBe('function');
  });

  it('passes redirects and the component errors through unchanged', async () => {
    const bare = await raw(`${api.url}/dashboard?x=1`, 'GET');
    expect(bare.status).toBe(301);
    expect(bare.headers.location).toBe('/dashboard/?x=1');
    const missing = await raw(`${api.url}/dashboard/no-such-file.js`, 'GET');
    expect(missing.status).toBe(404);
    expect(missing.headers['content-type']).toBe('application/problem+json');
    expect(JSON.parse(missing.body.toString()).detail).toContain('no-such-file.js');
  });

  it('forwards POST, PUT, PATCH and DELETE with their query, headers and body', async () => {
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      const text = JSON.stringify({ method, note: 'é ünïcode' });
      const res = await raw(
        `${api.url}/admin/dashboard/_diagnostics/echo?a=1&a=2&b=%20x`,
        method,
        { authorization: adminAuth, 'content-type': 'application/json', 'x-custom': 'kept', cookie: 'pref=dark' },
        text,
      );
      expect(res.status, method).toBe(200);
      expect(res.headers['x-bims-operation']).toBe(
        { POST: 'proxyDashboard1', PUT: 'proxyDashboard2', DELETE: 'proxyDashboard3', PATCH: 'proxyDashboard4' }[
          method
        ],
      );
      const echo = JSON.parse(res.body.toString());
      expect(echo).toMatchObject({
        method,
        path: '/admin/dashboard/_diagnostics/echo',
        query: { a: ['1', '2'], b: [' x'] },
      });
      expect(echo.body).toEqual({ size: Buffer.byteLength(text), sha256: sha256(text), text });
      expect(echo.headers['content-type']).toBe('application/json');
      expect(echo.headers['x-custom']).toBe('kept');
      // Credentials and cookies reach the component (it reports them as digests).
      expect(echo.headers.authorization).toBe(sha256(adminAuth));
      expect(echo.headers.cookie).toBe(sha256('pref=dark'));
    }
  });

  it('streams a large request body through unchanged (sent after 100 Continue)', async () => {
    const bytes = randomBytes(3 * 1024 * 1024 + 17);
    const res = await raw(
      `${api.url}/dashboard/_diagnostics/echo`,
      'POST',
      { authorization: adminAuth, 'content-type': 'application/octet-stream', expect: '100-continue' },
      bytes,
    );
    expect(res.status).toBe(200);
    const echo = JSON.parse(res.body.toString());
    expect(echo.body).toEqual({ size: bytes.length, sha256: sha256(bytes) });
  });

  it('refuses a streamed body that passes the size limit on its way through with 413, not 502', async () => {
    const small = await bootForTest('pglite', { DASHBOARD_URL: dashboard.url, BIMS_MAX_BODY_BYTES: '4096' });
    try {
      const chunk = new Uint8Array(1024).fill(65);
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          for (let i = 0; i < 8; i++) controller.enqueue(chunk);
          controller.close();
        },
      });
      const res = await small.app.request('/admin/dashboard/_diagnostics/echo', {
        method: 'POST',
        headers: { authorization: adminAuth, 'content-type': 'application/octet-stream' },
        body,
        duplex: 'half',
      } as RequestInit);
      expect(res.status).toBe(413);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    } finally {
      await small.close();
    }
  });

  it('rewrites Host, adds X-Forwarded-*, and drops hop-by-hop request headers', async () => {
    const res = await raw(`${api.url}/dashboard/_diagnostics/echo`, 'GET', {
      connection: 'keep-alive, x-hop-by-hop',
      'x-hop-by-hop': 'must not pass',
      'keep-alive': 'timeout=5',
      te: 'trailers',
      'proxy-authorization': 'Basic c2VjcmV0OnNlY3JldA==',
      'x-forwarded-for': '203.0.113.7',
      'x-end-to-end': 'must pass',
    });
    expect(res.status).toBe(200);
    const { headers } = JSON.parse(res.body.toString());
    expect(headers.host).toBe(new URL(dashboard.url).host);
    expect(headers['x-forwarded-host']).toBe(new URL(api.url).host);
    expect(headers['x-forwarded-proto']).toBe('http');
    expect(headers['x-forwarded-prefix']).toBe('/dashboard');
    // The address the proxy saw is appended when the runtime reports one (this test's server does not).
    expect(headers['x-forwarded-for']).toMatch(/^203\.0\.113\.7(, 127\.0\.0\.1)?$/);
    expect(headers['x-end-to-end']).toBe('must pass');
    for (const name of ['x-hop-by-hop', 'keep-alive', 'te', 'proxy-authorization'])
      expect(headers[name], name).toBeUndefined();
    expect(headers.connection ?? '').not.toMatch(/x-hop-by-hop/);
  });

  it('drops hop-by-hop response headers, including those the component names in Connection', async () => {
    const asked = ['X-Echo-Hop: dropped', 'Connection: x-echo-hop', 'X-Echo-Kept: yes']
      .map((h) => `header=${encodeURIComponent(h)}`)
      .join('&');
    // Straight from the component, the headers are there.
    const direct = await raw(`${dashboard.url}/dashboard/_diagnostics/echo?${asked}`, 'GET');
    expect(direct.headers['x-echo-hop']).toBe('dropped');
    expect(direct.headers.connection).toMatch(/x-echo-hop/);
    const proxied = await raw(`${api.url}/dashboard/_diagnostics/echo?${asked}`, 'GET');
    expect(proxied.status).toBe(200);
    expect(proxied.headers['x-echo-kept']).toBe('yes');
    expect(proxied.headers['x-echo-hop']).toBeUndefined();
    expect(proxied.headers.connection ?? '').not.toMatch(/x-echo-hop/);
  });

  it('streams the answer: an endless event stream arrives event by event, and leaving releases the component', async () => {
    const res = await fetch(`${api.url}/dashboard/_diagnostics/stream`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const reader = res.body!.getReader();
    // The component never ends this stream on its own (for minutes): a proxy that buffered would never answer.
    let seen = '';
    while (!seen.includes('\n\n')) seen += new TextDecoder().decode((await reader.read()).value);
    expect(seen).toMatch(/^event: tick\ndata: \{"n":1,/);
    const echo = async () =>
      JSON.parse((await raw(`${dashboard.url}/dashboard/_diagnostics/echo`, 'GET')).body.toString());
    expect((await echo()).openStreams).toBe(1);
    await reader.cancel();
    // The proxy lets go of the component once the client has gone.
    await expect.poll(async () => (await echo()).openStreams, { timeout: 10_000 }).toBe(0);
  });
});

describe('who may use the proxy', () => {
  it('GET needs no credentials; the other methods keep the surface scope (ADMIN)', async () => {
    expect((await raw(`${api.url}/dashboard/_diagnostics/echo`, 'GET')).status).toBe(200);
    for (const path of ['/dashboard/_diagnostics/echo', '/admin/dashboard/_diagnostics/echo']) {
      const anonymous = await raw(`${api.url}${path}`, 'POST', {}, 'x');
      expect(anonymous.status, path).toBe(401);
      expect(anonymous.headers['www-authenticate']).toMatch(/Basic/);
      expect((await raw(`${api.url}${path}`, 'PUT', { authorization: adjudicatorAuth }, 'x')).status, path).toBe(403);
    }
  });

  it('the component refuses what it does not serve (405 naming the method)', async () => {
    const res = await raw(`${api.url}/admin/dashboard/index.html`, 'DELETE', { authorization: adminAuth });
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD');
    expect(JSON.parse(res.body.toString()).detail).toContain('DELETE');
    // The document says so of every method but GET (issue 32: it said "forwards" and nothing of the 405).
    const doc = await (await fetch(`${api.url}/admin/openapi.json`, { headers: { authorization: adminAuth } })).json();
    for (const method of ['post', 'put', 'patch', 'delete']) {
      const op = doc.paths['/admin/dashboard/{path}'][method];
      expect(op.summary, method).toMatch(/built-in one answers 405/);
      expect(op.description, method).toMatch(/405 problem\+json with Allow: GET, HEAD/);
      expect(op.responses['405'].description, method).toMatch(/Allow: GET, HEAD/);
    }
  });
});

describe('a component that cannot answer gives 502 problem+json, not a hang', () => {
  /** Boot an API forwarding to `url` and return one GET of /dashboard/ through it. */
  async function through(url: string | undefined, env: Record<string, string> = {}) {
    const other = await bootForTest('pglite', { ...(url ? { DASHBOARD_URL: url } : {}), ...env });
    try {
      const res = await other.app.request('/dashboard/');
      return { status: res.status, type: res.headers.get('content-type'), problem: await res.json() };
    } finally {
      await other.close();
    }
  }

  it('when nothing listens on the component address', async () => {
    const closed = await startDashboardServer({ host: '127.0.0.1', port: 0 });
    await closed.stop();
    const { status, type, problem } = await through(closed.url);
    expect(status).toBe(502);
    expect(type).toMatch(/^application\/problem\+json/);
    expect(problem.type).toMatch(/\/bad-gateway$/);
    expect(problem.detail).toMatch(/dashboard component did not answer: ECONNREFUSED/);
  });

  it('when the component accepts the connection and never answers', async () => {
    // A hung process: it accepts connections and says nothing.
    const sockets: Socket[] = [];
    const silent: Server = createServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as { port: number }).port;
    try {
      const { status, problem } = await through(`http://127.0.0.1:${port}`, { BIMS_DASHBOARD_TIMEOUT_MS: '300' });
      expect(status).toBe(502);
      expect(problem.detail).toMatch(/no answer within 300 ms/);
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  /**
   * A component that closes a kept connection just as the next request goes out on it (Node's 5 s keep-alive
   * timer firing under load): the first request on each connection is answered and kept alive, the second on the
   * same connection is met by the socket closing. `requests` counts the heads it saw.
   */
  async function closingComponent() {
    let requests = 0;
    const sockets: Socket[] = [];
    const server: Server = createServer((socket) => {
      sockets.push(socket);
      let seen = 0;
      let head = '';
      socket.on('data', (chunk) => {
        head += chunk.toString('latin1');
        while (head.includes('\r\n\r\n')) {
          head = head.slice(head.indexOf('\r\n\r\n') + 4);
          requests++;
          if (++seen === 1)
            socket.write(
              'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\nKeep-Alive: timeout=60\r\n\r\nok',
            );
          else {
            // Closed at the second head: whatever followed it in the same read (a body) is not a request.
            socket.destroy();
            return;
          }
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
      url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
      requests: () => requests,
      close: async () => {
        for (const s of sockets) s.destroy();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      },
    };
  }

  /**
   * A service proxying to a {@link closingComponent} whose first connection has answered one GET and is back in
   * the fetch client's pool (after a moment), so that `next` goes out on it and meets the close.
   */
  async function afterOneKeptAnswer(next: (other: Awaited<ReturnType<typeof bootForTest>>) => Promise<void>) {
    const component = await closingComponent();
    const other = await bootForTest('pglite', { DASHBOARD_URL: component.url });
    try {
      const first = await other.app.request('/dashboard/a.js');
      expect([first.status, await first.text()]).toEqual([200, 'ok']);
      await new Promise((resolve) => setTimeout(resolve, 50));
      await next(other);
      return component.requests();
    } finally {
      await other.close();
      await component.close();
    }
  }

  it('a GET on a kept connection the component closed under it is sent once more on a new one, and answered', async () => {
    const requests = await afterOneKeptAnswer(async (other) => {
      const second = await other.app.request('/dashboard/b.js');
      expect([second.status, await second.text()]).toEqual([200, 'ok']);
    });
    // The first connection's two requests and the retry on a new connection.
    expect(requests).toBe(3);
  });

  it('a POST is not sent twice: the same closed connection is a 502 naming it', async () => {
    const requests = await afterOneKeptAnswer(async (other) => {
      const post = await other.app.request('/admin/dashboard/echo', {
        method: 'POST',
        headers: { authorization: adminAuth, 'content-type': 'text/plain' },
        body: 'once',
      });
      expect(post.status).toBe(502);
      expect((await post.json()).detail).toMatch(/dashboard component did not answer: (UND_ERR_SOCKET|ECONNRESET)/);
    });
    expect(requests).toBe(2);
  });

  it("the component keeps idle connections longer than its callers do (65 s, not Node's 5)", async () => {
    const answer = await raw(`${dashboard.url}/`, 'GET');
    expect(answer.headers['keep-alive']).toBe('timeout=65');
  });

  it('when no component is configured', async () => {
    const { status, problem } = await through(undefined);
    expect(status).toBe(502);
    expect(problem.detail).toMatch(/DASHBOARD_URL/);
  });
});
