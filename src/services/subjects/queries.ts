import type { ServiceContext } from '../context.js';
import { DomainError } from '../errors.js';
import type { SubjectFilter } from '../../schemas/subjects.js';
import { sortColumn } from '../query-helpers.js';
import { filteredSubjects, subjectSortColumns } from './filters.js';
import { findSubject, type SubjectRef } from './lookup.js';
import { ownsSubject, type Owner } from '../ownership.js';
import { loadSamples, modalitiesOf, presentMultimodalSubject, presentPage, presentSubject, templateVersionOf } from './present.js';

/**
 * The read side of subjects (seed 4.11): lists with filters, paging and sort, their counts, the identifier
 * list, single subjects by each of their names, enrolled modalities and the JSON download.
 */

type Paging<F extends string> = { page: number; size: number; sort?: { field: F; direction: 'asc' | 'desc' } };
type SortField = keyof typeof subjectSortColumns;

/** One page of subject rows; ties broken by id so pages never overlap. */
function pageOf(ctx: ServiceContext, query: Partial<SubjectFilter> & Paging<SortField>) {
  const [column, direction] = sortColumn(subjectSortColumns, query.sort, 'id');
  return filteredSubjects(ctx.db, query)
    .selectAll('s')
    .orderBy(column, direction)
    .orderBy('s.id', 'asc')
    .limit(query.size)
    .offset(query.page * query.size)
    .execute();
}

/** `getSubjects`: a page of subjects with their samples. */
export async function listSubjects(ctx: ServiceContext, query: Partial<SubjectFilter> & Paging<SortField>) {
  return presentPage(ctx.db, await pageOf(ctx, query), presentSubject);
}

/** `getMultimodalSubjects`: the same page grouped by modality. */
export async function listMultimodalSubjects(ctx: ServiceContext, query: Partial<SubjectFilter> & Paging<SortField>) {
  return presentPage(ctx.db, await pageOf(ctx, query), presentMultimodalSubject);
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
export async function getSubject(ctx: ServiceContext, ref: SubjectRef, owner: Owner = null) {
  const [subject] = await presentPage(ctx.db, [await findSubject(ctx.db, ref, owner)], presentSubject);
  return subject!;
}

/** One subject grouped by modality; 404 when nothing matches. */
export async function getMultimodalSubject(ctx: ServiceContext, ref: SubjectRef, owner: Owner = null) {
  const [subject] = await presentPage(ctx.db, [await findSubject(ctx.db, ref, owner)], presentMultimodalSubject);
  return subject!;
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
