// Over 300 lines on purpose: the subject read path in one module you can follow (issue 34): every read of
// subjects (one, a page, its text, counts, ids, downloads) through the read model, start to end.
import type { ServiceContext } from '../context.js';
import { DomainError, notFound } from '../errors.js';
import type { SubjectFilter } from '../../schemas/subject-queries.js';
import { sortColumn } from '../query-helpers.js';
import { filterShape, filterValues, subjectSortColumns } from '../../db/repositories/subjects/filters.js';
import {
  countFilteredSubjects,
  findSubjectsByIds,
  listFilteredSubjectIds,
  subjectsPageOfShape,
} from '../../db/repositories/subjects/reads.js';
import { subjectOfOperationSelect, subjectsNamedSelect } from '../../db/repositories/subjects/lookup.js';
import { accountColumn, type TokenAccountRow } from '../../db/repositories/auth/token-account.js';
import {
  compileSubjectStates,
  knownRevisions,
  namesArray,
  readSubjectStates,
  type SubjectsSelect,
} from '../../db/repositories/subjects/with-samples.js';
import { bound, compiledOnce, type SlotOf } from '../../db/repositories/subjects/shapes.js';
import { findSubject, type SubjectRef } from './lookup.js';
import { ownsSubject, type Owner } from '../ownership.js';
import { loadSamples, modalitiesOf, presentPage, presentSubject, templateVersionOf } from './present.js';
import { pageJson, readModelOf, SubjectEntry, type Held, type Presentation } from './read-model.js';
import type { JsonText } from '../../encoding/json-text.js';
import { pureRead, writeGenerationOf } from '../../db/write-generation.js';
import { joinedReadsOf } from '../../db/joined-reads.js';
import { readConnectionsOf } from '../../db/read-connections.js';
import type { PendingAccountCheck } from '../auth/account-check.js';

/**
 * The read side of subjects (seed 4.11): lists with filters, paging and sort, their counts, the identifier
 * list, single subjects by each of their names, enrolled modalities and the JSON download.
 *
 * A subject and a page of subjects are one statement each (db/repositories/subjects/with-samples.ts), compiled
 * once per shape, that carries the caller's pending account check and leaves out the state of every subject
 * this node already holds at the revision the database has (read-model.ts); the answers of those come from
 * memory, as JSON text made once.
 */

type Paging<F extends string> = { page: number; size: number; sort?: { field: F; direction: 'asc' | 'desc' } };
type SortField = keyof typeof subjectSortColumns;

/** A read of subjects: the shape of its SQL, how to build it, the values it binds, and what names it for the read model. */
interface SubjectsRead {
  shape: string;
  build: (slot: SlotOf) => SubjectsSelect;
  values: Record<string, unknown>;
  /** Names the read with its values (a page's filters, paging and sort; a subject's name and owner). */
  key: string;
  /** Subjects the read is known to be about (a subject by id). */
  ids?: number[];
  /**
   * A read of one subject by id or subjectId: reads of the same shape naming other subjects may share its
   * statement, which then asks for all their names (the slot `names`); the read keeps the row that is its own.
   */
  named?: { name: string | number; mine: (entry: SubjectEntry) => boolean };
}

/** What a statement shared by several reads answers them all: its subjects, and the account the statement brought. */
interface Shared {
  entries: readonly SubjectEntry[];
  account: unknown;
}

/**
 * Run a read as one statement and answer its subjects, in order. A caller's pending account `check` is made by
 * the same statement when it returns rows (401/403 thrown before the rows are used). Inside a transaction the
 * read model is neither asked nor told (what a transaction sees may never commit). On PGlite the whole answer
 * comes from memory, with no statement, while the write generation has not moved since the same read last ran
 * (db/write-generation.ts). Reads of the same kind arriving while its statement runs share the next one
 * (db/joined-reads.ts).
 */
async function readSubjects(
  ctx: ServiceContext,
  read: SubjectsRead,
  check?: PendingAccountCheck,
): Promise<readonly SubjectEntry[]> {
  const carried = check?.pending ? check : undefined;
  const model = ctx.db.isTransaction ? undefined : readModelOf(ctx.db);
  // PGlite: nothing written since this same read last ran means the same answer, without a statement. A
  // pending account check needs a statement (PGlite's checks come from memory, so in practice it is none).
  const writes = model ? writeGenerationOf(ctx.db) : undefined;
  const quiet = writes?.quiet;
  // The SQL text is the shape's, so the shape and the values bound name the rows exactly.
  const answerKey =
    quiet === undefined ? '' : `${read.shape}\n${JSON.stringify(read.values)}\n${JSON.stringify(read.named?.name)}`;
  if (quiet !== undefined && !carried) {
    const remembered = model!.recall(answerKey, quiet);
    if (remembered) return remembered;
  }
  const held = model ? model.held(read.key, read.ids) : new Map<number, SubjectEntry>();
  const statementShape = carried ? `${read.shape} checked` : read.shape;
  const statement = compiledOnce(statementShape, (slot) =>
    pureRead(
      compileSubjectStates(
        ctx.db,
        read.build(slot),
        slot<string>('known'),
        carried && accountColumn(slot('caller.accountId'), slot('caller.sid'), slot('caller.jti')),
      ),
    ),
  );
  const caller = carried
    ? { 'caller.accountId': carried.accountId, 'caller.sid': carried.sid, 'caller.jti': carried.jti }
    : {};
  const run = async (asked: readonly { name?: string | number; held: Held }[]): Promise<Shared> => {
    const known = heldByAll(asked);
    const names = read.named ? { names: namesArray([...new Set(asked.map((a) => a.name!))]) } : {};
    // Outside a transaction, on the read connections (PostgreSQL: planned once, db/read-connections.ts).
    const rows = await readSubjectStates(
      ctx.db.isTransaction ? ctx.db : readConnectionsOf(ctx.db),
      bound(statement, { ...read.values, ...names, known: knownRevisions(known.keys()), ...caller }),
    );
    const account = rows[0]?.extra;
    return {
      entries: model ? model.entriesOf(rows, known) : rows.map((r) => new SubjectEntry(r.state!)),
      // Parsed once for every read that shares the statement (they are one caller's: the kind names it).
      account: typeof account === 'string' ? JSON.parse(account) : account,
    };
  };
  const mine = { name: read.named?.name, held };
  // The same kind of read (SQL, values but the names, the caller's check) arriving meanwhile shares the
  // statement, never one already sent; entries are never changed once made, so sharing them is safe.
  const shared = model
    ? // The shape names the SQL (compiledOnce), and is a few words where the SQL is a kilobyte to hash per read.
      await joinedReadsOf(ctx.db).run(`${statementShape}\n${JSON.stringify([read.values, caller])}`, mine, run)
    : await run([mine]);
  // Judged before anything of the answer is used; without rows it is made on its own (PendingAccountCheck.run).
  if (carried && shared.entries.length) carried.settle(shared.account as TokenAccountRow | string | null);
  const entries = read.named ? shared.entries.filter(read.named.mine) : shared.entries;
  if (!model) return entries;
  model.answered(read.key, entries);
  // Kept only when no write was under way or sent while the statement ran (the generation is the same quiet one).
  if (quiet !== undefined && writes!.quiet === quiet) model.remember(answerKey, quiet, entries);
  return entries;
}

/** One page of subjects with their samples, in one statement; ties broken by id so pages never overlap. */
function pageRead(ctx: ServiceContext, query: Partial<SubjectFilter> & Paging<SortField>): SubjectsRead {
  const [column, direction] = sortColumn(subjectSortColumns, query.sort, 'id');
  const filters = filterValues(query);
  return {
    shape: `subjects page [${filterShape(query)}] by ${column} ${direction}`,
    build: (slot) => subjectsPageOfShape(ctx.db, query, slot, column, direction),
    values: { ...filters, limit: query.size, offset: query.page * query.size },
    key: JSON.stringify(['page', query.modality ?? null, filters, column, direction, query.size, query.page]),
  };
}

/**
 * The held states of every read sharing a statement, by revision: what the statement may leave out. Reads of one
 * page hold the same subjects, so the first read's map serves when the others add nothing to it.
 */
function heldByAll(asked: readonly { held: Held }[]): Held {
  let known = asked[0]!.held;
  for (let i = 1; i < asked.length; i++) {
    for (const [revision, entry] of asked[i]!.held) {
      if (known.get(revision) === entry) continue;
      if (known === asked[0]!.held) known = new Map(known);
      (known as Map<number, SubjectEntry>).set(revision, entry);
    }
  }
  return known;
}

/** `getSubjects`: a page of subjects with their samples. */
export async function listSubjects(
  ctx: ServiceContext,
  query: Partial<SubjectFilter> & Paging<SortField>,
  check?: PendingAccountCheck,
) {
  return (await readSubjects(ctx, pageRead(ctx, query), check)).map((e) => e.present('subject'));
}

/** `getMultimodalSubjects`: the same page grouped by modality. */
export async function listMultimodalSubjects(
  ctx: ServiceContext,
  query: Partial<SubjectFilter> & Paging<SortField>,
  check?: PendingAccountCheck,
) {
  return (await readSubjects(ctx, pageRead(ctx, query), check)).map((e) => e.present('multimodal'));
}

/**
 * {@link listSubjects} or {@link listMultimodalSubjects} as the answer's JSON text, the subjects' texts made once,
 * and the page's too while its subjects stay the same (SubjectReadModel.pageText).
 */
export async function subjectsPageText(
  ctx: ServiceContext,
  query: Partial<SubjectFilter> & Paging<SortField>,
  as: Presentation,
  check?: PendingAccountCheck,
): Promise<JsonText> {
  const read = pageRead(ctx, query);
  const entries = await readSubjects(ctx, read, check);
  // Inside a transaction nothing is kept (readSubjects).
  return ctx.db.isTransaction ? pageJson(entries, as) : readModelOf(ctx.db).pageText(read.key, as, entries);
}

/**
 * The subject a client names with its samples, in one statement; a 404 naming what was asked for when nothing
 * matches (the same rules and words as {@link findSubject}). The reads take the caller's pending account check
 * into that statement (`check`, services/auth/account-check.ts).
 */
async function oneSubject(
  ctx: ServiceContext,
  ref: SubjectRef,
  owner: Owner,
  check?: PendingAccountCheck,
): Promise<SubjectEntry> {
  // Its SQL depends on which name and whether an owner limits it, so it is compiled once per such shape.
  const by = 'id' in ref ? 'id' : 'subjectId' in ref ? 'subjectId' : 'operationUuid';
  const name = 'id' in ref ? ref.id : 'subjectId' in ref ? ref.subjectId : ref.operationUuid;
  const ownedBy = owner
    ? (slot: SlotOf) => (column: Parameters<typeof ownsSubject>[0]) =>
        ownsSubject(column, { accountId: slot<number | null>('owner') })
    : undefined;
  const read: SubjectsRead =
    by === 'operationUuid'
      ? {
          shape: `subject by ${by}${owner ? ' owned' : ''}`,
          build: (slot) => subjectOfOperationSelect(ctx.db, slot('ref'), ownedBy?.(slot)),
          values: { ref: name, owner: owner?.accountId ?? null },
          key: JSON.stringify([by, name, owner?.accountId ?? null]),
        }
      : {
          // By id or subjectId: reads of other subjects arriving together share one statement.
          shape: `subjects by ${by}${owner ? ' owned' : ''}`,
          build: (slot) => subjectsNamedSelect(ctx.db, by, slot('names'), ownedBy?.(slot)),
          values: { owner: owner?.accountId ?? null },
          key: JSON.stringify([by, name, owner?.accountId ?? null]),
          named: {
            name,
            mine: by === 'id' ? (entry) => entry.id === name : (entry) => entry.state.row.subject_id === name,
          },
          ...('id' in ref ? { ids: [ref.id] } : {}),
        };
  const found = await readSubjects(ctx, read, check);
  if (!found.length) {
    throw notFound(
      'id' in ref
        ? `Subject ${ref.id}`
        : 'subjectId' in ref
          ? `Subject '${ref.subjectId}'`
          : `A subject of operation ${ref.operationUuid}`,
    );
  }
  return found[0]!;
}

/** `getSubjectsCount`: how many subjects the same filters match. */
export async function countSubjects(ctx: ServiceContext, filter: Partial<SubjectFilter>) {
  return { count: await countFilteredSubjects(ctx.db, filter) };
}

/**
 * `getSubjectsIdList`: a page of {id, subjectId}, without loading any sample. With an `owner` (the user
 * surface), only the subjects that account enrolled: the gallery is matched against, not listed.
 */
export async function listSubjectIds(
  ctx: ServiceContext,
  query: Partial<SubjectFilter> & Paging<'id' | 'subjectId' | 'createdAt'>,
  owner: Owner = null,
) {
  const [column, direction] = sortColumn(subjectSortColumns, query.sort, 'id');
  const rows = await listFilteredSubjectIds(
    ctx.db,
    query,
    { column, direction, limit: query.size, offset: query.page * query.size },
    owner ? (enrolmentColumn) => ownsSubject(enrolmentColumn, owner) : undefined,
  );
  return rows.map((r) => ({ id: r.id, subjectId: r.subject_id }));
}

/** One subject with its samples; 404 when nothing matches (or, with an `owner`, when that account did not enrol it). */
export async function getSubject(
  ctx: ServiceContext,
  ref: SubjectRef,
  owner: Owner = null,
  check?: PendingAccountCheck,
) {
  return (await oneSubject(ctx, ref, owner, check)).present('subject');
}

/** One subject grouped by modality; 404 when nothing matches. */
export async function getMultimodalSubject(
  ctx: ServiceContext,
  ref: SubjectRef,
  owner: Owner = null,
  check?: PendingAccountCheck,
) {
  return (await oneSubject(ctx, ref, owner, check)).present('multimodal');
}

/** {@link getSubject} or {@link getMultimodalSubject} as the answer's JSON text, made once per state of the subject. */
export async function subjectText(
  ctx: ServiceContext,
  ref: SubjectRef,
  as: Presentation,
  owner: Owner = null,
  check?: PendingAccountCheck,
): Promise<JsonText> {
  return (await oneSubject(ctx, ref, owner, check)).json(as);
}

/** `getSubjectsEnrolledModalities`: the modalities a subject holds, its status and template version. */
export async function enrolledModalities(ctx: ServiceContext, subjectId: string, owner: Owner = null) {
  const row = await findSubject(ctx.db, { subjectId }, owner);
  const samples = await loadSamples(ctx.db, [row.id]);
  const templateVersion = templateVersionOf(row, samples);
  return {
    subjectId: row.subject_id,
    status: row.status,
    modalities: modalitiesOf(row, samples),
    ...(templateVersion ? { templateVersion } : {}),
  };
}

/**
 * `downloadSubjectsInfoBulk`: the named subjects as `Subject` JSON, in the order asked, for a download.
 * All or nothing: unknown ids are a 404 naming every one of them.
 */
export async function subjectsForDownload(ctx: ServiceContext, ids: readonly number[]) {
  const unique = [...new Set(ids)];
  const rows = await findSubjectsByIds(ctx.db, unique);
  const byId = new Map(rows.map((r) => [r.id, r]));
  const missing = unique.filter((id) => !byId.has(id));
  if (missing.length) throw new DomainError('not-found', `Subjects ${missing.join(', ')} were not found`, { missing });
  return presentPage(
    ctx.db,
    unique.map((id) => byId.get(id)!),
    presentSubject,
  );
}
