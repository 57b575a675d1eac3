import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminAuth, bootForTest, serviceDialects } from '../support/databases.js';
import { RawConnection } from '../support/raw-http.js';
import { serveOnLoopback } from '../support/serve.js';

/**
 * Early answers leave the connection usable. An upload refused before its body was read (no credentials,
 * expired ones, a declared length over the limit) is answered, and then either the body is drained and the
 * next request on the same keep-alive connection is answered too, or the answer says `Connection: close`
 * and the server ends the connection cleanly (FIN after the whole answer, no reset). Driven over raw
 * sockets against a real listener (@hono/node-server, as src/runtime/node.ts serves the app).
 */

const LIMIT = 512 * 1024;
type Served = { booted: Awaited<ReturnType<typeof bootForTest>>; server: Awaited<ReturnType<typeof serveOnLoopback>> };

function upload(bytes: number, headers: Record<string, string> = {}): string {
  const head = JSON.stringify({ subjectId: 'early', faces: [{ image: '' }] });
  const body = head.replace('"image":""', `"image":"${'A'.repeat(Math.max(0, bytes - head.length))}"`);
  const lines = Object.entries({
    Host: 'bims.test',
    'Content-Type': 'application/json',
    'Content-Length': String(body.length),
    ...headers,
  }).map(([k, v]) => `${k}: ${v}`);
  return `POST /user/subjects/create HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n${body}`;
}
const HEALTH = 'GET /health HTTP/1.1\r\nHost: bims.test\r\n\r\n';

for (const dialect of serviceDialects) {
  describe(`early answers on ${dialect}`, () => {
    let open: Served;
    let limited: Served;
    const serve = async (env: Record<string, string>): Promise<Served> => {
      const booted = await bootForTest(dialect, env);
      return { booted, server: await serveOnLoopback(booted.app.fetch) };
    };
    beforeAll(async () => {
      open = await serve({});
      limited = await serve({ BIMS_MAX_BODY_BYTES: String(LIMIT) });
    });
    afterAll(async () => {
      for (const s of [open, limited]) {
        await s?.server.stop();
        await s?.booted.close();
      }
    });

    /**
     * Send `first` then a /health request on one connection; the first answer must be `status`, and the
     * second answered, unless the first said Connection: close and the connection then ended cleanly.
     */
    async function twoOnOneSocket(url: string, first: string, status: number) {
      const conn = await RawConnection.open(url);
      try {
        await conn.write(first);
        await conn.write(HEALTH);
        const answer = await conn.next();
        expect(answer?.status, `first answer (connection ${conn.ended})`).toBe(status);
        if (answer!.headers.connection?.toLowerCase() === 'close') {
          expect(await conn.closed()).toBe('end');
          return 'closed';
        }
        const second = await conn.next();
        expect(second?.status, `second answer on the same connection (connection ${conn.ended})`).toBe(200);
        expect(JSON.parse(second!.body)).toMatchObject({ status: expect.any(String) });
        return 'kept';
      } finally {
        conn.destroy();
      }
    }

    it('a 300 KB upload without credentials is a 401, and the next request on the connection is answered', async () => {
      expect(await twoOnOneSocket(open.server.url, upload(300 * 1024), 401)).toBe('kept');
    });

    it('the same with an expired or forged token', async () => {
      const forged =
        'Bearer eyJhbGciOiJFZERTQSIsImtpZCI6Im5vLXN1Y2gta2V5In0.eyJzdWIiOiJhY2NvdW50OjEiLCJleHAiOjF9.c2lnbmF0dXJl';
      expect(await twoOnOneSocket(open.server.url, upload(300 * 1024, { Authorization: forged }), 401)).toBe('kept');
    });

    it('a declared length over the limit is a 413, and the next request is answered', async () => {
      expect(await twoOnOneSocket(limited.server.url, upload(LIMIT + 100 * 1024), 413)).toBe('kept');
    });

    it('a body too large to drain gets Connection: close and a clean end', async () => {
      expect(await twoOnOneSocket(open.server.url, upload(3 * 1024 * 1024), 401)).toBe('closed');
      expect(await twoOnOneSocket(limited.server.url, upload(3 * 1024 * 1024), 413)).toBe('closed');
    });

    it('a body refused part way through (a sample that is not base64) is a 400, and the connection ends cleanly', async () => {
      const bad = upload(3 * 1024 * 1024, { Authorization: adminAuth }).replace('"image":"A', '"image":"!');
      expect(await twoOnOneSocket(open.server.url, bad.replace('/user/', '/admin/'), 400)).toBe('closed');
    });

    it('a chunked body of unknown length gets Connection: close and a clean end', async () => {
      const chunk = 'A'.repeat(64 * 1024);
      const chunked = `POST /user/subjects/create HTTP/1.1\r\nHost: bims.test\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${`${chunk.length.toString(16)}\r\n${chunk}\r\n`.repeat(
        5,
      )}0\r\n\r\n`;
      expect(await twoOnOneSocket(open.server.url, chunked, 401)).toBe('closed');
    });
  });
}
