import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { adminAuth, ADMIN_PASSWORD, bootForTest, serviceDialects } from '../support/databases.js';
import { closeSharedExtractor, sharedExtractorFactory } from '../support/extractor.js';
import { unpackMigratedPglite } from '../support/pglite-image.js';
import { entryArgs } from '../support/node-entry.js';
import { sharedExtraction } from '../support/shared-extraction.js';
import { photo } from '../biometrics/helpers.js';
import { cosineInt8, encodeFaceTemplate, faceRecord, parseTemplate } from '../../src/biometrics/template.js';
import { dequantize } from '../support/template-records.js';
import { loadConfig } from '../../src/config/config.js';
import { boot, type Booted } from '../../src/runtime/bootstrap.js';
import { createLogger } from '../../src/logger.js';
import { runReextractJob, type ReextractProgress } from '../../src/services/reextract/job.js';

/**
 * reextractSubject and the gallery-wide re-extraction job on real photos. A model upgrade is simulated by
 * rewriting a subject's rows as if an older model ('face:old@0/p0') had made them, then restarting the
 * gallery from the database, as a process started after an upgrade would.
 */

const OLD = 'face:old@0/p0';
const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');
const franck = [
  'labelled/franck/franck_01829.jpg',
  'labelled/franck/franck_04000.jpg',
  'labelled/franck/franck_02683.jpg',
];
const connery = 'labelled/connery/SeanConnery.jpg';
const obama = 'labelled/obama/obama4_crop.jpg';
const audrey = 'labelled/audrey/audrey.jpg';

/** The same embedding written as an older model's template: same numbers, another version, so unmatchable. */
const asOld = (template: Uint8Array) => {
  const record = faceRecord(parseTemplate(template))!;
  return encodeFaceTemplate(OLD, { embedding: dequantize(record), quality: record.quality });
};

afterAll(async () => {
  await closeSharedExtractor();
});

/** Requests and database rewrites shared by the suites of this file. */
function helpers(get: () => Booted) {
  const db = () => get().services.ctx.db;
  const post = (path: string, body: unknown) =>
    get().app.request(path, {
      method: 'POST',
      headers: { authorization: adminAuth, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const enrol = async (subjectId: string, images: string[]) => {
    const res = await post('/admin/subjects/create', {
      subjectId,
      faces: images.map((p) => ({ image: b64(photo(p)) })),
      options: { deduplicate: false },
    });
    expect(res.status).toBe(201);
    return res.json();
  };
  const refOf = async (subjectId: string) =>
    (await db().selectFrom('subjects').select('id').where('subject_id', '=', subjectId).executeTakeFirstOrThrow()).id;
  /** Rewrite every template row of the subject as an older model's, then reload the gallery from the database. */
  const makeOutdated = async (subjectId: string) => {
    const ref = await refOf(subjectId);
    await db()
      .transaction()
      .execute(async (trx) => {
        for (const s of await trx
          .selectFrom('face_samples')
          .select(['id', 'template'])
          .where('subject_ref', '=', ref)
          .execute()) {
          await trx
            .updateTable('face_samples')
            .set({ template: asOld(s.template!), template_version: OLD })
            .where('id', '=', s.id)
            .execute();
        }
        for (const t of await trx
          .selectFrom('templates')
          .select(['id', 'data'])
          .where('subject_ref', '=', ref)
          .execute()) {
          await trx
            .updateTable('templates')
            .set({ data: asOld(t.data), template_version: OLD })
            .where('id', '=', t.id)
            .execute();
        }
        await trx.updateTable('subjects').set({ template_version: OLD }).where('id', '=', ref).execute();
      });
    get().services.gallery.forget();
  };
  const versionsOf = async (subjectId: string) => {
    const ref = await refOf(subjectId);
    const samples = await db()
      .selectFrom('face_samples')
      .select(['template', 'template_version'])
      .where('subject_ref', '=', ref)
      .execute();
    const compact = await db()
      .selectFrom('templates')
      .select(['data', 'template_version'])
      .where('subject_ref', '=', ref)
      .execute();
    const subject = await db()
      .selectFrom('subjects')
      .select('template_version')
      .where('id', '=', ref)
      .executeTakeFirstOrThrow();
    return new Set([
      subject.template_version,
      ...samples.flatMap((s) => [s.template_version, parseTemplate(s.template!).templateVersion]),
      ...compact.flatMap((t) => [t.template_version, parseTemplate(t.data).templateVersion]),
    ]);
  };
  const identify = async (image: string) => {
    const res = await post('/admin/operations/create', { type: 'IDENTIFY', faces: [{ image: b64(photo(image)) }] });
    expect(res.status).toBe(201);
    return ((await res.json()).candidates ?? []).map((c: { subjectId: string }) => c.subjectId) as string[];
  };
  return { db, post, enrol, refOf, makeOutdated, versionsOf, identify };
}

for (const dialect of serviceDialects) {
  describe(`reextractSubject and the re-extraction job on ${dialect}`, () => {
    let booted: Awaited<ReturnType<typeof bootForTest>>;
    let current: string;
    const h = helpers(() => booted);
    beforeAll(async () => {
      booted = await bootForTest(dialect, {}, { createExtractor: sharedExtractorFactory() });
      current = (await booted.services.extractors.get()).templateVersion;
      await h.enrol('franck', [franck[0]!]);
      await h.enrol('connery', [connery]);
      await h.enrol('obama', [obama]);
    });
    afterAll(async () => {
      await booted?.close();
    });

    it('brings an outdated stored subject back to the current version, and the gallery identifies it again', async () => {
      const ref = await h.refOf('franck');
      const before = await h
        .db()
        .selectFrom('face_samples')
        .select('template')
        .where('subject_ref', '=', ref)
        .executeTakeFirstOrThrow();
      await h.makeOutdated('franck');
      expect(await h.versionsOf('franck')).toEqual(new Set([OLD]));
      expect(await h.identify(franck[1]!)).not.toContain('franck');

      const res = await h.post('/admin/subjects/reextract-subject', { subjectId: 'franck' });
      expect(res.status).toBe(200);
      const body = await res.json();
      expect(body.templateVersion).toBe(current);
      expect(body.operation).toMatchObject({
        type: 'REEXTRACT',
        status: 'SUCCESS',
        subjectId: 'franck',
        surface: 'admin',
      });
      expect(body.subject).toMatchObject({ subjectId: 'franck', status: 'ENROLLED', templateVersion: current });
      expect(body.subject.faces.map((f: { templateVersion: string }) => f.templateVersion)).toEqual([current]);
      expect(body.subject.faces[0].quality).toBeGreaterThan(0);
      expect(JSON.stringify(body)).not.toMatch(/"template"\s*:/);

      expect(await h.versionsOf('franck')).toEqual(new Set([current]));
      // Same photo, same models: the recomputed template is the one enrolment made.
      const after = await h
        .db()
        .selectFrom('face_samples')
        .select('template')
        .where('subject_ref', '=', ref)
        .executeTakeFirstOrThrow();
      expect(
        cosineInt8(faceRecord(parseTemplate(after.template!))!.q, faceRecord(parseTemplate(before.template!))!.q),
      ).toBeGreaterThan(0.999);
      const op = await h
        .db()
        .selectFrom('operations')
        .selectAll()
        .where('uuid', '=', body.operation.uuid)
        .executeTakeFirstOrThrow();
      expect(op).toMatchObject({ type: 'REEXTRACT', status: 'SUCCESS', subject_id: 'franck' });
      expect(await h.identify(franck[1]!)).toContain('franck');
    });

    it('keeps a stored liveness score unless liveness.mode PASSIVE measures it again', async () => {
      const ref = await h.refOf('connery');
      const liveness = async () =>
        (
          await h
            .db()
            .selectFrom('face_samples')
            .select('liveness_score')
            .where('subject_ref', '=', ref)
            .executeTakeFirstOrThrow()
        ).liveness_score;
      // As if enrolled under liveness.mode PASSIVE: the score describes the capture, not the template version.
      await h.db().updateTable('face_samples').set({ liveness_score: 77 }).where('subject_ref', '=', ref).execute();
      await h.makeOutdated('connery');
      expect((await h.post('/admin/subjects/reextract-subject', { subjectId: 'connery' })).status).toBe(200);
      expect(await liveness()).toBe(77);

      await booted.services.settings.set('liveness.mode', 'PASSIVE');
      try {
        await h.makeOutdated('connery');
        expect((await h.post('/admin/subjects/reextract-subject', { subjectId: 'connery' })).status).toBe(200);
        const measured = await liveness();
        expect(measured).not.toBe(77);
        expect(measured).toBeGreaterThanOrEqual(0);
        expect(measured).toBeLessThanOrEqual(100);
      } finally {
        await booted.services.settings.set('liveness.mode', null);
      }
    });

    it('answers on every surface, 404 for an unknown subject, and 400 naming the field for bad requests', async () => {
      for (const path of ['/subjects/reextract-subject', '/user/subjects/reextract-subject']) {
        const res = await h.post(path, { subjectId: 'connery' });
        expect(res.status, path).toBe(200);
      }
      const unknown = await h.post('/admin/subjects/reextract-subject', { subjectId: 'nobody' });
      expect(unknown.status).toBe(404);
      expect((await unknown.json()).type).toMatch(/\/not-found$/);

      const garbage = await h.post('/admin/subjects/reextract-subject', {
        template: b64(new TextEncoder().encode('not a template at all')),
        faces: [{ image: b64(photo(franck[1]!)) }],
      });
      expect(garbage.status).toBe(400);
      expect((await garbage.json()).errors[0].field).toBe('body.template');
      const both = await h.post('/admin/subjects/reextract-subject', {
        subjectId: 'franck',
        template: b64(new Uint8Array(8)),
      });
      expect(both.status).toBe(400);
      expect((await both.json()).errors[0].field).toBe('body.subjectId');
      const stray = await h.post('/admin/subjects/reextract-subject', {
        subjectId: 'franck',
        faces: [{ image: b64(photo(franck[1]!)) }],
      });
      expect(stray.status).toBe(400);
      expect((await stray.json()).errors[0].field).toBe('body.faces');
      const noSample = await h.post('/admin/subjects/reextract-subject', { template: b64(new Uint8Array(8)) });
      expect(noSample.status).toBe(400);
      expect((await noSample.json()).errors[0].field).toBe('body.faces');
    });

    it('takes an old template with new samples only when they show its owner, and answers the new template', async () => {
      const compact = await h
        .db()
        .selectFrom('templates')
        .select('data')
        .where('subject_ref', '=', await h.refOf('franck'))
        .executeTakeFirstOrThrow();
      const template = b64(compact.data);

      const same = await h.post('/admin/subjects/reextract-subject', {
        template,
        faces: [{ image: b64(photo(franck[2]!)) }],
      });
      expect(same.status, await same.clone().text()).toBe(200);
      const accepted = await same.json();
      expect(accepted.templateVersion).toBe(current);
      expect(accepted.operation).toMatchObject({ type: 'REEXTRACT', status: 'SUCCESS' });
      expect(accepted.operation.score).toBeGreaterThanOrEqual(accepted.operation.threshold);
      const fresh = parseTemplate(Buffer.from(accepted.template, 'base64'));
      expect(fresh.templateVersion).toBe(current);
      expect(accepted.subject).toBeUndefined();

      const other = await h.post('/admin/subjects/reextract-subject', {
        template,
        faces: [{ image: b64(photo(connery)) }],
      });
      expect(other.status).toBe(422);
      const refused = await other.json();
      expect(refused).toMatchObject({ operationStatus: 'MATCH_NOT_FOUND' });
      expect(refused.score).toBeLessThan(refused.threshold);
      expect(refused.template).toBeUndefined();
      const op = await h
        .db()
        .selectFrom('operations')
        .selectAll()
        .where('uuid', '=', refused.operationUuid)
        .executeTakeFirstOrThrow();
      expect(op).toMatchObject({ type: 'REEXTRACT', status: 'MATCH_NOT_FOUND' });

      // One matching photo does not carry another person's through.
      const mixed = await h.post('/admin/subjects/reextract-subject', {
        template,
        faces: [{ image: b64(photo(franck[2]!)) }, { image: b64(photo(connery)) }],
      });
      expect(mixed.status).toBe(422);
      expect((await mixed.json()).sampleIndex).toBe(1);

      // Templates of another model version cannot be compared with the new samples.
      const old = await h.post('/admin/subjects/reextract-subject', {
        template: b64(asOld(compact.data)),
        faces: [{ image: b64(photo(franck[2]!)) }],
      });
      expect(old.status).toBe(422);
      const problem = await old.json();
      expect(problem.detail).toMatch(/cannot be compared/);
      expect(problem.detail).toMatch(/subjectId/);
      expect(problem.errors[0].field).toBe('body.template');

      const voices = await h.post('/admin/subjects/reextract-subject', {
        template,
        voices: [{ audio: b64(new Uint8Array(64)) }],
      });
      expect(voices.status).toBe(422);
      expect((await voices.json()).detail).toMatch(/^body\.voices: .*new face samples only/);
    });

    it('keeps a current sample enrolled from a template, and refuses with 422 naming an outdated one', async () => {
      const compact = await h
        .db()
        .selectFrom('templates')
        .select('data')
        .where('subject_ref', '=', await h.refOf('obama'))
        .executeTakeFirstOrThrow();
      const created = await h.post('/admin/subjects/create', {
        subjectId: 'from-template',
        template: b64(compact.data),
        options: { deduplicate: false },
      });
      expect(created.status).toBe(201);
      const kept = await h.post('/admin/subjects/reextract-subject', { subjectId: 'from-template' });
      expect(kept.status).toBe(200);
      expect((await kept.json()).subject.templateVersion).toBe(current);

      await h.makeOutdated('from-template');
      const res = await h.post('/admin/subjects/reextract-subject', { subjectId: 'from-template' });
      expect(res.status).toBe(422);
      const problem = await res.json();
      const sample = await h
        .db()
        .selectFrom('face_samples')
        .select('id')
        .where('subject_ref', '=', await h.refOf('from-template'))
        .executeTakeFirstOrThrow();
      expect(problem).toMatchObject({ operationStatus: 'FAILED', samplesWithoutImage: [sample.id] });
      expect(problem.detail).toMatch(/no original image/);
      expect(await h.versionsOf('from-template')).toEqual(new Set([OLD]));
    });

    it('re-extracts every outdated subject in id order with progress, records a failure and goes on; a second run finds nothing', async () => {
      await h.enrol('audrey', [audrey]);
      for (const s of ['franck', 'connery', 'obama', 'audrey']) await h.makeOutdated(s);
      // 'from-template' is outdated too and cannot be re-extracted (previous test).
      const dry = await runReextractJob(booted.services, { dryRun: true });
      expect(dry).toMatchObject({ dryRun: true, outdated: 5, total: 5, done: 0, byVersion: { [OLD]: 5 } });
      expect(await h.versionsOf('franck')).toEqual(new Set([OLD]));

      const first = await runReextractJob(booted.services, { limit: 2 });
      expect(first).toMatchObject({ outdated: 5, total: 2, done: 2, reextracted: 2, failed: 0 });
      expect(await h.versionsOf('franck')).toEqual(new Set([current]));
      expect(await h.versionsOf('connery')).toEqual(new Set([current]));

      const progress: ReextractProgress[] = [];
      const rest = await runReextractJob(booted.services, {
        batchSize: 2,
        concurrency: 2,
        onProgress: (p) => progress.push(p),
      });
      expect(rest).toMatchObject({
        templateVersion: current,
        outdated: 3,
        total: 3,
        done: 3,
        reextracted: 2,
        failed: 1,
        stopped: false,
      });
      expect(rest.failures).toEqual([
        expect.objectContaining({ subjectId: 'from-template', reason: expect.stringMatching(/no original image/) }),
      ]);
      expect(progress[0]).toEqual({ done: 0, total: 3, failed: 0, currentSubjectId: null });
      expect(progress.at(-1)).toMatchObject({ done: 3, total: 3, failed: 1 });
      expect(
        progress
          .slice(1)
          .map((p) => p.currentSubjectId)
          .sort(),
      ).toEqual(['audrey', 'from-template', 'obama']);
      for (const s of ['obama', 'audrey']) expect(await h.versionsOf(s)).toEqual(new Set([current]));
      const ops = await h
        .db()
        .selectFrom('operations')
        .select(['subject_id', 'status'])
        .where('type', '=', 'REEXTRACT')
        .where('account_id', 'is', null)
        .execute();
      expect(ops).toEqual(
        expect.arrayContaining([
          { subject_id: 'from-template', status: 'FAILED' },
          { subject_id: 'audrey', status: 'SUCCESS' },
        ]),
      );
      for (const [image, subjectId] of [
        [franck[1]!, 'franck'],
        [connery, 'connery'],
        [audrey, 'audrey'],
      ] as const) {
        expect(await h.identify(image)).toContain(subjectId);
      }

      // The subject that cannot be re-extracted goes; then nothing is left to do.
      const removed = await booted.app.request('/admin/subjects/id/?subjectId=from-template', {
        method: 'DELETE',
        headers: { authorization: adminAuth },
      });
      expect(removed.status).toBe(200);
      const again = await runReextractJob(booted.services, {});
      expect(again).toMatchObject({ outdated: 0, total: 0, done: 0, failed: 0 });
    });
  });
}

/**
 * `npm run reextract` runs the script through tsx; `node --import tsx` is the same without npx's start (0.6 s of CPU
 * a run). Under `npm test`, which built dist/ for this run, the compiled script: no TypeScript to transform in each of
 * the four processes (node-entry.ts).
 */
const REEXTRACT_SCRIPT = entryArgs('scripts/reextract.ts');

describe('npm run reextract on a PGlite data directory', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bims-reextract-'));
  const env = {
    BIMS_DATA_DIR: dir,
    BIMS_ADMIN_PASSWORD: ADMIN_PASSWORD,
    BIMS_PASSWORD_ITERATIONS: '10000',
    BIMS_LOG_LEVEL: 'silent',
  };
  // Under `npm test` the command delegates to the run's extraction service (BIMS_EXTRACTION_URL) as a deployment
  // with one would; alone, it warms a pool of its own.
  const cli = async (args: string[], extraction: Record<string, string> = sharedExtraction()) => {
    const childEnv: Record<string, string | undefined> = {
      ...process.env,
      ...env,
      BIMS_EXTRACTION_WORKERS: '1',
      ...extraction,
    };
    delete childEnv.DATABASE_URL; // the data directory, not the suite's PostgreSQL
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [...REEXTRACT_SCRIPT, ...args], {
      cwd: join(import.meta.dirname, '../..'),
      env: childEnv,
    });
    return { summary: JSON.parse(stdout), stderr };
  };
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('counts outdated subjects with --dry-run, re-extracts them with a progress bar, then finds nothing to do', async () => {
    // Already migrated (about 4 s of CPU for initdb and the migrations, not under test here).
    await unpackMigratedPglite(dir);
    // The service writes to the data directory, then stops: PGlite is opened by one process at a time.
    let booted: Booted | undefined = await boot({
      config: loadConfig(env),
      runtime: 'test',
      hostname: 'test-host',
      logger: createLogger('silent'),
      createExtractor: sharedExtractorFactory(),
    });
    const h = helpers(() => booted!);
    await h.enrol('franck', [franck[0]!]);
    await h.enrol('connery', [connery]);
    await h.makeOutdated('franck');
    const current = (await booted.services.extractors.get()).templateVersion;
    await booted.close();
    booted = undefined;

    const help = await promisify(execFile)(process.execPath, [...REEXTRACT_SCRIPT, '--help'], {
      cwd: join(import.meta.dirname, '../..'),
    });
    expect(help.stdout).toMatch(/STOP THE SERVER FIRST/);

    // The command takes its extraction where the configuration says, as the server does: an extraction service
    // that does not answer fails the run, and the subject stays outdated for the next one.
    const unreachable = { BIMS_EXTRACTION_URL: 'http://127.0.0.1:9', BIMS_EXTRACTION_TOKEN: 'u'.repeat(32) };
    const failed = await cli(['--limit', '10'], unreachable).then(
      () => undefined,
      (error: { code?: number; stdout?: string; stderr?: string }) => error,
    );
    expect(failed?.code).toBe(1);
    expect(failed?.stdout).toBe('');
    expect(failed?.stderr).toMatch(
      /re-extraction failed: .*the extraction service at http:\/\/127\.0\.0\.1:9 cannot be reached/,
    );

    const dry = await cli(['--dry-run']);
    expect(dry.summary).toMatchObject({ dryRun: true, templateVersion: current, outdated: 1, total: 1, done: 0 });
    const run = await cli(['--limit', '10']);
    expect(run.summary).toMatchObject({ dryRun: false, outdated: 1, total: 1, done: 1, reextracted: 1, failed: 0 });
    expect(run.stderr).toMatch(/\[#+\] 1\/1 100%/);
    const after = await cli(['--dry-run']);
    expect(after.summary).toMatchObject({ outdated: 0, total: 0 });
  }, 240_000);
});
