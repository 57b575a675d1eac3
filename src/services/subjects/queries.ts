import type { ServiceContext } from '../context.js';
import { DomainError, notFound } from '../errors.js';
import type { SubjectFilter } from '../../schemas/subjects.js';
import { sortColumn } from '../query-helpers.js';
import { filteredSubjects, subjectSortColumns } from './filters.js';
import { findSubject, subjectRefsOfOperation, type SubjectRef } from './lookup.js';
import { ownsSubject, type Owner } from '../ownership.js';
import { loadSamples, modalitiesOf, presentMultimodalSubject, presentPage, presentSubject, templateVersionOf, type SubjectRow, type SubjectSamples } from './present.js';
import { subjectsWithSamples, subjectsWithSamplesOfShape } from './one-query.js';
import type { PendingAccountCheck } from '../auth/account-check.js';

/**
 * The read side of subjects (seed 4.11): lists with filters, paging and sort, their counts, the identifier
 * list, single subjects by each of their names, enrolled modalities and the JSON download.
 */

type Paging<F extends string> = { page: number; size: number; sort?: { field: F; direction: 'asc' | 'desc' } };
type SortField = keyof typeof subjectSortColumns;

/** One page of subjects with their samples, in one query; ties broken by id so pages never overlap. */
async function pageOf(ctx: ServiceContext, query: Partial<SubjectFilter> & Paging<SortField>, check?: PendingAccountCheck) {
  const [column, direction] = sortColumn(subjectSortColumns, query.sort, 'id');
  const page = filteredSubjects(ctx.db, query)
    .orderBy(column, direction)
    .orderBy('s.id', 'asc')
    .limit(query.size)
    .offset(query.page * query.size);
  return subjectsWithSamples(ctx.db, page, check);
}

const presentAll = <T>({ rows, samples }: { rows: SubjectRow[]; samples: SubjectSamples }, present: (row: SubjectRow, samples: SubjectSamples) => T) =>
  rows.map((row) => present(row, samples));

/** `getSubjects`: a page of subjects with their samples. */
export async function listSubjects(ctx: ServiceContext, query: Partial<SubjectFilter> & Paging<SortField>, check?: PendingAccountCheck) {
  return presentAll(await pageOf(ctx, query, check), presentSubject);
}

/** `getMultimodalSubjects`: the same page grouped by modality. */
export async function listMultimodalSubjects(ctx: ServiceContext, query: Partial<SubjectFilter> & Paging<SortField>, check?: PendingAccountCheck) {
  return presentAll(await pageOf(ctx, query, check), presentMultimodalSubject);
}

/**
 * The subject a client names with its samples, in one query; a 404 naming what was asked for when nothing
 * matches (the same rules and words as {@link findSubject}). The reads take the caller's pending account check
 * into that query (`check`, services/auth/account-check.ts).
 */
async function oneSubject(ctx: ServiceContext, ref: SubjectRef, owner: Owner, check?: PendingAccountCheck) {
  // Its SQL depends on which name and whether an owner limits it, so it is compiled once per such shape.
  const by = 'id' in ref ? 'id' : 'subjectId' in ref ? 'subjectId' : 'operationUuid';
  const shape = `subject by ${by}${owner ? ' owned' : ''}`;
  const values = { ref: 'id' in ref ? ref.id : 'subjectId' in ref ? ref.subjectId : ref.operationUuid, owner: owner?.accountId ?? null };
  const found = await subjectsWithSamplesOfShape(ctx.db, shape, (slot) => {
    let query = ctx.db.selectFrom('subjects as s');
    if (owner) query = query.where(ownsSubject('s.enrollment_operation_uuid', { accountId: slot<number | null>('owner') }));
    if (by === 'id') query = query.where('s.id', '=', slot<number>('ref'));
    else if (by === 'subjectId') query = query.where('s.subject_id', '=', slot<string>('ref'));
    else query = query.where('s.id', 'in', subjectRefsOfOperation(ctx.db, [slot<string>('ref')]).clearSelect().select('s.id')).orderBy('s.id');
    return query.limit(1);
  }, values, check);
  if (!found.rows.length) {
    throw notFound('id' in ref ? `Subject ${ref.id}` : 'subjectId' in ref ? `Subject '${ref.subjectId}'` : `A subject of operation ${ref.operationUuid}`);
  }
  return found;
}

/** `getSubjectsCount`: how many subjects the same filters match. */
export async function countSubjects(ctx: ServiceContext, filter: Partial<SubjectFilter>) {
  const row = await filteredSubjects(ctx.db, filter).select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow();
  return { count: Number(row.count) };
}

/**
 * `getSubjectsIdList`: a page of {id, subjectId}, without loading any sample. With an `owner` (the user
 * surface), only the subjects that account enrolled: the gallery is matched against, not listed.
 */
export async function listSubjectIds(ctx: ServiceContext, query: Partial<SubjectFilter> & Paging<'id' | 'subjectId' | 'createdAt'>, owner: Owner = null) {
  const [column, direction] = sortColumn(subjectSortColumns, query.sort, 'id');
  const filtered = filteredSubjects(ctx.db, query);
  const rows = await (owner ? filtered.where(ownsSubject('s.enrollment_operation_uuid', owner)) : filtered)
    .select(['s.id', 's.subject_id'])
    .orderBy(column, direction)
    .orderBy('s.id', 'asc')
    .limit(query.size)
    .offset(query.page * query.size)
    .execute();
  return rows.map((r) => ({ id: r.id, subjectId: r.subject_id }));
}

/** One subject with its samples; 404 when nothing matches (or, with an `owner`, when that account did not enrol it). */
export async function getSubject(ctx: ServiceContext, ref: SubjectRef, owner: Owner = null, check?: PendingAccountCheck) {
  return presentAll(await oneSubject(ctx, ref, owner, check), presentSubject)[0]!;
}

/** One subject grouped by modality; 404 when nothing matches. */
export async function getMultimodalSubject(ctx: ServiceContext, ref: SubjectRef, owner: Owner = null, check?: PendingAccountCheck) {
  return presentAll(await oneSubject(ctx, ref, owner, check), presentMultimodalSubject)[0]!;
}

/** `getSubjectsEnrolledModalities`: the modalities a subject holds, its status and template version. */
export async function enrolledModalities(ctx: ServiceContext, subjectId: string, owner: Owner = null) {
  const row = await findSubject(ctx.db, { subjectId }, owner);
  const samples = await loadSamples(ctx.db, [row.id]);
  const templateVersion = templateVersionOf(row, samples);
  return { subjectId: row.subject_id, status: row.status, modalities: modalitiesOf(row, samples), ...(templateVersion ? { templateVersion } : {}) };
}

/**
 * `downloadSubjectsInfoBulk`: the named subjects as `Subject` JSON, in the order asked, for a download.
 * All or nothing: unknown ids are a 404 naming every one of them.
 */
export async function subjectsForDownload(ctx: ServiceContext, ids: readonly number[]) {
  const unique = [...new Set(ids)];
  const rows = await ctx.db.selectFrom('subjects').selectAll().where('id', 'in', unique).execute();
  const byId = new Map(rows.map((r) => [r.id, r]));
  const missing = unique.filter((id) => !byId.has(id));
  if (missing.length) throw new DomainError('not-found', `Subjects ${missing.join(', ')} were not found`, { missing });
  return presentPage(ctx.db, unique.map((id) => byId.get(id)!), presentSubject);
}
