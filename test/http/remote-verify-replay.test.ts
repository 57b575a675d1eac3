// remoteVerify against replay and against encrypted templates that outlive their enrolment (issue 15, items 3
// and 4), through HTTP on PGlite (serviceDialects) with enrolments: a template the service handed out (the QR
// code's clear template, a stored sample's template) sent back as the "fresh" probe, as is or nudged, is
// refused; an encrypted template stops verifying once its subject is deleted, re-enrolled, re-extracted or
// once it expires, and each refusal names its reason and is logged as a FAILED REMOTE_VERIFY operation.
import jsQR from 'jsqr';
import { CompactEncrypt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeImage } from '../../src/biometrics/image/decode.js';
import { encodeFaceTemplate, encodeTemplate, parseTemplate } from '../../src/biometrics/template.js';
import { signTemplate, verifySignedTemplate } from '../../src/services/templates/signed.js';
import { templateKeys } from '../../src/services/templates/keys.js';
import { photo } from '../biometrics/helpers.js';
import { adminAuth, bootForTest, serviceDialects } from '../support/databases.js';
import { closeSharedExtractor, sharedExtractorFactory } from '../support/extractor.js';

const b64 = (b: Uint8Array) => Buffer.from(b).toString('base64');
const unb64 = (s: string) => new Uint8Array(Buffer.from(s, 'base64'));
/** Person A: two frames of one man (enrolment and a later capture); person B: someone else. */
const A_ENROL = 'labelled/franck/franck_01829.jpg',
  A_FRESH = 'labelled/franck/franck_04117.jpg',
  B = 'labelled/obama/obama4_crop.jpg';
const DAY = 86_400_000;

/** The bytes of the QR code in a PNG, read with jsQR (an independent decoder). */
async function readQrPng(png: Uint8Array): Promise<Uint8Array> {
  const rgb = await decodeImage(png);
  const rgba = new Uint8ClampedArray(rgb.width * rgb.height * 4);
  for (let i = 0, j = 0; i < rgb.data.length; i += 3, j += 4) {
    rgba[j] = rgb.data[i]!;
    rgba[j + 1] = rgb.data[i + 1]!;
    rgba[j + 2] = rgb.data[i + 2]!;
    rgba[j + 3] = 255;
  }
  const code = jsQR(rgba, rgb.width, rgb.height);
  expect(code, 'a QR code was found').not.toBeNull();
  return Uint8Array.from(code!.binaryData);
}

afterAll(async () => {
  await closeSharedExtractor();
});

for (const dialect of serviceDialects) {
  describe(`remoteVerify refuses replays and unbound templates on ${dialect}`, () => {
    let booted: Awaited<ReturnType<typeof bootForTest>>;
    let clock = Date.now();
    let freshA: string;

    beforeAll(async () => {
      booted = await bootForTest(
        dialect,
        {},
        { createExtractor: sharedExtractorFactory(), now: () => new Date(clock) },
      );
      freshA = await fresh(A_FRESH);
    }, 120_000);
    afterAll(async () => {
      await booted?.close();
    });

    const send = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
      booted.app.request(path, {
        method,
        headers: {
          authorization: adminAuth,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...headers,
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    const db = () => booted.services.ctx.db;
    async function fresh(path: string) {
      const extractor = await booted.services.extractors.get();
      const analysis = await extractor.analyseFace(photo(path), { checks: false });
      return b64(encodeFaceTemplate(extractor.templateVersion, analysis.faces[0]!));
    }
    async function enrol(subjectId: string, image: string) {
      const res = await send('POST', '/admin/subjects/create', {
        subjectId,
        faces: [{ image: b64(photo(image)) }],
        options: { deduplicate: false },
      });
      const body = await res.json();
      expect(res.status, JSON.stringify(body)).toBe(201);
      expect(body.encryptedTemplate).toBeTruthy();
      return body as { id: number; encryptedTemplate: string; enrollmentOperationUuid: string };
    }
    const remove = async (subjectId: string) =>
      expect((await send('DELETE', `/admin/subjects/id/?subjectId=${subjectId}`)).status).toBe(200);
    const qrJson = async (subjectId: string) => {
      const res = await send('GET', `/admin/subjects/qrcode/${subjectId}`, undefined, { accept: 'application/json' });
      expect(res.status).toBe(200);
      return res.json();
    };
    /** remoteVerify; answers the status, the body, and the operation it logged. */
    async function verify(template: string, encryptedTemplate: string) {
      const res = await send('POST', '/user/operations/remote-verify', { template, encryptedTemplate });
      const body = await res.json();
      const uuid = body.operationUuid;
      const operation = uuid
        ? await db().selectFrom('operations').selectAll().where('uuid', '=', uuid).executeTakeFirst()
        : undefined;
      return { status: res.status, body, operation };
    }
    /** A refusal: the status, the named reason in the problem body, a FAILED REMOTE_VERIFY operation with that reason. */
    async function expectRefused(template: string, encryptedTemplate: string, status: number, reason: string) {
      const r = await verify(template, encryptedTemplate);
      expect(r.status, JSON.stringify(r.body)).toBe(status);
      expect(r.body).toMatchObject({ reason });
      expect(r.operation, 'operation logged').toMatchObject({ type: 'REMOTE_VERIFY', status: 'FAILED' });
      expect(r.operation!.details).toMatchObject({ reason });
      return r.body;
    }

    it('a fresh capture of the enrolled person still verifies', async () => {
      const { encryptedTemplate } = await enrol('genuine', A_ENROL);
      const r = await verify(freshA, encryptedTemplate);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body).toMatchObject({ verified: true, subjectId: 'genuine' });
      expect(r.operation).toMatchObject({ status: 'SUCCESS' });
      const fromQr = await verify(freshA, (await qrJson('genuine')).encryptedTemplate);
      expect(fromQr.body).toMatchObject({ verified: true, subjectId: 'genuine' });
      await remove('genuine');
    });

    it('the clear template of the QR code sent back as the probe is refused (PROBE_REPLAYED), as is, nudged, or re-encoded', async () => {
      const { encryptedTemplate } = await enrol('replayed', A_ENROL);
      const qr = await qrJson('replayed');
      const clear = (await verifySignedTemplate(booted.services.ctx, unb64(qr.payload))).templateBytes;
      const body = await expectRefused(b64(clear), encryptedTemplate, 422, 'PROBE_REPLAYED');
      expect(body.errors[0].field).toBe('body.template');
      await expectRefused(b64(clear), qr.encryptedTemplate, 422, 'PROBE_REPLAYED');
      // Nudged: a few components moved by one step, other quality byte, re-quantised with another scale.
      const t = parseTemplate(clear);
      const record = t.records[0]!;
      const q = Int8Array.from(record.q, (v, i) =>
        i % 7 === 0 ? Math.max(-127, Math.min(127, v + (i % 2 ? 1 : -1))) : v,
      );
      const nudged = encodeTemplate({
        templateVersion: t.templateVersion,
        records: [{ ...record, quality: 55, q, scale: record.scale * 1.01 }],
      });
      await expectRefused(b64(nudged), encryptedTemplate, 422, 'PROBE_REPLAYED');
      await remove('replayed');
    });

    it('a stored sample template of the subject (what its images give when extracted again) is refused too', async () => {
      // Two photos: the compact template is one of them; the other sample is also something the service holds.
      const res = await send('POST', '/admin/subjects/create', {
        subjectId: 'two-samples',
        faces: [{ image: b64(photo(A_ENROL)) }, { image: b64(photo('labelled/franck/franck_02683.jpg')) }],
        options: { deduplicate: false },
      });
      const subject = await res.json();
      expect(res.status, JSON.stringify(subject)).toBe(201);
      const samples = await db()
        .selectFrom('face_samples')
        .select('template')
        .where('subject_ref', '=', subject.id)
        .execute();
      expect(samples).toHaveLength(2);
      for (const s of samples) await expectRefused(b64(s.template!), subject.encryptedTemplate, 422, 'PROBE_REPLAYED');
      await remove('two-samples');
    });

    it('an encrypted template of a deleted subject no longer verifies (SUBJECT_DELETED)', async () => {
      const { encryptedTemplate } = await enrol('gone', A_ENROL);
      await remove('gone');
      await expectRefused(freshA, encryptedTemplate, 404, 'SUBJECT_DELETED');
    });

    it("A enrolled as X, deleted, B enrolled as X: A's old encrypted template with a fresh capture of A is refused (SUBJECT_REENROLLED)", async () => {
      const a = await enrol('x', A_ENROL);
      await remove('x');
      const b = await enrol('x', B);
      expect(b.id).not.toBe(a.id);
      const body = await expectRefused(freshA, a.encryptedTemplate, 422, 'SUBJECT_REENROLLED');
      expect(body.errors[0].field).toBe('body.encryptedTemplate');
      // X's current encrypted template is B's: A is not B.
      expect((await verify(freshA, b.encryptedTemplate)).body).toMatchObject({ verified: false, subjectId: 'x' });
      await remove('x');
    });

    it('an encrypted template issued before a re-extraction is refused (TEMPLATE_REEXTRACTED); a new one works', async () => {
      const { id, encryptedTemplate } = await enrol('reextracted', A_ENROL);
      // What a re-extraction with new models writes: another face template in the subject's FACE row.
      const other = unb64(await fresh('labelled/franck/franck_02045.jpg'));
      await db()
        .updateTable('templates')
        .set({ data: other })
        .where('subject_ref', '=', id)
        .where('modality', '=', 'FACE')
        .execute();
      await expectRefused(freshA, encryptedTemplate, 422, 'TEMPLATE_REEXTRACTED');
      expect((await verify(freshA, (await qrJson('reextracted')).encryptedTemplate)).body).toMatchObject({
        verified: true,
      });
      await remove('reextracted');
    });

    it('an encrypted template expires after remoteVerify.encryptedTemplateTtlDays (TEMPLATE_EXPIRED); 0 never expires', async () => {
      await booted.services.settings.set('remoteVerify.encryptedTemplateTtlDays', 30);
      const { encryptedTemplate } = await enrol('expiring', A_ENROL);
      await booted.services.settings.set('remoteVerify.encryptedTemplateTtlDays', 0);
      const forever = (await qrJson('expiring')).encryptedTemplate;
      clock += 29 * DAY;
      expect((await verify(freshA, encryptedTemplate)).status).toBe(200);
      clock += 2 * DAY;
      const body = await expectRefused(freshA, encryptedTemplate, 422, 'TEMPLATE_EXPIRED');
      expect(body.detail).toMatch(/expired/);
      clock += 3650 * DAY;
      expect((await verify(freshA, forever)).body).toMatchObject({ verified: true });
      await booted.services.settings.set('remoteVerify.encryptedTemplateTtlDays', null);
      await remove('expiring');
    });

    it('a JWE of the old unbound format, or a QR code envelope wrapped in a JWE, is refused (TEMPLATE_UNBOUND)', async () => {
      await enrol('unbound', A_ENROL);
      const qr = await qrJson('unbound');
      const key = await templateKeys(booted.services.ctx).current('template-encryption');
      const header = { alg: key.alg, enc: 'A256GCM', kid: key.id, typ: 'bims-template+jwe', tv: qr.templateVersion };
      // Exactly what encryptTemplateForDevice made before templates were bound: the signed QR envelope, encrypted.
      const stored = (await verifySignedTemplate(booted.services.ctx, unb64(qr.payload))).templateBytes;
      const old = await new CompactEncrypt(await signTemplate(booted.services.ctx, stored, 'unbound'))
        .setProtectedHeader(header)
        .encrypt(key.publicKey);
      const body = await expectRefused(freshA, old, 422, 'TEMPLATE_UNBOUND');
      expect(body.detail).toMatch(/new one/);
      const wrapped = await new CompactEncrypt(unb64(qr.payload)).setProtectedHeader(header).encrypt(key.publicKey);
      await expectRefused(freshA, wrapped, 422, 'TEMPLATE_UNBOUND');
      await remove('unbound');
    });

    it('qrcode.clearTemplate off: the code carries the encrypted template, which remoteVerify and getTemplateModalities read', async () => {
      await enrol('no-clear', A_ENROL);
      const stored = await db()
        .selectFrom('templates')
        .innerJoin('subjects', 'subjects.id', 'templates.subject_ref')
        .select('templates.data')
        .where('subject_id', '=', 'no-clear')
        .executeTakeFirstOrThrow();
      expect((await qrJson('no-clear')).payloadType).toBe('SIGNED_TEMPLATE');
      await booted.services.settings.set('qrcode.clearTemplate', false);
      try {
        const png = await send('GET', '/subjects/qrcode/no-clear');
        expect(png.status).toBe(200);
        const carried = new TextDecoder().decode(await readQrPng(new Uint8Array(await png.arrayBuffer())));
        expect(carried).toMatch(/^eyJ[\w-]*(\.[\w-]*){4}$/);
        const body = await qrJson('no-clear');
        expect(body).toMatchObject({ subjectId: 'no-clear', payloadType: 'ENCRYPTED_TEMPLATE' });
        const payload = unb64(body.payload);
        expect(await readQrPng(unb64(body.image))).toEqual(payload);
        // Nothing of the clear template is in the code: not its bytes, not a run of its embedding.
        expect(Buffer.from(payload).includes(Buffer.from(stored.data).subarray(40, 72))).toBe(false);
        console.log(`QR code with the encrypted template: ${payload.length} bytes, QR version ${body.qrVersion}`);
        expect(body.qrVersion).toBeLessThanOrEqual(32);
        // The code's JWE is a bound encrypted template: a fresh capture verifies with it.
        expect((await verify(freshA, new TextDecoder().decode(payload))).body).toMatchObject({
          verified: true,
          subjectId: 'no-clear',
        });
        const modalities = await send('POST', '/user/subjects/qrcode/modalities', { payload: body.payload });
        expect(modalities.status).toBe(200);
        expect(await modalities.json()).toMatchObject({
          modalities: ['FACE'],
          subjectId: 'no-clear',
          signed: true,
          signatureValid: true,
          encrypted: true,
        });
        const tampered = carried.slice(0, -6) + (carried.endsWith('AAAAAA') ? 'BBBBBB' : 'AAAAAA');
        const refused = await send('POST', '/user/subjects/qrcode/modalities', {
          payload: b64(new TextEncoder().encode(tampered)),
        });
        expect(refused.status).toBe(422);
        expect((await refused.json()).errors[0].field).toBe('body.payload');
      } finally {
        await booted.services.settings.set('qrcode.clearTemplate', null);
      }
      await remove('no-clear');
    });

    it('the nudged replay is recorded with the template it copies, for the audit trail only', async () => {
      const { encryptedTemplate } = await enrol('audited', A_ENROL);
      const clear = (await verifySignedTemplate(booted.services.ctx, unb64((await qrJson('audited')).payload)))
        .templateBytes;
      const r = await verify(b64(clear), encryptedTemplate);
      expect(r.status).toBe(422);
      expect(r.operation!.details).toMatchObject({ reason: 'PROBE_REPLAYED', copyOf: 'ENCRYPTED_TEMPLATE', cosine: 1 });
      expect(JSON.stringify(r.body)).not.toMatch(/cosine|copyOf/);
      await remove('audited');
    });
  });
}
