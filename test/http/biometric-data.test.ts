import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unzipSync } from 'fflate';
import { json } from '../../src/db/json.js';
import { adminAuth, basic, bootForTest, serviceDialects } from '../support/databases.js';
import { makeJpeg, makeNoisePng, makePng, makeWav } from '../support/media.js';

/**
 * Seed sections 4.3 (biometric data) and 4.4 (images) over HTTP on PGlite (serviceDialects). Rows are seeded directly
 * (the storage contract of the enrolment and operation services), with real JPEG, PNG and WAV bytes and
 * face/voice templates that carry a marker, so any leak of template bytes into an answer is visible.
 */

const MARKER = 'TEMPLATE-BYTES-MUST-NOT-LEAK';
const template = new Uint8Array([...new TextEncoder().encode(MARKER), ...crypto.getRandomValues(new Uint8Array(64))]);
const templateBase64 = Buffer.from(template).toString('base64').slice(0, 24);
const templateHex = Buffer.from(template).toString('hex').slice(0, 24);
/** Small enough that only the subject with the large noise image goes over it. */
const CAP = 256 * 1024;
const WEIRD = 'we/ird/../..:*?名';
const USER_PASSWORD = 'user-password-123';
const uuid = () => crypto.randomUUID();

/** Assert that no template bytes, in any encoding, are in a response text or a file. */
function expectNoTemplate(text: string | Uint8Array) {
  const s = typeof text === 'string' ? text : Buffer.from(text).toString('latin1');
  expect(s).not.toContain(MARKER);
  expect(s).not.toContain(templateBase64);
  expect(s).not.toContain(templateHex);
}

for (const dialect of serviceDialects) {
  describe(`biometric data and images on ${dialect}`, () => {
    let booted: Awaited<ReturnType<typeof bootForTest>>;
    const userAuth = basic('viewer', USER_PASSWORD);
    // What was stored, for comparing answers and archives with.
    const U1 = uuid(),
      U2 = uuid(),
      U3 = uuid(),
      U4 = uuid(),
      U5 = uuid();
    const at = new Date('2026-11-20T10:00:00.000Z');
    const bytes = {
      aliceJpeg: makeJpeg(64, 48, 1),
      aliceToken: makePng(48, 64, 2),
      weirdPng: makePng(40, 40, 3),
      probeJpeg: makeJpeg(32, 32, 4),
      bigPng: makeNoisePng(320, 320),
      aliceWav: makeWav(250),
    };
    const ids = {} as Record<
      | 'alice'
      | 'weird'
      | 'bob'
      | 'big'
      | 'op1'
      | 'op2'
      | 'op3'
      | 'op4'
      | 'op5'
      | 'aliceJpeg'
      | 'aliceToken'
      | 'weirdPng'
      | 'probeJpeg'
      | 'bigPng'
      | 'aliceFace'
      | 'weirdFace'
      | 'aliceVoice',
      number
    >;

    beforeAll(async () => {
      booted = await bootForTest(dialect, { BIMS_MAX_DOWNLOAD_BYTES: String(CAP) });
      const db = booted.services.ctx.db;
      const created = await booted.app.request('/admin/accounts/create', {
        method: 'POST',
        headers: { authorization: adminAuth, 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'viewer', password: USER_PASSWORD, role: 'USER' }),
      });
      expect(created.status).toBe(201);
      // The operations are the viewer's (the user surface shows a caller what its account recorded).
      const viewerId = (await created.json()).id as number;
      const subject = async (subjectId: string, op: string) =>
        (
          await db
            .insertInto('subjects')
            .values({
              subject_id: subjectId,
              status: 'ENROLLED',
              metadata: json({}),
              template_version: 'face-test-v1',
              enrollment_operation_uuid: op,
              created_at: at,
              updated_at: at,
            })
            .returning('id')
            .executeTakeFirstOrThrow()
        ).id;
      const operation = async (u: string, type: 'ENROLL' | 'VERIFY' | 'IDENTIFY' | 'CHECK', subjectId: string | null) =>
        (
          await db
            .insertInto('operations')
            .values({
              uuid: u,
              type,
              status: 'SUCCESS',
              subject_id: subjectId,
              modalities: json(['FACE']),
              candidates: json(null),
              checks: json(null),
              details: json(null),
              duration_ms: 5,
              account_id: viewerId,
              created_at: at,
            })
            .returning('id')
            .executeTakeFirstOrThrow()
        ).id;
      const image = async (
        u: string,
        ref: number | null,
        kind: 'ORIGINAL' | 'TOKEN',
        format: 'JPEG' | 'PNG',
        w: number,
        h: number,
        b: Uint8Array,
      ) =>
        (
          await db
            .insertInto('images')
            .values({
              operation_uuid: u,
              subject_ref: ref,
              kind,
              format,
              width: w,
              height: h,
              bytes: b,
              created_at: at,
            })
            .returning('id')
            .executeTakeFirstOrThrow()
        ).id;

      ids.alice = await subject('alice', U1);
      ids.weird = await subject(WEIRD, U2);
      ids.bob = await subject('bob', uuid());
      ids.big = await subject('big', U5);
      ids.op1 = await operation(U1, 'ENROLL', 'alice');
      ids.op2 = await operation(U2, 'ENROLL', WEIRD);
      ids.op3 = await operation(U3, 'VERIFY', 'alice');
      ids.op4 = await operation(U4, 'CHECK', null);
      ids.op5 = await operation(U5, 'ENROLL', 'big');
      ids.aliceJpeg = await image(U1, ids.alice, 'ORIGINAL', 'JPEG', 64, 48, bytes.aliceJpeg);
      ids.aliceToken = await image(U1, ids.alice, 'TOKEN', 'PNG', 48, 64, bytes.aliceToken);
      ids.weirdPng = await image(U2, ids.weird, 'ORIGINAL', 'PNG', 40, 40, bytes.weirdPng);
      ids.probeJpeg = await image(U3, null, 'ORIGINAL', 'JPEG', 32, 32, bytes.probeJpeg);
      ids.bigPng = await image(U5, ids.big, 'ORIGINAL', 'PNG', 320, 320, bytes.bigPng);
      const face = async (ref: number, u: string, imageId: number, extra: Record<string, number | null>) =>
        (
          await db
            .insertInto('face_samples')
            .values({
              subject_ref: ref,
              operation_uuid: u,
              image_id: imageId,
              rectangle: json({ x: 10.4, y: 5, width: 30, height: 40.6 }),
              landmarks: json([[1, 2]]),
              yaw: null,
              pitch: null,
              roll: null,
              quality: null,
              liveness_score: null,
              template_version: 'face-test-v1',
              template,
              created_at: at,
              ...extra,
            })
            .returning('id')
            .executeTakeFirstOrThrow()
        ).id;
      ids.aliceFace = await face(ids.alice, U1, ids.aliceJpeg, {
        yaw: 1.5,
        pitch: -2,
        roll: 0.5,
        quality: 81.5,
        liveness_score: 93,
      });
      ids.weirdFace = await face(ids.weird, U2, ids.weirdPng, { quality: 55, liveness_score: Number.NaN });
      ids.aliceVoice = (
        await db
          .insertInto('voice_samples')
          .values({
            subject_ref: ids.alice,
            operation_uuid: U1,
            audio: bytes.aliceWav,
            duration_ms: 250,
            sample_rate: 16000,
            quality: 70,
            speech_ratio: 0.75,
            template_version: 'voice-test-v1',
            template,
            created_at: at,
          })
          .returning('id')
          .executeTakeFirstOrThrow()
      ).id;
    });
    afterAll(async () => {
      await booted?.close();
    });

    const get = (path: string, auth: string | null = adminAuth, headers: Record<string, string> = {}) =>
      booted.app.request(path, { headers: { ...(auth ? { authorization: auth } : {}), ...headers } });

    /** GET a JSON answer, check the status, and check it holds no template bytes. */
    async function getJson(path: string, status = 200, auth: string | null = adminAuth) {
      const res = await get(path, auth);
      const text = await res.text();
      expect(res.status, `${path}: ${text}`).toBe(status);
      expectNoTemplate(text);
      return JSON.parse(text);
    }

    async function expectProblem(path: string, status: number, type: string, auth: string | null = adminAuth) {
      const problem = await getJson(path, status, auth);
      expect(problem.type).toMatch(new RegExp(`/${type}$`));
      return problem;
    }

    const aliceFace = () => ({
      id: ids.aliceFace,
      uuid: U1,
      subjectId: 'alice',
      imageId: ids.aliceJpeg,
      rectangle: { x: 10, y: 5, width: 30, height: 41 },
      yaw: 1.5,
      pitch: -2,
      roll: 0.5,
      quality: 81.5,
      livenessScore: 93,
      templateVersion: 'face-test-v1',
      createdAt: at.toISOString(),
    });
    const aliceVoice = () => ({
      id: ids.aliceVoice,
      uuid: U1,
      subjectId: 'alice',
      durationMs: 250,
      sampleRate: 16000,
      quality: 70,
      speechRatio: 0.75,
      templateVersion: 'voice-test-v1',
      createdAt: at.toISOString(),
    });
    const image = (
      id: number,
      u: string,
      subjectId: string | undefined,
      kind: string,
      format: string,
      width: number,
      height: number,
      b: Uint8Array,
    ) => ({
      id,
      uuid: u,
      ...(subjectId ? { subjectId } : {}),
      kind,
      format,
      width,
      height,
      sizeBytes: b.length,
      createdAt: at.toISOString(),
    });

    describe('face and voice data', () => {
      it('getBiometricFaceDataById answers the face of an image on /admin only, without template bytes', async () => {
        expect(await getJson(`/admin/biometric-data/face/id/?id=${ids.aliceJpeg}`)).toEqual(aliceFace());
        await expectProblem(`/biometric-data/face/id/?id=${ids.aliceJpeg}`, 404, 'route-not-found');
        await expectProblem(`/user/biometric-data/face/id/?id=${ids.aliceJpeg}`, 404, 'route-not-found', userAuth);
        await expectProblem(`/admin/biometric-data/face/id/?id=${ids.aliceJpeg}`, 403, 'forbidden', userAuth);
        expect((await get(`/admin/biometric-data/face/id/?id=${ids.aliceJpeg}`, null)).status).toBe(401);
      });

      it('leaves out measures that were not taken (NULL, NaN)', async () => {
        const face = await getJson(`/admin/biometric-data/face/id/?id=${ids.weirdPng}`);
        expect(face).toEqual({
          id: ids.weirdFace,
          uuid: U2,
          subjectId: WEIRD,
          imageId: ids.weirdPng,
          rectangle: { x: 10, y: 5, width: 30, height: 41 },
          quality: 55,
          templateVersion: 'face-test-v1',
          createdAt: at.toISOString(),
        });
      });

      it('getBiometricFaceDataById: 404 for an image without a face or unknown, 400 for a bad id', async () => {
        await expectProblem(`/admin/biometric-data/face/id/?id=${ids.aliceToken}`, 404, 'not-found');
        await expectProblem('/admin/biometric-data/face/id/?id=2147483647', 404, 'not-found');
        for (const bad of ['id=abc', 'id=0', 'id=-3', 'id=2147483648', '']) {
          const problem = await expectProblem(`/admin/biometric-data/face/id/?${bad}`, 400, 'validation');
          expect(JSON.stringify(problem.errors)).toContain('query.id');
        }
      });

      it('getBiometricFaceDataByUUID answers on all three surfaces', async () => {
        expect(await getJson(`/admin/biometric-data/face/uuid/?uuid=${U1}`)).toEqual([aliceFace()]);
        expect(await getJson(`/biometric-data/face/uuid/?uuid=${U1}`)).toEqual([aliceFace()]);
        expect(await getJson(`/user/biometric-data/face/uuid/?uuid=${U1}`, 200, userAuth)).toEqual([aliceFace()]);
        expect(await getJson(`/user/biometric-data/face/uuid/?uuid=${U1.toUpperCase()}`, 200, userAuth)).toEqual([
          aliceFace(),
        ]);
        await expectProblem(`/biometric-data/face/uuid/?uuid=${U1}`, 403, 'forbidden', userAuth);
      });

      it('getBiometricFaceDataByUUID: [] for an operation that stored none, 404 for an unknown UUID, 400 for a bad one', async () => {
        expect(await getJson(`/admin/biometric-data/face/uuid/?uuid=${U4}`)).toEqual([]);
        expect(await getJson(`/user/biometric-data/face/uuid/?uuid=${U3}`, 200, userAuth)).toEqual([]);
        await expectProblem(`/admin/biometric-data/face/uuid/?uuid=${uuid()}`, 404, 'not-found');
        await expectProblem(`/user/biometric-data/face/uuid/?uuid=${uuid()}`, 404, 'not-found', userAuth);
        await expectProblem('/admin/biometric-data/face/uuid/?uuid=not-a-uuid', 400, 'validation');
        await expectProblem(`/admin/biometric-data/face/uuid/?uuid=${U1}&extra=1`, 400, 'validation');
      });

      it('getBiometricVoiceDataById answers one recording on /admin only; 404 unknown, 400 bad', async () => {
        expect(await getJson(`/admin/biometric-data/voice/id/?id=${ids.aliceVoice}`)).toEqual(aliceVoice());
        await expectProblem(`/admin/biometric-data/voice/id/?id=${ids.aliceVoice + 1000}`, 404, 'not-found');
        await expectProblem('/admin/biometric-data/voice/id/?id=x', 400, 'validation');
        await expectProblem(`/biometric-data/voice/id/?id=${ids.aliceVoice}`, 404, 'route-not-found');
        await expectProblem(`/user/biometric-data/voice/id/?id=${ids.aliceVoice}`, 404, 'route-not-found', userAuth);
        await expectProblem(`/admin/biometric-data/voice/id/?id=${ids.aliceVoice}`, 403, 'forbidden', userAuth);
      });

      it('getBiometricVoiceDataByUUID answers on all three surfaces; [] and 404 as for faces', async () => {
        expect(await getJson(`/admin/biometric-data/voice/uuid/?uuid=${U1}`)).toEqual([aliceVoice()]);
        expect(await getJson(`/biometric-data/voice/uuid/?uuid=${U1}`)).toEqual([aliceVoice()]);
        expect(await getJson(`/user/biometric-data/voice/uuid/?uuid=${U1}`, 200, userAuth)).toEqual([aliceVoice()]);
        expect(await getJson(`/user/biometric-data/voice/uuid/?uuid=${U2}`, 200, userAuth)).toEqual([]);
        await expectProblem(`/user/biometric-data/voice/uuid/?uuid=${uuid()}`, 404, 'not-found', userAuth);
        await expectProblem('/user/biometric-data/voice/uuid/?uuid=1', 400, 'validation', userAuth);
      });
    });

    describe('image information', () => {
      it('getImageById answers on /admin and root when the image belongs to the operation', async () => {
        const expected = image(ids.aliceJpeg, U1, 'alice', 'ORIGINAL', 'JPEG', 64, 48, bytes.aliceJpeg);
        expect(await getJson(`/admin/images/id/?id=${ids.aliceJpeg}&operationId=${ids.op1}`)).toEqual(expected);
        expect(await getJson(`/images/id/?id=${ids.aliceJpeg}&operationId=${ids.op1}`)).toEqual(expected);
        expect(await getJson(`/images/id/?id=${ids.probeJpeg}&operationId=${ids.op3}`)).toEqual(
          image(ids.probeJpeg, U3, undefined, 'ORIGINAL', 'JPEG', 32, 32, bytes.probeJpeg),
        );
      });

      it('getImageById: 404 for another operation or an unknown image, 400 without operationId, absent on /user', async () => {
        await expectProblem(`/admin/images/id/?id=${ids.aliceJpeg}&operationId=${ids.op2}`, 404, 'not-found');
        await expectProblem(`/admin/images/id/?id=999999&operationId=${ids.op1}`, 404, 'not-found');
        const problem = await expectProblem(`/admin/images/id/?id=${ids.aliceJpeg}`, 400, 'validation');
        expect(JSON.stringify(problem.errors)).toContain('query.operationId');
        await expectProblem(
          `/user/images/id/?id=${ids.aliceJpeg}&operationId=${ids.op1}`,
          404,
          'route-not-found',
          userAuth,
        );
        await expectProblem(`/images/id/?id=${ids.aliceJpeg}&operationId=${ids.op1}`, 403, 'forbidden', userAuth);
      });

      it('getImageByUUID answers every image of the operation on all three surfaces', async () => {
        const expected = [
          image(ids.aliceJpeg, U1, 'alice', 'ORIGINAL', 'JPEG', 64, 48, bytes.aliceJpeg),
          image(ids.aliceToken, U1, 'alice', 'TOKEN', 'PNG', 48, 64, bytes.aliceToken),
        ];
        expect(await getJson(`/admin/images/uuid/?uuid=${U1}`)).toEqual(expected);
        expect(await getJson(`/images/uuid/?uuid=${U1}`)).toEqual(expected);
        expect(await getJson(`/user/images/uuid/?uuid=${U1}`, 200, userAuth)).toEqual(expected);
        expect(await getJson(`/user/images/uuid/?uuid=${U4}`, 200, userAuth)).toEqual([]);
        await expectProblem(`/user/images/uuid/?uuid=${uuid()}`, 404, 'not-found', userAuth);
        await expectProblem('/user/images/uuid/?uuid=zzz', 400, 'validation', userAuth);
      });

      it('samples stay readable by UUID after their operation left the log (known by their samples)', async () => {
        const db = booted.services.ctx.db;
        const orphan = uuid();
        const carol = (
          await db
            .insertInto('subjects')
            .values({
              subject_id: 'carol',
              status: 'ENROLLED',
              metadata: json({}),
              template_version: 'face-test-v1',
              enrollment_operation_uuid: orphan,
              created_at: at,
              updated_at: at,
            })
            .returning('id')
            .executeTakeFirstOrThrow()
        ).id;
        const png = makePng(20, 30, 9);
        const id = (
          await db
            .insertInto('images')
            .values({
              operation_uuid: orphan,
              subject_ref: carol,
              kind: 'ORIGINAL',
              format: 'PNG',
              width: 20,
              height: 30,
              bytes: png,
              created_at: at,
            })
            .returning('id')
            .executeTakeFirstOrThrow()
        ).id;
        expect(await getJson(`/admin/images/uuid/?uuid=${orphan}`)).toEqual([
          image(id, orphan, 'carol', 'ORIGINAL', 'PNG', 20, 30, png),
        ]);
        expect(await getJson(`/admin/biometric-data/face/uuid/?uuid=${orphan}`)).toEqual([]);
        // On /user nobody owns them any more: the enrolment that named the account is gone.
        await expectProblem(`/user/images/uuid/?uuid=${orphan}`, 404, 'not-found', userAuth);
        const res = await get(`/admin/biometric-data/uuid/${orphan}/download`, adminAuth, {
          accept: 'application/json',
        });
        expect((await res.json()).entries).toEqual([
          expect.objectContaining({ path: `subjects/carol/original-${id}.png`, size: png.length }),
        ]);
      });
    });

    describe('downloads', () => {
      /** Download a ZIP, unzip it, and check the basics every archive shares. */
      async function zip(path: string, auth = adminAuth) {
        const res = await get(path, auth);
        if (res.status !== 200) expect.fail(`${path}: ${res.status} ${await res.text()}`);
        expect(res.headers.get('content-type')).toBe('application/zip');
        expect(res.headers.get('cache-control')).toBe('no-store');
        const disposition = res.headers.get('content-disposition')!;
        expect(disposition).toMatch(/^attachment; filename="bims-[A-Za-z0-9_-]+-\d{8}T\d{6}Z\.zip"$/);
        const files = unzipSync(new Uint8Array(await res.arrayBuffer()));
        const names = Object.keys(files);
        expect(names[0]).toBe('manifest.json');
        const manifest = JSON.parse(new TextDecoder().decode(files['manifest.json']));
        expect(disposition).toContain(`"${manifest.fileName}"`);
        expect(manifest.contentType).toBe('application/zip');
        expect(manifest.entries.map((e: { path: string }) => e.path)).toEqual(names.slice(1));
        for (const entry of manifest.entries) {
          expect(entry.path).toMatch(
            /^(subjects|operations)\/[A-Za-z0-9_~-]+\/(original|token|face-crop|voice)-\d+\.(jpg|png|wav)$/,
          );
          expect(files[entry.path]!.length).toBe(entry.size);
          expectNoTemplate(files[entry.path]!);
        }
        expect(manifest.size).toBe(manifest.entries.reduce((s: number, e: { size: number }) => s + e.size, 0));
        expectNoTemplate(files['manifest.json']!);
        return { files, manifest, names: names.slice(1) };
      }

      const weirdFolder = () => `subjects/we_ird~${ids.weird}`;
      const aliceFiles = () => ({
        [`subjects/alice/original-${ids.aliceJpeg}.jpg`]: bytes.aliceJpeg,
        [`subjects/alice/token-${ids.aliceToken}.png`]: bytes.aliceToken,
      });
      const aliceVoiceFile = () => ({ [`subjects/alice/voice-${ids.aliceVoice}.wav`]: bytes.aliceWav });
      const weirdFiles = () => ({ [`${weirdFolder()}/original-${ids.weirdPng}.png`]: bytes.weirdPng });
      const probeFiles = () => ({ [`operations/${U3}/original-${ids.probeJpeg}.jpg`]: bytes.probeJpeg });

      /** The archive holds exactly these files, byte for byte. */
      function expectFiles(got: Awaited<ReturnType<typeof zip>>, expected: Record<string, Uint8Array>) {
        expect(got.names.sort()).toEqual(Object.keys(expected).sort());
        for (const [name, b] of Object.entries(expected))
          expect(Buffer.from(got.files[name]!).equals(Buffer.from(b)), name).toBe(true);
      }

      it('downloadBiometricDataByUUID: originals, token image and voice of one operation, with a matching manifest', async () => {
        const got = await zip(`/admin/biometric-data/uuid/${U1}/download`);
        expectFiles(got, { ...aliceFiles(), ...aliceVoiceFile() });
        expect(got.manifest.fileName).toMatch(new RegExp(`^bims-biometric-data-operation-${U1}-\\d{8}T\\d{6}Z\\.zip$`));
        expect(got.manifest.entries).toEqual([
          {
            path: `subjects/alice/original-${ids.aliceJpeg}.jpg`,
            contentType: 'image/jpeg',
            size: bytes.aliceJpeg.length,
            kind: 'ORIGINAL',
            subjectId: 'alice',
            uuid: U1,
            imageId: ids.aliceJpeg,
            createdAt: at.toISOString(),
          },
          {
            path: `subjects/alice/token-${ids.aliceToken}.png`,
            contentType: 'image/png',
            size: bytes.aliceToken.length,
            kind: 'TOKEN',
            subjectId: 'alice',
            uuid: U1,
            imageId: ids.aliceToken,
            createdAt: at.toISOString(),
          },
          {
            path: `subjects/alice/voice-${ids.aliceVoice}.wav`,
            contentType: 'audio/wav',
            size: bytes.aliceWav.length,
            kind: 'VOICE',
            subjectId: 'alice',
            uuid: U1,
            voiceId: ids.aliceVoice,
            createdAt: at.toISOString(),
          },
        ]);
        expectFiles(await zip(`/admin/biometric-data/uuid/${U3}/download`), probeFiles());
        expectFiles(await zip(`/admin/biometric-data/uuid/${U4}/download`), {});
        await expectProblem(`/admin/biometric-data/uuid/${uuid()}/download`, 404, 'not-found');
        await expectProblem('/admin/biometric-data/uuid/nope/download', 400, 'validation');
      });

      it('Accept: application/json answers the manifest that the ZIP holds', async () => {
        const got = await zip(`/admin/biometric-data/uuid/${U1}/download`);
        const res = await get(`/admin/biometric-data/uuid/${U1}/download`, adminAuth, { accept: 'application/json' });
        expect(res.status).toBe(200);
        expect(res.headers.get('content-type')).toMatch(/^application\/json/);
        const text = await res.text();
        expectNoTemplate(text);
        const manifest = JSON.parse(text);
        expect({ ...manifest, fileName: undefined, createdAt: undefined }).toEqual({
          ...got.manifest,
          fileName: undefined,
          createdAt: undefined,
        });
        // A ZIP preferred, or anything else: the ZIP.
        for (const accept of ['application/zip, application/json;q=0.5', '*/*', 'text/html']) {
          expect(
            (await get(`/admin/biometric-data/uuid/${U1}/download`, adminAuth, { accept })).headers.get('content-type'),
            accept,
          ).toBe('application/zip');
        }
        expect(
          (await get(`/images/operation/${ids.op1}/download`, adminAuth, { accept: 'application/json' })).headers.get(
            'content-type',
          ),
        ).toMatch(/^application\/json/);
      });

      it('downloadBiometricDataBySubjectId and downloadSubjectsBiometricDataById: one subject, odd subjectIds made safe', async () => {
        expectFiles(await zip('/admin/biometric-data/subjectid/alice/download'), {
          ...aliceFiles(),
          ...aliceVoiceFile(),
        });
        expectFiles(await zip(`/admin/biometric-data/subjectid/${encodeURIComponent(WEIRD)}/download`), weirdFiles());
        expectFiles(await zip(`/admin/biometric-data/subject/${ids.alice}/download`), {
          ...aliceFiles(),
          ...aliceVoiceFile(),
        });
        const weird = await zip(`/admin/biometric-data/subject/${ids.weird}/download`);
        expectFiles(weird, weirdFiles());
        expect(weird.manifest.entries[0].subjectId).toBe(WEIRD);
        expect(weird.manifest.fileName).toMatch(new RegExp(`^bims-biometric-data-subject-${ids.weird}-`));
        // A subject with no samples: an archive with the manifest alone.
        expectFiles(await zip('/admin/biometric-data/subjectid/bob/download'), {});
        await expectProblem('/admin/biometric-data/subjectid/nobody/download', 404, 'not-found');
        await expectProblem('/admin/biometric-data/subject/999999/download', 404, 'not-found');
        await expectProblem('/admin/biometric-data/subject/abc/download', 400, 'validation');
      });

      it('bulk biometric-data downloads by subjectIds, subject ids, operation ids and UUIDs', async () => {
        const both = { ...aliceFiles(), ...aliceVoiceFile(), ...weirdFiles() };
        expectFiles(
          await zip(`/admin/biometric-data/subjectids/download?ids=alice&ids=${encodeURIComponent(WEIRD)}`),
          both,
        );
        expectFiles(
          await zip(`/admin/biometric-data/subjects/download?ids=${ids.alice},${ids.weird},${ids.alice}`),
          both,
        );
        expectFiles(await zip(`/admin/biometric-data/operation/download?ids=${ids.op1},${ids.op3},${ids.op4}`), {
          ...aliceFiles(),
          ...aliceVoiceFile(),
          ...probeFiles(),
        });
        expectFiles(await zip(`/admin/biometric-data/uuid/download?ids=${U2}&ids=${U3}`), {
          ...weirdFiles(),
          ...probeFiles(),
        });
      });

      it('bulk downloads are all or nothing: 404 naming every unknown identifier', async () => {
        const bySubjectId = await expectProblem(
          '/admin/biometric-data/subjectids/download?ids=alice,nobody,ghost',
          404,
          'not-found',
        );
        expect(bySubjectId.missing).toEqual(['nobody', 'ghost']);
        expect(bySubjectId.detail).toContain("'nobody'");
        const byRef = await expectProblem(
          `/admin/biometric-data/subjects/download?ids=${ids.alice},999998`,
          404,
          'not-found',
        );
        expect(byRef.missing).toEqual([999998]);
        const byOp = await expectProblem(`/admin/images/operation/download?ids=${ids.op1},999997`, 404, 'not-found');
        expect(byOp.missing).toEqual([999997]);
        const ghost = uuid();
        const byUuid = await expectProblem(`/admin/biometric-data/uuid/download?ids=${U1},${ghost}`, 404, 'not-found');
        expect(byUuid.missing).toEqual([ghost]);
        await expectProblem('/admin/biometric-data/uuid/download?ids=1,2', 400, 'validation');
        await expectProblem(
          `/admin/biometric-data/subjects/download?ids=${Array.from({ length: 1001 }, (_, i) => i + 1).join(',')}`,
          400,
          'validation',
        );
      });

      it('image downloads serve images only, on /admin and root', async () => {
        for (const prefix of ['/admin', '']) {
          expectFiles(await zip(`${prefix}/images/operation/${ids.op1}/download`), aliceFiles());
          expectFiles(await zip(`${prefix}/images/subject/${ids.alice}/download`), aliceFiles());
          expectFiles(await zip(`${prefix}/images/operation/download?ids=${ids.op2},${ids.op3}`), {
            ...weirdFiles(),
            ...probeFiles(),
          });
          expectFiles(await zip(`${prefix}/images/subjects/download?ids=${ids.alice}&ids=${ids.weird}`), {
            ...aliceFiles(),
            ...weirdFiles(),
          });
          const named = await zip(`${prefix}/images/subject/${ids.alice}/download`);
          expect(named.manifest.fileName).toMatch(new RegExp(`^bims-images-subject-${ids.alice}-`));
        }
        await expectProblem(`/images/operation/999999/download`, 404, 'not-found');
        await expectProblem(`/images/subject/999999/download`, 404, 'not-found');
      });

      it('downloads above BIMS_MAX_DOWNLOAD_BYTES answer 422 before any byte is sent', async () => {
        expect(bytes.bigPng.length).toBeGreaterThan(CAP);
        for (const path of [
          `/admin/biometric-data/subject/${ids.big}/download`,
          `/admin/biometric-data/subjects/download?ids=${ids.alice},${ids.big}`,
          `/images/operation/${ids.op5}/download`,
        ]) {
          const problem = await expectProblem(path, 422, 'unprocessable');
          expect(problem).toMatchObject({ limit: CAP, size: expect.any(Number) });
          expect(problem.detail).toContain('ask for fewer');
        }
      });

      it('a USER reaches no download: 403 on /admin and root, 404 on /user', async () => {
        const paths = [
          `/biometric-data/operation/download?ids=${ids.op1}`,
          '/biometric-data/subjectids/download?ids=alice',
          `/biometric-data/uuid/download?ids=${U1}`,
          '/biometric-data/subjectid/alice/download',
          `/biometric-data/uuid/${U1}/download`,
          `/biometric-data/subject/${ids.alice}/download`,
          `/biometric-data/subjects/download?ids=${ids.alice}`,
          `/images/operation/download?ids=${ids.op1}`,
          `/images/subjects/download?ids=${ids.alice}`,
          `/images/operation/${ids.op1}/download`,
          `/images/subject/${ids.alice}/download`,
        ];
        for (const path of paths) {
          await expectProblem(`/admin${path}`, 403, 'forbidden', userAuth);
          await expectProblem(`/user${path}`, 404, 'route-not-found', userAuth);
          expect((await get(`/admin${path}`, null)).status).toBe(401);
        }
        for (const path of paths.filter((p) => p.startsWith('/images')))
          await expectProblem(path, 403, 'forbidden', userAuth);
        for (const path of paths.filter((p) => p.startsWith('/biometric-data')))
          await expectProblem(path, 404, 'route-not-found');
      });
    });
  });
}
