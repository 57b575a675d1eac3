// Request size limits (BIMS_MAX_BODY_BYTES): a body over the limit is refused with a 413 problem, whether
// it announces its length or arrives chunked without one, and nothing of it is stored.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminAuth, bootForTest } from '../support/databases.js';
import { send } from '../support/http.js';
import { serveOnLoopback } from '../support/serve.js';

const LIMIT = 16 * 1024;
type Booted = Awaited<ReturnType<typeof bootForTest>>;
let booted: Booted;
let server: Awaited<ReturnType<typeof serveOnLoopback>>;
beforeAll(async () => {
  booted = await bootForTest('pglite', { BIMS_MAX_BODY_BYTES: String(LIMIT) });
  server = await serveOnLoopback(booted.app.fetch);
});
afterAll(async () => {
  await server?.stop();
  await booted?.close();
});

/** Rows a refused enrolment or account creation could have left behind. */
async function stored() {
  const db = booted.services.ctx.db;
  const n = async (table: 'subjects' | 'operations' | 'images' | 'face_samples' | 'accounts' | 'exceptions') =>
    Number(
      (
        await db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  return {
    subjects: await n('subjects'),
    operations: await n('operations'),
    images: await n('images'),
    samples: await n('face_samples'),
    accounts: await n('accounts'),
    exceptions: await n('exceptions'),
  };
}

/** An enrolment whose body is `bytes` long (a base64 "image" padding it out). */
function enrolment(bytes: number): string {
  const head = JSON.stringify({ subjectId: 'too-big', faces: [{ image: '' }] });
  return head.replace('"image":""', `"image":"${'A'.repeat(bytes - head.length)}"`);
}

/** Send raw HTTP/1.1 over a socket and collect the whole answer (the server closes or we stop at its end). */
function rawHttp(request: string | Buffer[]): Promise<{ status: number; headers: string; body: string }> {
  const { port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1');
    let data = '';
    const finish = () => {
      const [head, ...rest] = data.split('\r\n\r\n');
      resolve({ status: Number(head!.split(' ')[1]), headers: head!, body: rest.join('\r\n\r\n') });
    };
    socket.on('data', (d) => {
      data += d;
      const head = data.split('\r\n\r\n')[0]!;
      const length = head.match(/content-length: (\d+)/i)?.[1];
      if (length && data.length >= head.length + 4 + Number(length)) {
        socket.destroy();
        finish();
      }
    });
    socket.on('close', finish);
    // The server may answer and close before it read all we send: that is the point, not a failure.
    socket.on('error', (error) => (data ? finish() : reject(error)));
    socket.on('connect', () => {
      for (const part of typeof request === 'string' ? [request] : request) socket.write(part);
    });
  });
}

const chunked = (path: string, body: string, chunkSize = 4096) => {
  const parts = [
    `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: ${adminAuth}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n`,
  ];
  for (let i = 0; i < body.length; i += chunkSize) {
    const chunk = body.slice(i, i + chunkSize);
    parts.push(`${Buffer.byteLength(chunk).toString(16)}\r\n${chunk}\r\n`);
  }
  parts.push('0\r\n\r\n');
  return parts.map((p) => Buffer.from(p));
};

function expectTooLarge(status: number, contentType: string | null, body: string) {
  expect(status).toBe(413);
  expect(contentType).toMatch(/^application\/problem\+json/);
  const problem = JSON.parse(body);
  expect(problem).toMatchObject({
    status: 413,
    type: expect.stringMatching(/\/payload-too-large$/),
    detail: expect.stringContaining(String(LIMIT)),
  });
}

describe('request size limits', () => {
  it('refuse a body whose Content-Length is over the limit, storing nothing', async () => {
    const before = await stored();
    const res = await send(booted.app, 'POST', '/admin/subjects/create', enrolment(LIMIT + 1));
    expectTooLarge(res.status, res.headers.get('content-type'), await res.text());
    // Refused before authentication too, from the declared length alone: a stranger cannot make the service
    // read a large body.
    const body = enrolment(LIMIT * 4);
    const anonymous = await rawHttp(
      `POST /admin/subjects/create HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
    );
    expect(anonymous.status).toBe(413);
    expect(await stored()).toEqual(before);
  });

  it('accept a body of exactly the limit', async () => {
    const empty = JSON.stringify({ username: 'exactly', password: '', role: 'USER' });
    const exact = JSON.stringify({ username: 'exactly', password: 'p'.repeat(LIMIT - empty.length), role: 'USER' });
    expect(Buffer.byteLength(exact)).toBe(LIMIT);
    const res = await send(booted.app, 'POST', '/admin/accounts/create', exact);
    // Not refused for its size (whether such a long password suits the account rules is another matter).
    expect(res.status).not.toBe(413);
  });

  it('refuse a chunked body without Content-Length once it passes the limit, storing nothing', async () => {
    const before = await stored();
    const big = await rawHttp(chunked('/admin/subjects/create', enrolment(LIMIT * 3)));
    expectTooLarge(big.status, big.headers.match(/content-type: ([^\r\n]+)/i)?.[1] ?? null, big.body);
    expect(big.headers).toMatch(/x-content-type-options: nosniff/i);

    // Through app.fetch with a stream body (no length known in advance), as other runtimes deliver them.
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        const body = Buffer.from(enrolment(LIMIT * 2));
        for (let i = 0; i < body.length; i += 1000) controller.enqueue(body.subarray(i, i + 1000));
        controller.close();
      },
    });
    const res = await booted.app.request('/admin/subjects/create', {
      method: 'POST',
      headers: { authorization: adminAuth, 'content-type': 'application/json' },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    expect(res.headers.get('content-length')).not.toBe(String(LIMIT * 2));
    expectTooLarge(res.status, res.headers.get('content-type'), await res.text());
    expect(await stored()).toEqual(before);
  });

  it('answers a chunked body from a stranger with 401 without reading it (nothing is buffered before authentication)', async () => {
    const before = await stored();
    const parts = chunked('/admin/subjects/create', enrolment(LIMIT * 3));
    parts[0] = Buffer.from(parts[0]!.toString().replace(`Authorization: ${adminAuth}\r\n`, ''));
    const res = await rawHttp(parts);
    expect(res.status).toBe(401);
    expect(await stored()).toEqual(before);
  });

  it('read a chunked body under the limit whole', async () => {
    const before = await stored();
    const res = await rawHttp(
      chunked(
        '/admin/accounts/create',
        JSON.stringify({ username: 'chunked', password: 'chunked-password', role: 'USER' }),
        7,
      ),
    );
    expect(res.status).toBe(201);
    expect(JSON.parse(res.body)).toMatchObject({ username: 'chunked', role: 'USER' });
    expect((await stored()).accounts).toBe(before.accounts + 1);
  });
});
