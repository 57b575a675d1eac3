// Hostile files of every accepted format (test/support/hostile-files.ts, each at most 64 KB) through HTTP, on one
// node with a real two-worker extraction pool: each is refused by its structure before anything is queued, or
// costs no more than its bounds allow and is answered as any other image; one account's heavy jobs leave a worker
// to the others (asserted on the pool's state); a decode the bounds did not foresee is stopped where it runs,
// answered 400 and recorded, and the worker replaced, while another account's requests go on. What the bounds
// save in seconds is measured by `npm run bench -- hostile` (docs/admission.md).
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createExtractor } from '../../src/extraction/index.js';
import { chooseFaceBackend } from '../../src/extraction/node-face-backend.js';
import { type Extractor } from '../../src/extraction/extractor.js';
import { adminAuth, basic, bootForTest } from '../support/databases.js';
import { hostileFiles } from '../support/hostile-files.js';
import { longWav } from '../support/hostile-wav.js';
import { STALLING_WORKER_URL, stallingJpeg } from '../support/stalling-worker.js';
import { photo } from '../biometrics/helpers.js';

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');
const attacker = basic('attacker', 'attacker-password');
const victim = basic('victim', 'victim-password');

/** What each hostile file is answered: refused by its structure (400, the reason) or analysed (422, no face). */
const EXPECTED: Record<string, { status: number; reason?: string; operationStatus?: string; queued: boolean }> = {
  'jpeg-empty-scans': { status: 400, reason: 'IMAGE_TOO_COSTLY', queued: false },
  'jpeg-restart-intervals': { status: 400, reason: 'IMAGE_TOO_COSTLY', queued: false },
  'jpeg-cmyk': { status: 400, reason: 'IMAGE_TOO_COSTLY', queued: false },
  'jpeg-scans-admitted': { status: 422, operationStatus: 'NO_FACE_DETECTED', queued: true },
  'jpeg-header-lie': { status: 422, operationStatus: 'NO_FACE_DETECTED', queued: true },
  // Admitted by its size (61 KB of data may be an honest 64x64 image's), refused once it inflates past 12 KB.
  'png-inflation-bomb': { status: 400, reason: 'INVALID_IMAGE', queued: true },
  'png-iccp-bomb': { status: 422, operationStatus: 'NO_FACE_DETECTED', queued: true },
  'png-many-chunks': { status: 422, operationStatus: 'NO_FACE_DETECTED', queued: true },
  'png-flat-16mp': { status: 422, operationStatus: 'NO_FACE_DETECTED', queued: true },
  'wav-8s': { status: 422, operationStatus: 'QUALITY_CHECK_FAILED', queued: true },
};

describe('hostile uploads through HTTP, one node, two extraction workers', () => {
  let booted: Awaited<ReturnType<typeof bootForTest>>;
  let pool: Extractor;
  const request = async (auth: string, path: string, body?: unknown) =>
    booted.app.request(path, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { authorization: auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const countRows = async (table: 'subjects' | 'images' | 'face_samples' | 'voice_samples' | 'operations') =>
    Number(
      (
        await booted.services.ctx.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  const enrol = (auth: string, subjectId: string, sample: { kind: 'face' | 'voice'; bytes: Uint8Array }) =>
    request(auth, '/user/subjects/create', {
      subjectId,
      ...(sample.kind === 'face'
        ? { faces: [{ image: b64(sample.bytes) }] }
        : { voices: [{ audio: b64(sample.bytes) }] }),
    });

  beforeAll(async () => {
    booted = await bootForTest(
      'pglite',
      {},
      {
        // The real worker, which also spins for ever on one marked image (a decode the bounds cannot foresee).
        // The costliest image's decode budget is 4 s of CPU: 1 s for any image, three times what the costliest here needs.
        createExtractor: async () =>
          (pool = await createExtractor({
            mode: 'worker-threads',
            size: 2,
            workerUrl: STALLING_WORKER_URL,
            decodeBudgetMs: 4000,
            // The models on the backend a Node service takes by default (the budgets bound the decoding, before them).
            backend: chooseFaceBackend('auto').backend,
          })),
      },
    );
    for (const [username, password] of [
      ['attacker', 'attacker-password'],
      ['victim', 'victim-password'],
    ])
      expect((await request(adminAuth, '/admin/accounts/create', { username, password, role: 'USER' })).status).toBe(
        201,
      );
    const enrolled = await request(adminAuth, '/admin/subjects/create', {
      subjectId: 'target',
      faces: [{ image: b64(photo('labelled/obama/obama4_crop.jpg')) }],
    });
    expect(enrolled.status).toBe(201);
  }, 180_000);
  afterAll(async () => {
    await booted?.close();
    await pool?.close();
  });

  it('answers every hostile file by its bounds: refused before any job, or analysed as any image', async () => {
    const answered: Record<string, unknown> = {};
    const wanted: Record<string, unknown> = {};
    for (const file of hostileFiles()) {
      expect(file.bytes.length, file.name).toBeLessThanOrEqual(64 * 1024);
      const expected = EXPECTED[file.name]!;
      const before = { pool: pool.stats(), subjects: await countRows('subjects'), images: await countRows('images') };
      const res = await enrol(attacker, `hostile-${file.name}`, file);
      const body = await res.json();
      const field = file.kind === 'face' ? 'body.faces.0.image' : 'body.voices.0.audio';
      const jobs = (s: ReturnType<Extractor['stats']>) => s.completed + s.failed;
      const got = {
        status: res.status,
        ...(expected.reason ? { reason: body.reason, field: body.errors?.[0]?.field } : {}),
        ...(expected.operationStatus ? { operationStatus: body.operationStatus } : {}),
        queued: jobs(pool.stats()) > jobs(before.pool),
      };
      wanted[file.name] = { ...expected, ...(expected.reason ? { field } : {}) };
      answered[file.name] = got;
      // Nothing of a refused or failed upload is kept but the failed operation's own record.
      expect(await countRows('subjects'), file.name).toBe(before.subjects);
      expect(await countRows('images'), file.name).toBe(before.images);
    }
    expect(answered).toEqual(wanted);
    // A recording longer than two minutes (1 MB of 8-bit samples at 8 kHz) is refused by its chunks, unqueued.
    const queuedBefore = pool.stats().completed + pool.stats().failed;
    const long = await enrol(attacker, 'hostile-long-wav', { kind: 'voice', bytes: longWav(121) });
    expect(long.status).toBe(400);
    expect(await long.json()).toMatchObject({
      reason: 'AUDIO_TOO_LONG',
      errors: [{ field: 'body.voices.0.audio', message: 'the recording lasts 121.0 s; at most 120 s are accepted' }],
    });
    expect(pool.stats().completed + pool.stats().failed).toBe(queuedBefore);
    expect(pool.stats()).toMatchObject({ overBudget: 0, restarts: 0 });
  }, 240_000);

  it("leaves a worker free of one account's heavy jobs, while light jobs may take every worker (the pool's state)", async () => {
    await vi.waitFor(() => expect(pool.stats().busy).toBe(0), { timeout: 60_000, interval: 100 });
    const outcome = (job: Promise<unknown>) =>
      job.then(
        () => 'ok',
        (e: { code?: string }) => e.code ?? String(e),
      );
    const portrait = photo('labelled/obama/obama4_crop.jpg');
    // 16 megapixels of RGBA PNG: heavy by its header (about 0.54 s of decoding on the reference host).
    const heavy = hostileFiles().find((f) => f.name === 'png-flat-16mp')!.bytes;
    const flood = Array.from({ length: 3 }, () => outcome(pool.analyseFace(heavy, { owner: 'attacker' })));
    // One heavy job runs; the others wait although a worker is free.
    expect(pool.stats()).toMatchObject({ busy: 1, queued: 2 });
    const other = outcome(pool.analyseFace(portrait, { owner: 'victim', checks: false }));
    // The other account's job starts at once, on the worker the heavy ones left free.
    expect(pool.stats()).toMatchObject({ busy: 2, queued: 2 });
    expect(await other).toBe('ok');
    expect(await Promise.all(flood)).toEqual(['ok', 'ok', 'ok']);
    // Light jobs of one account use both workers.
    const light = Array.from({ length: 2 }, () =>
      outcome(pool.analyseFace(portrait, { owner: 'batch', checks: false })),
    );
    expect(pool.stats()).toMatchObject({ busy: 2, queued: 0 });
    expect(await Promise.all(light)).toEqual(['ok', 'ok']);
  }, 120_000);

  it("keeps another account's enrolment and an ADMIN IDENTIFY going while one account sends four of each at once", async () => {
    // The file (refused by its scans) and the costliest PNG still admitted (analysed, one at a time).
    const files = hostileFiles().filter((f) => f.name === 'jpeg-empty-scans' || f.name === 'png-flat-16mp');
    const flood = files.flatMap((file, i) =>
      Array.from({ length: 4 }, (_, k) => enrol(attacker, `flood-${i}-${k}`, file).then((r) => r.status)),
    );
    const [mine, identify] = await Promise.all([
      enrol(victim, 'victim-own', { kind: 'face', bytes: photo('labelled/franck/franck_01829.jpg') }),
      request(adminAuth, '/admin/operations/create', {
        type: 'IDENTIFY',
        faces: [{ image: b64(photo('labelled/obama/obama4_crop.jpg')) }],
      }),
    ]);
    expect(mine.status).toBe(201);
    expect((await mine.json()).status).toBe('ENROLLED');
    expect(identify.status).toBe(201);
    expect((await identify.json()).candidates?.[0]?.subjectId).toBe('target');
    expect(new Set(await Promise.all(flood))).toEqual(new Set([400, 422]));
  }, 240_000);

  it('stops a decode past its budget where it runs: 400 naming the field, recorded, the worker replaced', async () => {
    const before = { pool: pool.stats() };
    const exceptionsBefore = Number(
      (
        await booted.services.ctx.db
          .selectFrom('exceptions')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
    const [stalled, other] = await Promise.all([
      enrol(attacker, 'stalled', { kind: 'face', bytes: stallingJpeg() }),
      enrol(victim, 'victim-during-stall', { kind: 'face', bytes: photo('labelled/franck/franck_04000.jpg') }),
    ]);
    expect(other.status).toBe(201);
    expect(stalled.status).toBe(400);
    expect(await stalled.json()).toMatchObject({
      reason: 'DECODE_BUDGET_EXCEEDED',
      errors: [{ field: 'body.faces.0.image', message: expect.stringContaining('was stopped') }],
    });
    const after = pool.stats();
    expect(after.overBudget! - before.pool.overBudget!).toBe(1);
    expect(after.restarts - before.pool.restarts).toBe(1);
    const recorded = await booted.services.ctx.db
      .selectFrom('exceptions')
      .select(['type', 'message'])
      .orderBy('timestamp', 'desc')
      .execute();
    expect(recorded.length).toBe(exceptionsBefore + 1);
    expect(recorded[0]).toMatchObject({
      type: 'BiometricError',
      message: expect.stringContaining('body.faces.0.image'),
    });
    expect(await countRows('subjects')).toBe(3);
    const metrics = await (await booted.app.request('/metrics', { headers: { authorization: adminAuth } })).text();
    expect(metrics).toContain('bims_extraction_pool_stopped_total{reason="decode_budget"} 1');
    // The management view shows the pool whole again once the replacement is warm.
    await vi.waitFor(
      async () => {
        const info = await (await request(adminAuth, '/admin/management/info')).json();
        expect(info.workerPool).toMatchObject({ state: 'running', workers: 2, overBudget: 1, restarts: 1 });
      },
      { timeout: 60_000, interval: 250 },
    );
  }, 240_000);
});
