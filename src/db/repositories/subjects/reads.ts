import type { SubjectFilter } from '../../../schemas/subject-queries.js';
import type { Queryable } from '../queryable.js';
import { filteredSubjects, filteredSubjectsOfShape, type subjectSortColumns } from './filters.js';
import type { SlotOf } from './shapes.js';
import type { SubjectCondition } from './lookup.js';
import type { SubjectRow, SubjectsSelect } from './with-samples.js';

/** The subject list reads besides the one statement of with-samples.ts: a page's select, the count, the id list, rows by id. */

type SortColumn = (typeof subjectSortColumns)[keyof typeof subjectSortColumns];
type Direction = 'asc' | 'desc';

/**
 * One page of subjects of a filter's shape (values and paging as slots, subjects/shapes.ts), ordered by
 * `column` with ties broken by id so pages never overlap; for with-samples.ts to select from.
 */
export function subjectsPageOfShape(
  db: Queryable,
  filter: Partial<SubjectFilter>,
  slot: SlotOf,
  column: SortColumn,
  direction: Direction,
): SubjectsSelect {
  return filteredSubjectsOfShape(db, filter, slot)
    .orderBy(column, direction)
    .orderBy('s.id', 'asc')
    .limit(slot<number>('limit'))
    .offset(slot<number>('offset'));
}

/** How many subjects a filter matches. */
export async function countFilteredSubjects(db: Queryable, filter: Partial<SubjectFilter>): Promise<number> {
  const row = await filteredSubjects(db, filter)
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** A page of {id, subject_id} of the subjects a filter matches (and `condition` accepts), ties broken by id. */
export function listFilteredSubjectIds(
  db: Queryable,
  filter: Partial<SubjectFilter>,
  page: { column: SortColumn; direction: Direction; limit: number; offset: number },
  condition?: SubjectCondition,
) {
  const filtered = filteredSubjects(db, filter);
  return (condition ? filtered.where(condition('s.enrollment_operation_uuid')) : filtered)
    .select(['s.id', 's.subject_id'])
    .orderBy(page.column, page.direction)
    .orderBy('s.id', 'asc')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
}

/** The subject rows with these ids (in no particular order; missing ids are left out). */
export function findSubjectsByIds(db: Queryable, ids: readonly number[]): Promise<SubjectRow[]> {
  return db
    .selectFrom('subjects')
    .selectAll()
    .where('id', 'in', [...ids])
    .execute();
}
