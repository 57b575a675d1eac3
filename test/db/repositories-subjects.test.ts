// The subject reads' repository over both dialects: the one statement decodes a subject's state (timestamps as
// Dates, jsonb as objects, NaN and infinite reals as numbers, samples in row order), leaves the state out exactly
// for the revisions it is told are known, and the filters compiled once per shape bind their values per call.
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/tables.js';
import { filteredSubjectsOfShape, filterShape, filterValues } from '../../src/db/repositories/subjects/filters.js';
import { bound, compiledOnce } from '../../src/db/repositories/subjects/shapes.js';
import {
  compileSubjectStates,
  knownRevisions,
  readSubjectStates,
} from '../../src/db/repositories/subjects/with-samples.js';
import { json } from '../../src/db/json.js';
import { likePrefix } from '../../src/db/repositories/like.js';
import { subjectOwnedBy } from '../../src/db/repositories/ownership.js';
import {
  findSubjectRow,
  lockSubjectKeysMatching,
  operationUuidsWithSubject,
} from '../../src/db/repositories/subjects/lookup.js';
import { countFilteredSubjects, listFilteredSubjectIds } from '../../src/db/repositories/subjects/reads.js';
import { deleteSubjectsChunk } from '../../src/db/repositories/subjects/remove.js';
import { listSampleSummariesOfSubjects } from '../../src/db/repositories/subjects/samples.js';
import { dialects } from '../support/databases.js';
import { openMigratedDatabase } from '../support/migrated-database.js';
import { seedSubject, type SeededSubject } from '../support/subject-rows.js';

for (const dialect of dialects) {
  describe(`subjects repository on ${dialect}`, () => {
    let db: Kysely<Database>;
    let close: () => Promise<void>;
    const ids: number[] = [];
    beforeAll(async () => {
      ({ db, close } = await openMigratedDatabase(dialect));
      ids.push(
        (
          await seedSubject(db, {
            subjectId: 'rs_a',
            faces: [80, 60],
            voices: [12],
            metadata: { a: [1, { b: null }] },
            createdAt: new Date('2026-01-02T03:04:05.678Z'),
          })
        ).id,
      );
      ids.push((await seedSubject(db, { subjectId: 'rs_b', faces: [70] })).id);
      ids.push((await seedSubject(db, { subjectId: 'rsXc', faces: [] })).id);
      await sql`update face_samples set quality = 'NaN', yaw = '-Infinity' where subject_ref = ${ids[0]!} and quality = 60`.execute(
        db,
      );
    }, 120_000);
    afterAll(async () => close?.());

    /** The page of subjects whose subjectId starts with `prefix`, by id, compiled once for this shape. */
    const page = (prefix: string, known: number[]) => {
      const filter = { subjectId: prefix };
      const statement = compiledOnce(`test page [${filterShape(filter)}]`, (slot) =>
        compileSubjectStates(db, filteredSubjectsOfShape(db, filter, slot).orderBy('s.id'), slot<string>('known')),
      );
      return readSubjectStates(db, bound(statement, { ...filterValues(filter), known: knownRevisions(known) }));
    };

    it("builds the states of a page's own rows only, never of the rows its offset skips", async () => {
      const filter = { subjectId: 'rs' };
      const statement = compiledOnce(`test deep page [${filterShape(filter)}]`, (slot) =>
        compileSubjectStates(
          db,
          filteredSubjectsOfShape(db, filter, slot).orderBy('s.id').limit(1).offset(2),
          slot<string>('known'),
        ),
      );
      // The database's own count of subject_state calls in one transaction (pg_stat_xact_user_functions).
      const calls = await db.transaction().execute(async (trx) => {
        await sql`set local track_functions = 'all'`.execute(trx);
        const rows = await readSubjectStates(
          trx,
          bound(statement, { ...filterValues(filter), known: knownRevisions([]) }),
        );
        expect(rows.map((r) => r.id)).toEqual([ids[2]]);
        expect(rows[0]!.state!.row.subject_id).toBe('rsXc');
        const { rows: stats } = await sql<{ calls: string }>`
          select calls from pg_stat_xact_user_functions where funcname = 'subject_state'`.execute(trx);
        return Number(stats[0]?.calls ?? 0);
      });
      expect(calls).toBe(1);
    });

    it('decodes a subject state once: Dates, objects, reals, samples in row order', async () => {
      const [first, second] = await page('rs_', []);
      expect([first!.id, second!.id]).toEqual([ids[0], ids[1]]);
      const state = first!.state!;
      expect(state.row.created_at).toEqual(new Date('2026-01-02T03:04:05.678Z'));
      expect(state.row.metadata).toEqual({ a: [1, { b: null }] });
      expect(state.row.revision).toBe(first!.revision);
      expect(state.faces.map((f) => f.quality)).toEqual([80, Number.NaN]);
      expect(state.faces[1]!.yaw).toBe(-Infinity);
      expect(state.faces[0]!.created_at).toBeInstanceOf(Date);
      expect(state.faces[0]!.rectangle).toEqual({ x: 0.4, y: 1, width: 2.6, height: 3 });
      expect(state.voices.map((v) => v.quality)).toEqual([12]);
      expect(state.templates.map((t) => t.modality)).toEqual(['FACE']);
      // The literal prefix: `rs_` does not match `rsXc`.
      expect((await page('rs_', [])).length).toBe(2);
    });

    it('leaves out the state of exactly the known revisions, and a change moves the revision', async () => {
      const before = await page('rs_', []);
      const known = await page('rs_', [before[0]!.revision]);
      expect(known.map((r) => r.state === null)).toEqual([true, false]);
      await db
        .updateTable('subjects')
        .set({ metadata: json({ changed: true }) })
        .where('id', '=', ids[0]!)
        .execute();
      const after = await page('rs_', [before[0]!.revision]);
      expect(after[0]!.revision).toBeGreaterThan(before[0]!.revision);
      expect(after[0]!.state?.row.metadata).toEqual({ changed: true });
      // A sample change alone moves it too.
      await db.deleteFrom('face_samples').where('subject_ref', '=', ids[1]!).execute();
      const again = await page(
        'rs_',
        after.map((r) => r.revision),
      );
      expect(again.map((r) => r.state === null)).toEqual([true, false]);
      expect(again[1]!.state?.faces).toEqual([]);
    });
  });
}

// The lookups, locks and deletes of subjects (moved out of services/subjects/, issue 21), with the ownership
// condition of db/repositories/ownership.ts: account 5 enrolled `rl_own`, account 6 enrolled nothing.
for (const dialect of dialects) {
  describe(`subject lookups and deletes on ${dialect}`, () => {
    let db: Kysely<Database>;
    let close: () => Promise<void>;
    let owned: SeededSubject;
    let other: SeededSubject;
    beforeAll(async () => {
      ({ db, close } = await openMigratedDatabase(dialect));
      owned = await seedSubject(db, { subjectId: 'rl_own', faces: [80, 70], voices: [40], accountId: 5 });
      other = await seedSubject(db, { subjectId: 'rl_other', faces: [60] });
    }, 120_000);
    afterAll(async () => close?.());

    const ownedBy = (accountId: number) => (column: string) => subjectOwnedBy(column, accountId);

    it('finds a subject by each name, under the ownership condition', async () => {
      expect((await findSubjectRow(db, { id: owned.id }))?.subject_id).toBe('rl_own');
      expect((await findSubjectRow(db, { subjectId: 'rl_other' }))?.id).toBe(other.id);
      expect((await findSubjectRow(db, { operationUuid: owned.enrollUuid }))?.id).toBe(owned.id);
      expect((await findSubjectRow(db, { subjectId: 'rl_own' }, ownedBy(5)))?.id).toBe(owned.id);
      expect(await findSubjectRow(db, { subjectId: 'rl_own' }, ownedBy(6))).toBeUndefined();
      expect(await findSubjectRow(db, { operationUuid: other.enrollUuid }, ownedBy(5))).toBeUndefined();
      const unknown = crypto.randomUUID();
      expect(await operationUuidsWithSubject(db, [owned.enrollUuid, unknown])).toEqual(new Set([owned.enrollUuid]));
    });

    it('counts and lists identifiers of a filter, and locks what a clear would take', async () => {
      expect(await countFilteredSubjects(db, { subjectId: 'rl_' })).toBe(2);
      const page = { column: 's.subject_id' as const, direction: 'desc' as const, limit: 10, offset: 0 };
      expect((await listFilteredSubjectIds(db, { subjectId: 'rl_' }, page)).map((r) => r.subject_id)).toEqual([
        'rl_own',
        'rl_other',
      ]);
      expect((await listFilteredSubjectIds(db, { subjectId: 'rl_' }, page, ownedBy(5))).map((r) => r.id)).toEqual([
        owned.id,
      ]);
      const locked = await db
        .transaction()
        .execute((trx) => lockSubjectKeysMatching(trx, likePrefix('rl_'), ownedBy(5)));
      expect(locked).toEqual([{ id: owned.id, subject_id: 'rl_own', enrollment_operation_uuid: owned.enrollUuid }]);
    });

    it('deletes a subject with its operation, samples, images and templates, and counts each table', async () => {
      const summaries = await listSampleSummariesOfSubjects(db, [owned.id]);
      expect([summaries.faces.length, summaries.voices.length, summaries.templates.length]).toEqual([2, 1, 1]);
      const counts = await db
        .transaction()
        .execute((trx) =>
          deleteSubjectsChunk(trx, [
            { id: owned.id, subject_id: 'rl_own', enrollment_operation_uuid: owned.enrollUuid },
          ]),
        );
      expect(counts).toEqual({
        subjects: 1,
        operations: 1,
        images: 2,
        faceSamples: 2,
        voiceSamples: 1,
        templates: 1,
        adjudicationCases: 0,
      });
      expect(await findSubjectRow(db, { id: owned.id })).toBeUndefined();
      expect(await db.selectFrom('operations').select('uuid').where('uuid', '=', owned.enrollUuid).execute()).toEqual(
        [],
      );
      // The other subject keeps its rows.
      expect((await listSampleSummariesOfSubjects(db, [other.id])).faces).toHaveLength(1);
    });
  });
}
