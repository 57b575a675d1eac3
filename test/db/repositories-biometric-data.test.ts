// The repositories of enrolment, the biometric-data reads, token images, templates and re-extraction over both
// dialects: rows come back decoded (jsonb as values, timestamps as Dates, sizes as numbers) whatever the
// driver; the ownership condition narrows a read; an operation UUID is known by its samples alone; a token
// image is pending until stored, and stored once; the outdated subjects are counted by version and paged.
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json } from '../../src/db/json.js';
import type { Database } from '../../src/db/tables.js';
import { knownOperationUuids } from '../../src/db/repositories/biometric-data/identifiers.js';
import {
  listFaceDataOfOperation,
  listImagesInScope,
  listImagesOfOperation,
} from '../../src/db/repositories/biometric-data/samples.js';
import {
  listPendingTokenImageIds,
  listTokenImageSources,
  storeTokenImage,
} from '../../src/db/repositories/biometric-data/token-images.js';
import {
  insertFaceSample,
  insertImage,
  insertSubjectTemplate,
  insertSubjectUnlessTaken,
} from '../../src/db/repositories/enrolment.js';
import {
  countOutdatedSubjectsByVersion,
  listOutdatedSubjectsAfter,
  listStoredFaceSamples,
  replaceSubjectTemplate,
} from '../../src/db/repositories/reextract.js';
import {
  findServiceKey,
  findSubjectFaceTemplate,
  listFaceTemplatesOfVersion,
} from '../../src/db/repositories/templates.js';
import { ownsSample } from '../../src/services/ownership.js';
import { dialects } from '../support/databases.js';
import { openMigratedDatabase } from '../support/migrated-database.js';

const at = new Date('2026-06-01T12:00:00.000Z');
const landmarks = Array.from({ length: 68 }, (_, i) => [i, i + 0.5]);
const photo = Uint8Array.from({ length: 1000 }, (_, i) => i % 251);

for (const dialect of dialects) {
  describe(`enrolment, biometric-data, templates and reextract repositories on ${dialect}`, () => {
    let db: Kysely<Database>;
    let close: () => Promise<void>;
    const enrolUuid = crypto.randomUUID();
    const probeUuid = crypto.randomUUID();
    let subjectRef = 0;
    let originalId = 0;
    let tokenId = 0;
    beforeAll(async () => {
      ({ db, close } = await openMigratedDatabase(dialect));
      await db.insertInto('accounts').values({ id: 7, username: 'u7', password_hash: 'x', role: 'USER' }).execute();
      await db
        .insertInto('operations')
        .values({
          uuid: enrolUuid,
          type: 'ENROLL',
          status: 'SUCCESS',
          subject_id: 'alice',
          modalities: json(['FACE']),
          score: null,
          threshold: null,
          candidates: json(null),
          checks: json(null),
          details: json(null),
          duration_ms: 1,
          account_id: 7,
          surface: 'user',
          created_at: at,
        })
        .execute();
    }, 120_000);
    afterAll(async () => close?.());

    it('stores a subject once per subjectId and answers it decoded', async () => {
      const subject = await insertSubjectUnlessTaken(db, {
        subject_id: 'alice',
        status: 'ENROLLED',
        metadata: json({ team: 'blue', n: 1 }),
        template_version: 'face:v1',
        enrollment_operation_uuid: enrolUuid,
        created_at: at,
        updated_at: at,
      });
      expect(subject).toMatchObject({ subject_id: 'alice', metadata: { team: 'blue', n: 1 } });
      expect(subject!.created_at).toBeInstanceOf(Date);
      expect(subject!.created_at.toISOString()).toBe(at.toISOString());
      subjectRef = subject!.id;
      expect(
        await insertSubjectUnlessTaken(db, {
          subject_id: 'alice',
          status: 'ENROLLED',
          metadata: json({}),
          template_version: null,
          enrollment_operation_uuid: null,
          created_at: at,
          updated_at: at,
        }),
      ).toBeUndefined();

      originalId = await insertImage(db, {
        operation_uuid: enrolUuid,
        subject_ref: subjectRef,
        kind: 'ORIGINAL',
        format: 'JPEG',
        width: 10,
        height: 20,
        bytes: photo,
        created_at: at,
      });
      tokenId = await insertImage(db, {
        operation_uuid: enrolUuid,
        subject_ref: subjectRef,
        kind: 'TOKEN',
        format: 'PNG',
        width: 240,
        height: 320,
        bytes: null,
        source_image_id: originalId,
        created_at: at,
      });
      await insertFaceSample(db, {
        subject_ref: subjectRef,
        operation_uuid: enrolUuid,
        image_id: originalId,
        rectangle: json({ x: 1, y: 2, width: 30, height: 40 }),
        landmarks: json(landmarks),
        yaw: 1.5,
        pitch: null,
        roll: null,
        quality: 80,
        liveness_score: null,
        template_version: 'face:v1',
        template: Uint8Array.of(1, 2, 3),
        created_at: at,
      });
      // A probe's face sample: no subject, no operation row (deleted from the log).
      await insertFaceSample(db, {
        subject_ref: null,
        operation_uuid: probeUuid,
        image_id: null,
        rectangle: json({ x: 0, y: 0, width: 0, height: 0 }),
        landmarks: json(null),
        template_version: 'face:v1',
        created_at: at,
      });
    });

    it('reads images and face data decoded, leaves out a token not made yet, and narrows them to an owner', async () => {
      const images = await listImagesOfOperation(db, enrolUuid);
      expect(images.map((i) => [i.id, i.kind, i.size, i.subject_id])).toEqual([
        [originalId, 'ORIGINAL', photo.length, 'alice'],
      ]);
      expect(images[0]!.created_at).toBeInstanceOf(Date);
      const faces = await listFaceDataOfOperation(db, enrolUuid);
      expect(faces).toHaveLength(1);
      expect(faces[0]!.rectangle).toEqual({ x: 1, y: 2, width: 30, height: 40 });
      expect(faces[0]!.created_at.toISOString()).toBe(at.toISOString());
      expect(await listFaceDataOfOperation(db, enrolUuid, (alias) => ownsSample(alias, { accountId: 7 }))).toHaveLength(
        1,
      );
      expect(await listFaceDataOfOperation(db, enrolUuid, (alias) => ownsSample(alias, { accountId: 8 }))).toEqual([]);
      expect((await listImagesInScope(db, { operationUuids: [], subjectRefs: [subjectRef] })).map((i) => i.id)).toEqual(
        [originalId],
      );
    });

    it('knows an operation UUID by its row or by its samples alone', async () => {
      const unknown = crypto.randomUUID();
      expect([...(await knownOperationUuids(db, [enrolUuid, probeUuid, unknown]))].sort()).toEqual(
        [enrolUuid, probeUuid].sort(),
      );
    });

    it('keeps a token image pending with its decoded source until it is stored, and stores it once', async () => {
      expect(await listPendingTokenImageIds(db, { subjectRefs: [subjectRef] })).toEqual([tokenId]);
      const [source] = await listTokenImageSources(db, [tokenId]);
      expect(source!.landmarks).toEqual(landmarks);
      expect(Buffer.from(source!.original!).equals(Buffer.from(photo))).toBe(true);
      await storeTokenImage(db, tokenId, Uint8Array.of(9, 9));
      await storeTokenImage(db, tokenId, Uint8Array.of(7)); // a second reader's write changes nothing
      expect(await listPendingTokenImageIds(db, { imageIds: [tokenId] })).toEqual([]);
      const token = (await listImagesOfOperation(db, enrolUuid)).find((i) => i.id === tokenId);
      expect(token?.size).toBe(2);
    });

    it('reads a subject with its face template (or none), and template keys with their JWKs as objects', async () => {
      await insertSubjectTemplate(db, {
        subject_ref: subjectRef,
        modality: 'FACE',
        template_version: 'face:v1',
        data: Uint8Array.of(2),
        quality: 60,
        created_at: at,
      });
      await insertSubjectTemplate(db, {
        subject_ref: subjectRef,
        modality: 'VOICE',
        template_version: 'voice:v1',
        data: Uint8Array.of(3),
        quality: 1,
        created_at: at,
      });
      const found = await findSubjectFaceTemplate(db, 'alice');
      expect(found).toMatchObject({ id: subjectRef, status: 'ENROLLED', template_version: 'face:v1' });
      expect([...found!.data!]).toEqual([2]);
      await insertSubjectUnlessTaken(db, {
        subject_id: 'carol',
        status: 'PENDING_ADJUDICATION',
        metadata: json({}),
        template_version: null,
        enrollment_operation_uuid: null,
        created_at: at,
        updated_at: at,
      });
      expect(await findSubjectFaceTemplate(db, 'carol')).toMatchObject({
        status: 'PENDING_ADJUDICATION',
        data: null,
        template_version: null,
      });
      expect(await findSubjectFaceTemplate(db, 'nobody')).toBeUndefined();
      expect((await listFaceTemplatesOfVersion(db, subjectRef, 'face:v1')).map((d) => [...d])).toEqual([[2]]);
      expect(await listFaceTemplatesOfVersion(db, subjectRef, 'face:v2')).toEqual([]);
      await db
        .insertInto('service_keys')
        .values({
          id: 'k1',
          purpose: 'template-signing',
          alg: 'Ed25519',
          private_jwk: json({ kty: 'OKP', d: 'x' }),
          public_jwk: json({ kty: 'OKP', x: 'y' }),
          created_at: at,
        })
        .execute();
      const key = await findServiceKey(db, 'template-signing', 'k1');
      expect(key?.public_jwk).toEqual({ kty: 'OKP', x: 'y' });
      expect(key?.created_at).toBeInstanceOf(Date);
      expect(await findServiceKey(db, 'template-encryption', 'k1')).toBeUndefined();
    });

    it('counts outdated subjects by version, pages them after a cursor, and replaces a template in place or adds it', async () => {
      const bob = await insertSubjectUnlessTaken(db, {
        subject_id: 'bob',
        status: 'ENROLLED',
        metadata: json({}),
        template_version: 'face:v2',
        enrollment_operation_uuid: null,
        created_at: at,
        updated_at: at,
      });
      const current = { face: 'face:v2', voice: 'voice:v1' };
      // carol has no template version and no sample: nothing of hers is of another version.
      expect(await countOutdatedSubjectsByVersion(db, current)).toEqual([{ templateVersion: 'face:v1', count: 1 }]);
      expect((await listOutdatedSubjectsAfter(db, current, 0, 10)).map((s) => s.subject_id)).toEqual(['alice']);
      expect(await listOutdatedSubjectsAfter(db, current, subjectRef, 10)).toEqual([]);
      // A face sample of an older version makes bob outdated although his own version is current.
      await insertFaceSample(db, {
        subject_ref: bob!.id,
        operation_uuid: crypto.randomUUID(),
        image_id: null,
        rectangle: json({ x: 0, y: 0, width: 0, height: 0 }),
        landmarks: json(null),
        template_version: 'face:v1',
        created_at: at,
      });
      expect(await countOutdatedSubjectsByVersion(db, current)).toEqual(
        expect.arrayContaining([
          { templateVersion: 'face:v1', count: 1 },
          { templateVersion: 'face:v2', count: 1 },
        ]),
      );
      expect(await countOutdatedSubjectsByVersion(db, current)).toHaveLength(2);
      expect((await listOutdatedSubjectsAfter(db, current, subjectRef, 1)).map((s) => s.subject_id)).toEqual(['bob']);
      expect((await listStoredFaceSamples(db, subjectRef))[0]!.rectangle).toEqual({
        x: 1,
        y: 2,
        width: 30,
        height: 40,
      });

      await replaceSubjectTemplate(
        db,
        bob!.id,
        'VOICE',
        { template_version: 'voice:v1', data: Uint8Array.of(5), quality: 1 },
        at,
      );
      await replaceSubjectTemplate(
        db,
        bob!.id,
        'VOICE',
        { template_version: 'voice:v2', data: Uint8Array.of(6), quality: 2 },
        at,
      );
      const voices = await db
        .selectFrom('templates')
        .select(['template_version', 'data'])
        .where('subject_ref', '=', bob!.id)
        .where('modality', '=', 'VOICE')
        .execute();
      expect(voices.map((v) => [v.template_version, [...v.data]])).toEqual([['voice:v2', [6]]]);
    });
  });
}
