import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminAuth, bootForTest } from '../support/databases.js';
import { NO_SIDECAR_ENV } from '../support/external-ops.js';
import { closeSharedExtractor, realExtractorFactory } from '../support/extractor.js';
import { changedTables, rowVersions, tablesOf } from '../support/fuzz/db-snapshot.js';
import { hasRealPhoto, hostileAudio, hostileImages } from '../support/fuzz/images.js';
import { judgeAnswer, textOf } from '../support/fuzz/oracle.js';
import { seedSubject } from '../support/subject-rows.js';

/**
 * Every image-bearing operation gets every hostile image (images.ts) in a body that is otherwise valid, so
 * the bytes certainly reach the decoder and the face pipeline (the generated suite mostly fails earlier, on
 * the fields around the image). Bombs and broken files must be refused as a 400 naming the image field, or
 * as the 422 of a recorded operation, never a 5xx; nothing else may be written.
 */

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');
/** Images that hold no decodable face picture: the answer must be a refusal. */
const hostile = Object.entries(hostileImages()).filter(([name]) => name !== 'real photo');

/** The image operations, each with a valid body around one face image. */
const operations: [string, string, (image: string, n: number) => unknown][] = [
  ['createSubject', '/admin/subjects/create', (image, n) => ({ subjectId: `hostile-${n}`, faces: [{ image }] })],
  [
    'createSubject (user surface)',
    '/user/subjects/create',
    (image, n) => ({ subjectId: `hostile-user-${n}`, faces: [{ image }] }),
  ],
  [
    'createOperation VERIFY',
    '/operations/create',
    (image) => ({ type: 'VERIFY', subjectId: 'hostile-target', faces: [{ image }] }),
  ],
  ['createOperation IDENTIFY', '/admin/operations/create', (image) => ({ type: 'IDENTIFY', faces: [{ image }] })],
  ['createOperation CHECK', '/admin/operations/create', (image) => ({ type: 'CHECK', faces: [{ image }] })],
  ['checkImage', '/admin/operations/checkimage', (image) => ({ image })],
];

describe('hostile images reach the decoder and are refused cleanly', () => {
  let booted: Awaited<ReturnType<typeof bootForTest>>;
  let tables: string[];
  let n = 0;

  beforeAll(async () => {
    // The real pool, not recordings: what is under test is that these bytes reach the real decoder and pool and
    // are stopped there (some of them are random, so different on every run).
    booted = await bootForTest('pglite', NO_SIDECAR_ENV, { createExtractor: realExtractorFactory() });
    // A stored subject to VERIFY against, so the request gets past the subject lookup to the image.
    await seedSubject(booted.services.ctx.db, { subjectId: 'hostile-target' });
    tables = await tablesOf(booted.services.ctx.db);
  });
  afterAll(async () => {
    await booted?.close();
    await closeSharedExtractor();
  });

  const post = (path: string, body: unknown) =>
    booted.app.request(path, {
      method: 'POST',
      headers: { authorization: adminAuth, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  for (const [name, path, bodyOf] of operations) {
    it(name, async () => {
      const wrong: string[] = [];
      for (const [imageName, bytes] of hostile) {
        const before = await rowVersions(booted.services.ctx.db, tables);
        const res = await post(path, bodyOf(b64(bytes), n++));
        const text = await textOf(res);
        const problems = judgeAnswer(name.split(' ')[0]!, res, text);
        const recorded = res.status === 422 && /"operationUuid"/.test(text ?? '');
        const refusedForTheImage = res.status === 400 && /"field":"body\.(faces\.0\.)?image"/.test(text ?? '');
        // A CHECK, a VERIFY or an IDENTIFY of a picture without a face is still an answered operation.
        const answeredWithoutFace =
          res.status === 201 &&
          name.startsWith('createOperation') &&
          /"status":"NO_FACE_DETECTED"|"FAILED"/.test(text ?? '');
        const checkedWithoutFace = res.status === 200 && name === 'checkImage';
        if (!refusedForTheImage && !recorded && !answeredWithoutFace && !checkedWithoutFace)
          problems.push(`answered ${res.status}: ${text?.slice(0, 300)}`);
        if (res.status >= 400 && !recorded) {
          const changed = changedTables(before, await rowVersions(booted.services.ctx.db, tables));
          if (changed.length) problems.push(`a refusal changed ${changed.join(', ')}`);
        }
        if (problems.length) wrong.push(`'${imageName}': ${problems.join('; ')}`);
      }
      expect(wrong).toEqual([]);
    });
  }

  it.skipIf(!hasRealPhoto)('still enrols a real photo, so the refusals above are about the bytes', async () => {
    const res = await post('/admin/subjects/create', {
      subjectId: 'real-face',
      faces: [{ image: b64(hostileImages()['real photo']!) }],
    });
    expect(res.status).toBe(201);
  });

  it('refuses hostile recordings without a 5xx', async () => {
    // 'short wav' is a well-formed recording a voice engine may accept; the others are broken files.
    for (const [audioName, bytes] of Object.entries(hostileAudio()).filter(([name]) => name !== 'short wav')) {
      const res = await post('/admin/subjects/create', {
        subjectId: `voice-${audioName.replace(/\W/g, '-')}`,
        voices: [{ audio: b64(bytes) }],
      });
      const text = await textOf(res);
      expect(judgeAnswer('createSubject', res, text), audioName).toEqual([]);
      expect(res.status, `${audioName}: ${text?.slice(0, 200)}`).toBeGreaterThanOrEqual(400);
    }
  });
});
