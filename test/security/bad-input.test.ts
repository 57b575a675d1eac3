import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operationTable } from '../../src/operations/index.js';
import type { OperationSpec } from '../../src/operations/types.js';
import { defaultProperties } from '../../src/services/settings/defaults.js';
import { basic, bootForTest } from '../support/databases.js';
import { NO_SIDECAR_ENV } from '../support/external-ops.js';
import { closeSharedExtractor, sharedExtractorFactory } from '../support/extractor.js';
import {
  changedTables,
  installWriteCounters,
  rowVersions,
  tablesOf,
  writeCounts,
  type Snapshot,
} from '../support/fuzz/db-snapshot.js';
import { hostileAudio, hostileImages } from '../support/fuzz/images.js';
import { requestsFor, type FuzzRequest, type PartHints } from '../support/fuzz/mutations.js';
import { judgeAnswer, textOf } from '../support/fuzz/oracle.js';
import { METACHARS } from '../support/fuzz/schema-arb.js';
import { seedCase, seedOperation, seedSubject } from '../support/subject-rows.js';
import { fuzzSeed, trialBudget } from '../support/test-settings.js';

/**
 * Generated bad input: for every operation of the table, requests derived from its zod schemas and then
 * broken (mutations.ts), sent as an ADMIN so they reach validation and the handlers. Every answer must be
 * free of 5xx, a problem+json when it is an error, and free of internals (oracle.ts); requests the schema
 * must refuse are refused; and a refused request leaves every table exactly as it was (db-snapshot.ts: a write
 * counter per table, read after each request, and checked against the rows' versions around each operation).
 * PGlite only: the point is the HTTP and service layers, which are the same on both dialects.
 *
 * Reproduce a failure with the seed it prints: BIMS_FUZZ_SEED=<seed> npx vitest run test/security/bad-input.test.ts
 * (with BIMS_TEST_FULL=1 too if the failing run had it).
 */

const SEED = fuzzSeed(20261127);
/**
 * Requests per operation: 30 in `npm test` (about 3,500 over the table: every kind of mutation more than ten
 * times, and the same requests every run), 95 with BIMS_TEST_FULL=1 (over 10,000, from a fresh seed).
 */
const RUNS_PER_OPERATION = trialBudget(30, 95);
const MIN_REQUESTS = trialBudget(3_000, 10_000);

/** Operations that remove or reset what others read: run last, so the reads meet data. */
const destructive = (spec: OperationSpec) =>
  spec.method === 'delete' || ['resetSettings', 'changeAccount'].includes(spec.id);
const ordered = [...operationTable].sort((a, b) => Number(destructive(a)) - Number(destructive(b)));

const SUBJECT_IDS = ['fz-alpha', 'fz-bravo', 'fz-charlie', 'fz-pending', 'fz-voice'];
const FUZZER = { username: 'fuzzer', password: 'fuzzer-password-1', role: 'ADMIN' };

let booted: Awaited<ReturnType<typeof bootForTest>>;
let auth: string;
let tables: string[];
let baseline: Snapshot;
let sent = 0;
let mustRejects = 0;
const tally = new Map<string, number>();
const statuses = new Map<number, number>();
const imageOutcomes = new Map<string, number>();
/** Which operations answered which 5xx (only the listed external ones may, and only with their problems). */
const componentAnswers = new Map<string, number>();

async function seedData(): Promise<{ uuids: string[]; ids: number[] }> {
  const db = booted.services.ctx.db;
  const uuids: string[] = [];
  const ids: number[] = [];
  for (const subjectId of SUBJECT_IDS) {
    if (await db.selectFrom('subjects').select('id').where('subject_id', '=', subjectId).executeTakeFirst()) continue;
    const s = await seedSubject(db, {
      subjectId,
      status: subjectId === 'fz-pending' ? 'PENDING_ADJUDICATION' : 'ENROLLED',
      faces: [70, 80],
      voices: subjectId === 'fz-voice' ? [60] : [],
      metadata: { office: "north' OR 1=1--" },
    });
    uuids.push(s.enrollUuid, await seedOperation(db, subjectId));
    ids.push(s.id);
    if (subjectId === 'fz-pending')
      ids.push(await seedCase(db, subjectId, s.enrollUuid), await seedCase(db, subjectId, uuids.at(-1)!, 'SOLVED'));
  }
  return { uuids, ids };
}

/** Values that name things that exist, so that plausible requests reach rows and not only 404s. */
function hintsFor(
  spec: OperationSpec,
  known: { uuids: string[]; ids: number[]; accountIds: number[] },
  images: Record<string, string>,
  audio: Record<string, string>,
): PartHints {
  // Account operations may only ever name the victim accounts: renaming, disabling or deleting the fuzzer
  // (or re-roling it) would turn every later request into a 401 or 403, which is not what is under test.
  const idPool =
    spec.area === 'Accounts' ? [...known.accountIds, 0, -1, 2147483648] : [...known.ids, 1, 2, 3, 0, 2147483647];
  const id = fc.constantFrom(...idPool);
  const subjectId = fc.constantFrom(...SUBJECT_IDS, ...METACHARS, 'fz-nobody');
  const uuid = fc.oneof(fc.constantFrom(...known.uuids), fc.uuid());
  const keys = defaultProperties().map((p: { key: string }) => p.key);
  const settingKey = fc.constantFrom(...keys, 'no.such.key', ...METACHARS);
  // The plausible image is cheap to refuse or small to analyse; the hostile ones come from the mutation.
  const image = fc.constantFrom(
    images['tiny png without a face']!,
    images['png truncated']!,
    images['four zero bytes']!,
  );
  const asText = (a: fc.Arbitrary<unknown>) => a.map(String);
  const list = fc.oneof(
    fc.array(id, { minLength: 1, maxLength: 3 }).map((v) => v.join(',')),
    fc.array(uuid, { minLength: 1, maxLength: 3 }).map((v) => v.join(',')),
    fc.array(subjectId, { minLength: 1, maxLength: 3 }).map((v) => v.join(',')),
  );
  return {
    params: { id: asText(id), subjectId, subjectid: subjectId, uuid },
    query: {
      id: asText(id),
      caseId: asText(id),
      operationId: asText(id),
      ids: list,
      subjectId,
      uuid,
      key: settingKey,
      prefix: fc.constantFrom('fz-', 'fz-nobody', ...METACHARS),
    },
    body: {
      id,
      ids: fc.array(id, { minLength: 1, maxLength: 3 }),
      subjectId,
      subjectIds: fc.array(subjectId, { minLength: 1, maxLength: 3 }),
      uuids: fc.array(uuid, { minLength: 1, maxLength: 3 }),
      caseId: id,
      key: settingKey,
      image,
      audio: fc.constant(audio['short wav']!),
      password: fc.constant('fuzzed-password-1'),
    },
  };
}

async function send(req: FuzzRequest): Promise<Response> {
  sent++;
  tally.set(req.kind, (tally.get(req.kind) ?? 0) + 1);
  return booted.app.fetch(
    new Request(`http://127.0.0.1:8080${req.url}`, {
      method: req.method,
      headers: { ...req.headers, authorization: auth },
      body: req.body as BodyInit | undefined,
    }),
  );
}

/** Run one request and check everything the suite promises about it; throws with the reasons. */
async function check(spec: OperationSpec, req: FuzzRequest): Promise<void> {
  const res = await send(req);
  statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
  if (req.kind === 'body: hostile image')
    imageOutcomes.set(
      `${req.label.match(/'([^']+)'/)?.[1]} -> ${res.status}`,
      (imageOutcomes.get(`${req.label.match(/'([^']+)'/)?.[1]} -> ${res.status}`) ?? 0) + 1,
    );
  if (req.mustReject) mustRejects++;
  if (res.status >= 500)
    componentAnswers.set(`${spec.id} ${res.status}`, (componentAnswers.get(`${spec.id} ${res.status}`) ?? 0) + 1);
  const text = await textOf(res);
  const wrong = judgeAnswer(spec.id, res, text);
  if (req.mustReject && (res.status < 400 || res.status >= 500))
    wrong.push(`the schema refuses this request, yet it answered ${res.status}`);
  if (res.status === 401 || res.status === 403)
    wrong.push(`answered ${res.status} to an ADMIN: ${text?.slice(0, 200)}`);
  const after = await writeCounts(booted.services.ctx.db);
  // A refused biometric probe is still a recorded operation (docs/biometrics.md): its 422 names the operation.
  const changesAllowed =
    (res.status >= 200 && res.status < 300) || (res.status === 422 && /"operationUuid"/.test(text ?? ''));
  if (!changesAllowed) {
    const changed = changedTables(baseline, after);
    if (changed.length)
      wrong.push(`a refused request (${res.status}) changed ${changed.join(', ')}: ${text?.slice(0, 200)}`);
  }
  baseline = after;
  if (wrong.length)
    throw new Error(`${req.method} ${req.url.slice(0, 300)} [${req.label}] -> ${res.status}\n  ${wrong.join('\n  ')}`);
}

describe('generated bad input', () => {
  const images: Record<string, string> = {};
  const audio: Record<string, string> = {};
  let known: { uuids: string[]; ids: number[]; accountIds: number[] };

  beforeAll(async () => {
    booted = await bootForTest('pglite', NO_SIDECAR_ENV, { createExtractor: sharedExtractorFactory() });
    const admin = basic('admin', 'admin-password-for-tests');
    const accountIds: number[] = [];
    for (const account of [
      FUZZER,
      ...['victim-1', 'victim-2', 'victim-3'].map((u) => ({ username: u, password: `${u}-password`, role: 'USER' })),
    ]) {
      const res = await booted.app.request('/admin/accounts/create', {
        method: 'POST',
        headers: { authorization: admin, 'content-type': 'application/json' },
        body: JSON.stringify(account),
      });
      expect(res.status).toBe(201);
      if (account !== FUZZER) accountIds.push((await res.json()).id);
    }
    auth = basic(FUZZER.username, FUZZER.password);
    known = { ...(await seedData()), accountIds };
    for (const [name, bytes] of Object.entries(hostileImages())) images[name] = Buffer.from(bytes).toString('base64');
    for (const [name, bytes] of Object.entries(hostileAudio())) audio[name] = Buffer.from(bytes).toString('base64');
    // Warm the extractor now, so the first image-bearing request is not the one that waits for it.
    await (await booted.services.extractors.get())
      .analyseFace(Buffer.from(images['tiny png without a face']!, 'base64'), { checks: false })
      .catch(() => {});
    tables = await tablesOf(booted.services.ctx.db);
    expect(await installWriteCounters(booted.services.ctx.db, tables)).toBe(tables.length);
    baseline = await writeCounts(booted.services.ctx.db);
  });
  afterAll(async () => {
    await booted?.close();
    await closeSharedExtractor();
  });

  ordered.forEach((spec, index) => {
    it(`${spec.id}`, async () => {
      if (destructive(spec)) {
        // Whatever an earlier destructive operation removed comes back, so this one has rows to act on.
        await seedData();
        baseline = await writeCounts(booted.services.ctx.db);
      }
      const [countsBefore, versionsBefore] = [baseline, await rowVersions(booted.services.ctx.db, tables)];
      const requests = requestsFor(spec, hintsFor(spec, known, images, audio), images, audio).map((r) =>
        Object.assign(r, {
          [fc.toStringMethod]: () =>
            `${r.method} ${r.url.slice(0, 200)} [${r.label}] body: ${String(r.body ?? '').slice(0, 200)}`,
        }),
      );
      try {
        await fc.assert(
          fc.asyncProperty(requests, (req) => check(spec, req)),
          { seed: SEED + index, numRuns: RUNS_PER_OPERATION },
        );
      } catch (error) {
        (error as Error).message = `Reproduce with BIMS_FUZZ_SEED=${SEED}\n${(error as Error).message}`;
        throw error;
      }
      // The counters, which judged each request, saw every table whose rows changed during this operation's run.
      const rewritten = changedTables(versionsBefore, await rowVersions(booted.services.ctx.db, tables));
      const counted = changedTables(countsBefore, await writeCounts(booted.services.ctx.db));
      expect(
        rewritten.filter((t) => !counted.includes(t)),
        'tables written without their write counter moving',
      ).toEqual([]);
    });
  });

  it(`sent at least ${MIN_REQUESTS} requests, with every kind of mutation`, () => {
    console.info(
      JSON.stringify(
        {
          seed: SEED,
          requests: sent,
          mustReject: mustRejects,
          statuses: Object.fromEntries(statuses),
          mutations: Object.fromEntries(tally),
          images: Object.fromEntries(imageOutcomes),
          componentAnswers: Object.fromEntries(componentAnswers),
        },
        null,
        1,
      ),
    );
    expect(sent).toBeGreaterThanOrEqual(MIN_REQUESTS);
    expect(mustRejects).toBeGreaterThan(sent / 5);
    for (const kind of [
      'body: wrong type',
      'body: hostile image',
      'body: invalid UTF-8',
      'query: wrong type',
      'path: raw segment',
      'body: deep nesting',
      'body: bad base64',
    ]) {
      expect(tally.get(kind) ?? 0, kind).toBeGreaterThan(10);
    }
  });

  it('uses fingerprints that see a committed write and not a rolled-back one', async () => {
    const db = booted.services.ctx.db;
    for (const fingerprint of [() => writeCounts(db), () => rowVersions(db, tables)]) {
      const before = await fingerprint();
      await db
        .transaction()
        .execute(async (trx) => {
          await trx.updateTable('accounts').set({ enabled: true }).where('username', '=', 'victim-1').execute();
          throw new Error('roll back');
        })
        .catch(() => {});
      expect(changedTables(before, await fingerprint())).toEqual([]);
      // The same values written again still count: a refused request must not write at all.
      await db.updateTable('accounts').set({ username: 'fuzzer' }).where('username', '=', 'fuzzer').execute();
      expect(changedTables(before, await fingerprint())).toEqual(['accounts']);
    }
    // The counters see an insert, a delete and a TRUNCATE too (the last even of an empty table).
    const at = new Date();
    const writes = [
      () =>
        db
          .insertInto('login_throttle')
          .values({
            address: '192.0.2.1',
            subject: 'fz',
            failures: 1,
            first_failure_at: at,
            last_failure_at: at,
            expires_at: at,
          })
          .execute(),
      () => db.deleteFrom('login_throttle').where('address', '=', '192.0.2.1').execute(),
      () => sql`truncate table login_throttle`.execute(db),
    ];
    for (const write of writes) {
      const before = await writeCounts(db);
      await write();
      expect(changedTables(before, await writeCounts(db))).toEqual(['login_throttle']);
    }
  });
});
