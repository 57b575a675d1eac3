// Secrets and biometric data stay out of the process log and the exception store. A representative run
// (password logins, every token grant, enrolments and probes with photos, template exports and imports,
// client errors, and real internal failures while secrets are in flight) is made with every log line
// captured; then the lines and every row of the exceptions table are searched for each password, token,
// code, image and template the run handled, whole and in fragments, in base64, base64url, hex and as bytes.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminAuth, ADMIN_PASSWORD, basic, bootForTest, serviceDialects } from '../support/databases.js';
import { closeSharedExtractor, sharedExtractorFactory } from '../support/extractor.js';
import { send } from '../support/http.js';
import { loginWithCode, postForm } from '../support/oauth-flow.js';
import { photo } from '../biometrics/helpers.js';
import { createLogger } from '../../src/logger.js';
import { encodePng } from '../../src/biometrics/image/encode.js';

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');

afterAll(async () => {
  await closeSharedExtractor();
});

/** Forms in which a secret could reach a log line: text as is; bytes in every usual encoding. */
function needles(value: string | Uint8Array): string[] {
  if (typeof value === 'string') return fragments(value);
  const bytes = Buffer.from(value);
  const middle = bytes.subarray(Math.floor(bytes.length / 2), Math.floor(bytes.length / 2) + 16);
  return [
    ...fragments(bytes.toString('base64')),
    ...fragments(bytes.toString('base64url')),
    ...fragments(bytes.toString('hex')),
    // A Buffer or Uint8Array serialised by JSON.stringify: its bytes as decimal numbers.
    [...middle].join(','),
    `"${Math.floor(bytes.length / 2)}":${middle[0]},"${Math.floor(bytes.length / 2) + 1}":${middle[1]},"${Math.floor(bytes.length / 2) + 2}":${middle[2]}`,
  ];
}

/** A long value is also looked for by pieces: a message cut short would still carry them. */
function fragments(text: string, size = 24): string[] {
  if (text.length <= size * 2) return [text];
  const mid = Math.floor(text.length / 2);
  return [text, text.slice(0, size), text.slice(mid, mid + size), text.slice(-size)];
}

for (const dialect of serviceDialects) {
  describe(`secrets in logs and the exception store on ${dialect}`, () => {
    const lines: string[] = [];
    const secrets = new Map<string, string | Uint8Array>();
    const keep = (label: string, value: unknown) => {
      if (typeof value !== 'string' && !(value instanceof Uint8Array))
        throw new Error(`${label} missing: ${String(value)}`);
      secrets.set(label, value);
      return value;
    };
    let booted: Awaited<ReturnType<typeof bootForTest>>;
    beforeAll(async () => {
      booted = await bootForTest(
        dialect,
        {},
        { logger: createLogger('debug', (line) => lines.push(line)), createExtractor: sharedExtractorFactory() },
      );
    });
    afterAll(async () => {
      await booted?.close();
    });

    const app = () => booted.app;
    const db = () => booted.services.ctx.db;
    /** Make the database refuse inserts into a table, as a full disk or a broken replica would. */
    const breakTable = (table: string) =>
      sql
        .raw(`create trigger refuse_${table} before insert on ${table} for each row execute function refuse_insert()`)
        .execute(db());
    const repairTable = (table: string) => sql.raw(`drop trigger refuse_${table} on ${table}`).execute(db());

    it('never carry a password, token, code, image or template', async () => {
      keep('admin password', ADMIN_PASSWORD);
      keep('admin Basic credentials', adminAuth.split(' ')[1]!);
      const alice = keep('alice password', 'alice-secret-password-7Qz') as string;
      expect(
        (await send(app(), 'POST', '/admin/accounts/create', { username: 'alice', password: alice, role: 'ADMIN' }))
          .status,
      ).toBe(201);
      keep('alice Basic credentials', basic('alice', alice).split(' ')[1]!);

      // Logins: JSON and Basic, right and wrong, and a malformed body that quotes the password.
      expect((await send(app(), 'POST', '/login', { username: 'alice', password: alice }, null)).status).toBe(200);
      expect((await send(app(), 'POST', '/login', undefined, basic('alice', alice))).status).toBe(200);
      const wrong = keep('wrong password', 'not-alices-password-3Kw') as string;
      expect((await send(app(), 'POST', '/login', { username: 'alice', password: wrong }, null)).status).toBe(401);
      expect((await send(app(), 'GET', '/admin/management/info', undefined, basic('alice', wrong))).status).toBe(401);
      expect((await send(app(), 'POST', '/login', `{"username":"alice","password":"${alice}"`, null)).status).toBe(400);

      // Tokens: authorization code with PKCE, refresh (and the reuse that revokes a family), client credentials.
      const flow = await loginWithCode(app(), 'alice', alice);
      keep('authorization code', flow.code);
      keep('PKCE verifier', flow.verifier);
      const access = keep('access token (code)', flow.body.access_token) as string;
      const refresh = keep('refresh token (code)', flow.body.refresh_token) as string;
      keep('access token signature', access.split('.')[2]!);
      const rotated = await postForm(app(), '/oauth2/token', {
        grant_type: 'refresh_token',
        refresh_token: refresh,
        client_id: 'bims-docs',
      });
      expect(rotated.status).toBe(200);
      const rotatedBody = (await rotated.json()) as Record<string, string>;
      keep('access token (refresh)', rotatedBody.access_token);
      keep('refresh token (refresh)', rotatedBody.refresh_token);
      expect(
        (
          await postForm(app(), '/oauth2/token', {
            grant_type: 'refresh_token',
            refresh_token: refresh,
            client_id: 'bims-docs',
          })
        ).status,
      ).toBe(400);
      const machine = await postForm(
        app(),
        '/oauth2/token',
        { grant_type: 'client_credentials' },
        { authorization: adminAuth },
      );
      const bearer = `Bearer ${keep('access token (client credentials)', ((await machine.json()) as Record<string, string>).access_token)}`;
      const tampered = `${access.slice(0, -4)}AAAA`;
      expect((await send(app(), 'GET', '/admin/management/info', undefined, `Bearer ${tampered}`)).status).toBe(401);

      // Biometrics: enrolment, probes, a refused image, template export (QR) and import, remote verification.
      const portrait = keep('enrolled photo', photo('labelled/franck/franck_01829.jpg')) as Uint8Array;
      const probe = keep('probe photo', photo('labelled/franck/franck_04000.jpg')) as Uint8Array;
      const enrolled = await send(
        app(),
        'POST',
        '/admin/subjects/create',
        { subjectId: 'franck', faces: [{ image: b64(portrait) }] },
        bearer,
      );
      expect(enrolled.status).toBe(201);
      keep('encrypted template', ((await enrolled.json()) as Record<string, string>).encryptedTemplate);
      expect(
        (
          await send(
            app(),
            'POST',
            '/admin/operations/create',
            { type: 'VERIFY', subjectId: 'franck', faces: [{ image: b64(probe) }] },
            bearer,
          )
        ).status,
      ).toBe(201);
      expect(
        (
          await send(
            app(),
            'POST',
            '/admin/operations/create',
            { type: 'IDENTIFY', faces: [{ image: b64(probe) }] },
            bearer,
          )
        ).status,
      ).toBe(201);
      const blank = keep(
        'faceless image',
        encodePng({ width: 64, height: 64, data: new Uint8Array(64 * 64 * 3).fill(97) }),
      ) as Uint8Array;
      expect(
        (
          await send(
            app(),
            'POST',
            '/admin/subjects/create',
            { subjectId: 'nobody', faces: [{ image: b64(blank) }] },
            bearer,
          )
        ).status,
      ).toBe(422);
      expect(
        (
          await send(
            app(),
            'POST',
            '/admin/subjects/create',
            { subjectId: 'broken', faces: [{ image: b64(portrait.subarray(0, 5000)) }] },
            bearer,
          )
        ).status,
      ).toBe(400);

      const qr = await send(app(), 'GET', '/admin/subjects/qrcode/franck', undefined, bearer, {
        accept: 'application/json',
      });
      expect(qr.status).toBe(200);
      const qrBody = (await qr.json()) as Record<string, string>;
      keep('QR payload', qrBody.payload);
      keep('QR image', qrBody.image);
      expect(
        (await send(app(), 'POST', '/admin/subjects/qrcode/modalities', { payload: qrBody.payload }, bearer)).status,
      ).toBe(200);
      const compact = keep(
        'compact template',
        (await db().selectFrom('templates').select('data').executeTakeFirstOrThrow()).data,
      ) as Uint8Array;
      const sample = keep(
        'sample template',
        (await db().selectFrom('face_samples').select('template').executeTakeFirstOrThrow()).template!,
      ) as Uint8Array;
      expect(
        (
          await send(
            app(),
            'POST',
            '/admin/subjects/create',
            { subjectId: 'franck-copy', template: b64(compact), options: { deduplicate: false } },
            bearer,
          )
        ).status,
      ).toBe(201);
      const bent = Uint8Array.from(compact);
      bent[bent.length - 9]! ^= 0xff;
      keep('tampered template', bent);
      expect(
        (await send(app(), 'POST', '/admin/subjects/create', { subjectId: 'bent', template: b64(bent) }, bearer))
          .status,
      ).toBe(400);
      // A stored template sent back as the probe: refused as a replay (422), with both templates in flight.
      expect(
        (
          await send(
            app(),
            'POST',
            '/user/operations/remote-verify',
            { template: b64(sample), encryptedTemplate: qrBody.encryptedTemplate },
            bearer,
          )
        ).status,
      ).toBe(422);

      // Internal failures while secrets are in flight: the database refuses the rows being written.
      await sql
        .raw(
          `create function refuse_insert() returns trigger language plpgsql as $$ begin raise exception 'insert refused for the test'; end $$`,
        )
        .execute(db());
      const before = Number(
        (
          await db()
            .selectFrom('exceptions')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
      await breakTable('face_samples');
      expect(
        (
          await send(
            app(),
            'POST',
            '/admin/subjects/create',
            { subjectId: 'franck-2', faces: [{ image: b64(probe) }], options: { deduplicate: false } },
            bearer,
          )
        ).status,
      ).toBe(500);
      await repairTable('face_samples');
      await breakTable('refresh_tokens');
      const second = await loginWithCode(app(), 'alice', alice);
      expect(second.res.status).toBe(500);
      keep('authorization code (failed exchange)', second.code);
      keep('PKCE verifier (failed exchange)', second.verifier);
      await repairTable('refresh_tokens');
      await breakTable('accounts');
      const bob = keep('bob password', 'bobs-password-never-stored-9Xv') as string;
      expect(
        (await send(app(), 'POST', '/admin/accounts/create', { username: 'bob', password: bob, role: 'USER' }, bearer))
          .status,
      ).toBe(500);
      await repairTable('accounts');
      const exceptions = await db().selectFrom('exceptions').selectAll().execute();
      expect(exceptions.length - before).toBe(3);

      // The search.
      const haystack = [...lines, ...exceptions.map((row) => JSON.stringify(row))].join('\n');
      expect(lines.some((l) => l.includes('"message":"request"'))).toBe(true);
      expect(lines.filter((l) => l.includes('"message":"unhandled exception"'))).toHaveLength(3);
      const found: string[] = [];
      for (const [label, value] of secrets)
        for (const needle of needles(value))
          if (haystack.includes(needle)) found.push(`${label}: ${needle.slice(0, 40)}`);
      expect(found).toEqual([]);
    });
  });
}
